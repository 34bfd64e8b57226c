package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSectionsOfEachSizeAndServerKeepTheirPlace(t *testing.T) {
	doc := docHeader +
		"<!-- bench-scale N=1000 begin -->\nthousand\n<!-- bench-scale N=1000 end -->\n\n" +
		"<!-- bench-scale N=1000 s3=rgw begin -->\nthousand on rgw\n<!-- bench-scale N=1000 s3=rgw end -->\n\n" +
		"<!-- bench-scale N=1000 cores=split begin -->\nthousand split\n<!-- bench-scale N=1000 cores=split end -->\n\n" +
		"<!-- bench-scale N=100 begin -->\nhundred\n<!-- bench-scale N=100 end -->\n"
	sections := readSections(doc)
	if sections["N=1000"] != "thousand\n" || sections["N=1000 s3=rgw"] != "thousand on rgw\n" || sections["N=100"] != "hundred\n" ||
		sections["N=1000 cores=split"] != "thousand split\n" {
		t.Fatalf("sections %q", sections)
	}
	keys := []string{"N=10000", "N=1000 s3=rgw", "N=100", "N=1000 cores=split", "N=1000"}
	slices.SortFunc(keys, compareKeys)
	if want := []string{"N=100", "N=1000", "N=1000 cores=split", "N=1000 s3=rgw", "N=10000"}; !slices.Equal(keys, want) {
		t.Errorf("order %q, want %q", keys, want)
	}
}

// Of three rounds, the one with the median ratio of burst to bound is reported, with the highest
// peak RSS any round's manager reached and the steady state the last round measured.
func TestTheMedianRoundIsReportedWithTheHighestRSS(t *testing.T) {
	measured := func(burst, boundTime time.Duration, rss int64) round {
		return round{ours: &result{burst: burst, rss: rss}, bound: &bound{time: boundTime}}
	}
	r := &report{rounds: []round{
		measured(18*time.Second, 10*time.Second, 60<<20), // 1.8x
		measured(16*time.Second, 11*time.Second, 64<<20), // 1.45x
		measured(30*time.Second, 10*time.Second, 58<<20), // 3.0x
	}}
	r.rounds[2].ours.steady = &steady{passes: 2}
	r.pickMedian()
	if r.ours.burst != 18*time.Second || r.bound.time != 10*time.Second {
		t.Errorf("reported %s / %s, want the median round's 18s / 10s", r.ours.burst, r.bound.time)
	}
	if r.ours.rss != 64<<20 {
		t.Errorf("peak RSS %d MiB, want the highest of the rounds, 64", r.ours.rss>>20)
	}
	if r.ours.steady == nil || r.ours.steady.passes != 2 {
		t.Error("the steady state of the round that measured it was not reported")
	}
	if r.rounds[0].ours.rss != 60<<20 {
		t.Error("picking the median changed a round's own figures")
	}
}

// Writes too rare to show per Bucket are still listed, in all, so none goes unseen.
func TestRareCallsAreListedInAll(t *testing.T) {
	writes := counts{"PATCH buckets/status": 2000, "PATCH buckets": 1000, "PATCH contracts/status": 12, "PUT secrets": 3}
	want := "PATCH buckets/status 2.0, PATCH buckets 1.0; in all PATCH contracts/status 12, PUT secrets 3"
	if got := breakdown(writes, 1000); got != want {
		t.Errorf("breakdown = %q, want %q", got, want)
	}
	if got, want := breakdown(counts{"PATCH events.events.k8s.io": 3}, 1000), "in all PATCH events.events.k8s.io 3"; got != want {
		t.Errorf("breakdown = %q, want %q", got, want)
	}
	if got := breakdown(counts{}, 1000); got != "none" {
		t.Errorf("breakdown of nothing = %q, want none", got)
	}
	if got, want := totals(counts{"PATCH events.events.k8s.io": 3, "PUT secrets": 1}), "PATCH events.events.k8s.io 3, PUT secrets 1"; got != want {
		t.Errorf("totals = %q, want %q", got, want)
	}
}

// A resync's usage reads are one per Contract, not per Bucket, and count with the S3 reads
// against the limit of three calls a Bucket.
func TestTheSteadyStateCountsUsageReadsWithS3CallsAgainstTheLimit(t *testing.T) {
	st := &steady{
		passes:   2,
		s3:       counts{"GetBucketAcl": 2000, "GetBucketPolicy": 2000},
		provider: counts{"GET /v1/contracts/{id}/usage": 20, "GET /v1/contracts/{id}": 4},
	}
	got := st.line(time.Minute, 1000)
	for _, want := range []string{"S3 reads 2.0 and writes 0.0", "usage reads 0.01 and other provider calls 0.00 per Bucket per resync", "(2.0 S3-or-provider calls, within the limit of 3)"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q\nlacks %q", got, want)
		}
	}
	st.s3["PutBucketAcl"] = 1950
	if got := st.line(time.Minute, 1000); !strings.Contains(got, "(3.0 S3-or-provider calls, within") {
		t.Errorf("just under three calls a Bucket: %q", got)
	}
	st.provider["GET /v1/contracts/{id}/usage"] = 2000
	if got := st.line(time.Minute, 1000); !strings.Contains(got, "OVER the limit of 3") {
		t.Errorf("a usage read per Bucket on top of three S3 calls: %q", got)
	}
}

// A run rewrites its own section of the page and nothing else: prose people wrote above the
// sections (the resync budget's, the memory's) and other runs' sections stay.
func TestARunKeepsThePagesProseAndOtherSections(t *testing.T) {
	old := "# Performance at scale\n\nProse a person wrote.\n\n" +
		"<!-- bench-scale N=100 begin -->\nold 100\n<!-- bench-scale N=100 end -->\n\n" +
		"<!-- bench-scale N=1000 begin -->\nold 1000\n<!-- bench-scale N=1000 end -->\n"
	got := string(composeDoc(old, "N=1000", "new 1000\n"))
	want := "# Performance at scale\n\nProse a person wrote.\n\n" +
		"<!-- bench-scale N=100 begin -->\nold 100\n<!-- bench-scale N=100 end -->\n\n" +
		"<!-- bench-scale N=1000 begin -->\nnew 1000\n<!-- bench-scale N=1000 end -->\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if fresh := string(composeDoc("", "N=100", "first\n")); !strings.HasPrefix(fresh, docHeader) {
		t.Errorf("a new page does not start with docHeader:\n%s", fresh)
	}
}
