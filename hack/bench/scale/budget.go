package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// budgetWindow is how long the steady state's calls a second are counted over.
const budgetWindow = time.Minute

// drifted is how many Buckets another client changes behind the operator's back.
const drifted = 20

// budgetRun is drift detection under the resync budget: what the steady state costs the
// provider a second, against the budget, and how soon drift another client makes is corrected.
type budgetRun struct {
	budget, perContract float64
	maxPeriod           time.Duration
	// callsPerSecond: S3 and contract API calls a second over budgetWindow; oldest, the
	// manager's osm_resync_oldest_check_age_seconds at its end.
	callsPerSecond float64
	oldest         time.Duration
	// latencies are from each drift to its correction's event, sorted; bound is the docs' bound.
	latencies []time.Duration
	bound     time.Duration
}

// measureBudget counts the steady state's calls over budgetWindow, then changes the ACL of
// drifted Buckets, spread over the burst, with their Contract's keys (another client) and waits for the
// manager's ACLDriftCorrected events.
func measureBudget(ctx context.Context, s *servers, p *process, o options, ns string, names []string) (*budgetRun, error) {
	run := &budgetRun{budget: o.budget, perContract: o.budgetPerContract, maxPeriod: o.resyncMax}
	s3Before := s.s3.snapshot()
	providerBefore, err := providerCalls(ctx, p.metricsURL)
	if err != nil {
		return nil, err
	}
	time.Sleep(budgetWindow)
	providerAfter, err := providerCalls(ctx, p.metricsURL)
	if err != nil {
		return nil, err
	}
	calls := s.s3.snapshot().minus(s3Before).total() + providerAfter.minus(providerBefore).total()
	run.callsPerSecond = calls / budgetWindow.Seconds()
	if age, err := scrape(ctx, p.metricsURL, "osm_resync_oldest_check_age_seconds"); err == nil && len(age) > 0 {
		run.oldest = time.Duration(age[0].value * float64(time.Second))
	}
	run.bound = o.driftBound()
	changed, err := driftACLs(ctx, s, ns, spread(names, drifted), o.contracts)
	if err != nil {
		return nil, err
	}
	run.latencies, err = waitCorrected(ctx, s, ns, changed, run.bound+time.Minute)
	return run, err
}

// driftBound is the latency docs/performance.md states for drift detection: the longest wanted
// period with its jitter, and the stretch of the budget in all and of one Contract's share, at
// 2 calls a check, of which calm Buckets book 0.8 of each second.
func (o options) driftBound() time.Duration {
	stretch := func(n int, rate float64) time.Duration {
		if rate <= 0 {
			return 0
		}
		return time.Duration(float64(n) * 2 / (rate * 0.8) * float64(time.Second))
	}
	return o.resyncMax*11/10 + stretch(o.n, o.budget) + stretch(o.n/o.contracts, o.budgetPerContract)
}

// spread picks n of the burst's Buckets, evenly over them: Buckets made one after the other
// are checked one after the other, so neighbours would all be found at one moment of the
// period.
func spread(names []string, n int) map[int]string {
	picked := map[int]string{}
	for i := range min(n, len(names)) {
		j := i * len(names) / n
		picked[j] = names[j]
	}
	return picked
}

// driftACLs makes the picked Buckets' buckets (b-i, of Contract i%contracts) public-read with
// their Contract's keys, and returns when each was changed.
func driftACLs(ctx context.Context, s *servers, ns string, picked map[int]string, contracts int) (map[string]time.Time, error) {
	changed := map[string]time.Time{}
	for i, name := range picked {
		ak, sk, err := contractKeys(ctx, s.stk.Client, ns, contractName(i%contracts))
		if err != nil {
			return nil, err
		}
		c := localenv.NewS3Client(s.stk.S3.Direct, s.stk.S3.Region, ak, sk)
		if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(fmt.Sprintf("%s-b-%d", ns, i)),
			ACL: s3types.BucketCannedACLPublicRead}); err != nil {
			return nil, fmt.Errorf("changing the ACL of %s behind the operator's back: %w", name, err)
		}
		changed[name] = time.Now()
	}
	return changed, nil
}

// waitCorrected waits up to timeout for an ACLDriftCorrected event on each changed Bucket and
// returns the latencies seen, sorted.
func waitCorrected(ctx context.Context, s *servers, ns string, changed map[string]time.Time, timeout time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(timeout)
	seen := map[string]time.Duration{}
	for len(seen) < len(changed) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Second)
		events, err := s.cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=ACLDriftCorrected"})
		if err != nil {
			return nil, err
		}
		for _, e := range events.Items {
			at, ok := changed[e.Regarding.Name]
			if _, done := seen[e.Regarding.Name]; ok && !done {
				seen[e.Regarding.Name] = e.EventTime.Sub(at)
			}
		}
	}
	var out []time.Duration
	for _, d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out, nil
}

// line says what drift detection cost and how soon it corrected drift.
func (b *budgetRun) line(drifts int) string {
	latency := "none corrected"
	if n := len(b.latencies); n > 0 {
		latency = fmt.Sprintf("median %s, max %s", secs(b.latencies[n/2]), secs(b.latencies[n-1]))
	}
	return fmt.Sprintf("resync budget (%.0f calls/s in all, %.0f per Contract, longest period %s): steady state %.1f S3-and-provider calls/s over %s, oldest check %s old; %d of %d ACLs changed by another client corrected, %s (the docs' bound: %s)",
		b.budget, b.perContract, b.maxPeriod, b.callsPerSecond, budgetWindow, secs(b.oldest), len(b.latencies), drifts, latency, secs(b.bound))
}
