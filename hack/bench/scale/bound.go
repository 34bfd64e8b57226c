package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// bound is the physical bound of a burst on these servers, measured in the same run: what S3
// and the API server take for the work with nothing in between. The bound reported is the
// minimal work the mission needs (minimalMix, and the create and one status write per
// Bucket); replayed is the operator's own work replayed the same way, for what it adds.
type bound struct {
	replayed *bound
	// single is the minimal bound of one Bucket made alone (singleBound), when measured.
	single     time.Duration
	mix        []string // S3 calls per Bucket, in order
	s3Rate     float64  // S3 calls per second at s3Workers
	s3Workers  int
	writes     int // API writes per Bucket (the create included)
	replay     *apiReplay
	apiRate    float64 // writes per second at apiWorkers
	apiWorkers int
	apiCPU     counts // CPU seconds by process while the API half ran at apiWorkers (machineCPU)
	s3Time     time.Duration
	apiTime    time.Duration
	// alone is the larger of the two halves, each measured with the machine to itself.
	alone time.Duration
	// time is the bound a burst is measured against: both halves at once, sharing the cores as
	// a burst's servers do (see measureTogether). The replayed bound has only alone.
	time time.Duration
	// togetherS3Workers is the S3 half's concurrency then (the API half keeps apiWorkers)
	togetherS3Workers int
	s3Tried           map[int]float64
	apiTried          map[int]float64
}

// s3Ops are the calls a bucket's mix may hold, in the order a Bucket needs them.
var s3Ops = []struct {
	name string
	do   func(ctx context.Context, c *s3.Client, bucket string) error
}{
	{"HeadBucket", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b})
		return err
	}},
	// With the owner's tags, as the operator creates buckets where the server keeps them (see
	// s3OpsByName for the others).
	{"CreateBucket", createBucket(true)},
	{"ListBuckets", func(ctx context.Context, c *s3.Client, _ string) error {
		_, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
		return err
	}},
	{"PutBucketTagging", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &b, Tagging: &types.Tagging{TagSet: ownerTags(b)}})
		return err
	}},
	{"GetBucketTagging", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &b})
		return err
	}},
	{"GetBucketAcl", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: &b})
		return err
	}},
	{"GetBucketPolicy", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &b})
		return err
	}},
	{"DeleteBucket", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &b})
		return err
	}},
}

// s3OpsByName returns each of s3Ops by name. A server that keeps no tags given at creation (Ceph
// RGW refuses them) gets its buckets created without, as the operator creates them there after
// its first try (and tags them in a call of its own, which the operator's mix then holds).
func s3OpsByName(tagsAtCreation bool) map[string]func(context.Context, *s3.Client, string) error {
	do := map[string]func(context.Context, *s3.Client, string) error{}
	for _, op := range s3Ops {
		do[op.name] = op.do
	}
	if !tagsAtCreation {
		do["CreateBucket"] = createBucket(false)
	}
	return do
}

// keepsTagsAtCreation says from the operator's calls whether the server kept the tags given
// at creation: where it did not, the operator tagged each bucket separately.
func keepsTagsAtCreation(ours counts, n int) bool {
	return ours["PutBucketTagging"]/float64(n) < 0.5
}

// createBucket makes a bucket as the operator does, with its owner's tags or without.
func createBucket(withTags bool) func(ctx context.Context, c *s3.Client, bucket string) error {
	return func(ctx context.Context, c *s3.Client, b string) error {
		in := &s3.CreateBucketInput{Bucket: &b, ObjectOwnership: types.ObjectOwnershipObjectWriter}
		if withTags {
			in.CreateBucketConfiguration = &types.CreateBucketConfiguration{Tags: ownerTags(b)}
		}
		_, err := c.CreateBucket(ctx, in)
		return err
	}
}

// ownerTags are tags like those the operator gives a bucket it makes.
func ownerTags(bucket string) []types.Tag {
	return []types.Tag{
		{Key: aws.String("storage.osm.dev/bucket"), Value: aws.String("bound/" + bucket)},
		{Key: aws.String("storage.osm.dev/bucket-uid"), Value: aws.String("00000000-0000-0000-0000-000000000000")},
	}
}

// s3Mix turns the calls counted over n Buckets into the calls of one Bucket: each operation
// as many times as it was made per Bucket, rounded. Operations the bound cannot make are
// named in skipped.
func s3Mix(calls counts, n int) (mix []string, skipped []string) {
	known := map[string]bool{}
	for _, op := range s3Ops {
		known[op.name] = true
		for range int(math.Round(calls[op.name] / float64(n))) {
			mix = append(mix, op.name)
		}
	}
	for _, name := range calls.names() {
		if !known[name] && calls[name]/float64(n) >= 0.5 {
			skipped = append(skipped, name)
		}
	}
	return mix, skipped
}

// s3Half makes the S3 half of the bound: the mix for n fresh buckets with a plain
// aws-sdk-go-v2 client straight at the server.
type s3Half struct {
	c   *s3.Client
	mix []string
	n   int
	// tagsAtCreation: the server keeps tags given in CreateBucket (keepsTagsAtCreation).
	tagsAtCreation bool
}

// run makes the mix for buckets prefix0 .. prefix(n-1) with w workers and says how long it took.
// cleanup deletes the buckets; it is left to the caller so that it is never timed, nor runs
// while another half is timed.
func (h s3Half) run(ctx context.Context, w int, prefix string) (elapsed time.Duration, cleanup func(), err error) {
	do := s3OpsByName(h.tagsAtCreation)
	var failures atomic.Int64
	start := time.Now()
	err = parallel(ctx, h.n, w, func(i int) error {
		for _, op := range h.mix {
			// Errors are answers too (a HEAD of a bucket not made yet is a 404): the bound is
			// how fast the server answers.
			if do[op](ctx, h.c, fmt.Sprintf("%s%d", prefix, i)) != nil && op == "CreateBucket" {
				failures.Add(1)
			}
		}
		return nil
	})
	elapsed = time.Since(start)
	cleanup = func() {
		_ = parallel(ctx, h.n, w, func(i int) error {
			_, _ = h.c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(fmt.Sprintf("%s%d", prefix, i))})
			return nil
		})
	}
	if err == nil && failures.Load() > 0 {
		err = fmt.Errorf("the S3 bound failed to create %d buckets at concurrency %d", failures.Load(), w)
	}
	return elapsed, cleanup, err
}

// measureS3 runs the S3 half at several concurrencies and keeps the best rate. Its buckets'
// names start with "bound-<tag>-".
func measureS3(ctx context.Context, h s3Half, tag string) (rate float64, workers int, tried map[int]float64, err error) {
	tried = map[int]float64{}
	for _, w := range []int{4, 16, 64} {
		elapsed, cleanup, err := h.run(ctx, w, fmt.Sprintf("bound-%s-%d-", tag, w))
		cleanup()
		if err != nil {
			return 0, 0, nil, err
		}
		r := float64(h.n*len(h.mix)) / elapsed.Seconds()
		tried[w] = r
		if r > rate {
			rate, workers = r, w
		}
	}
	return rate, workers, tried, nil
}

// apiReplay is what the API half of the bound writes for each object: the writes our burst made
// per Bucket, kind by kind, with the bodies the operator sent. Their bodies come from a Bucket of
// the burst once it was Ready and from the event it got: what a write costs the API server
// depends on what it writes (a status to decode, validate, diff and store; an event instead of a
// patch), and a bound of writes no controller could make (a status with no conditions) is no
// bound of this one. The patches carry the field managers the operator's carried, so each
// object's managedFields have as many entries as a burst's Bucket, which every write decodes,
// updates and stores.
type apiReplay struct {
	spec       map[string]any
	finalizers []string
	status     map[string]any // a Ready Bucket's
	event      map[string]any // the event it got; nil if none was found
	// the field managers of the finalizer and of the status; empty is the client's default
	metadataManager, statusManager string
	// per object, in the operator's order: its finalizer (PATCH buckets), the intent record and
	// the status at the end of the pass (PATCH buckets/status), its event (POST events)
	metadata, statuses, events int
	// others are writes of kinds the replay does not know, made as small status patches so the
	// count stays the same; they are named in the report.
	others  int
	skipped []string
}

// Kinds of the writes counted at the API server (apiWrites) that the replay makes.
const (
	writeMetadata = "PATCH buckets"
	writeStatus   = "PATCH buckets/status"
	writeEvent    = "POST events.events.k8s.io"
)

// newAPIReplay plans the replay of writes (our burst's API writes, by kind) over n Buckets.
func newAPIReplay(sample, event *unstructured.Unstructured, writes counts, n int) *apiReplay {
	r := &apiReplay{}
	if sample != nil {
		r.spec, _, _ = unstructured.NestedMap(sample.Object, "spec")
		r.status, _, _ = unstructured.NestedMap(sample.Object, "status")
		r.finalizers = sample.GetFinalizers()
		r.metadataManager, r.statusManager = writers(sample)
	}
	if event != nil {
		r.event = event.Object
	}
	for _, name := range writes.names() {
		k := int(math.Round(writes[name] / float64(n)))
		switch {
		case k == 0:
		case name == writeMetadata && len(r.finalizers) > 0:
			r.metadata = k
		case name == writeStatus && r.status != nil:
			r.statuses = k
		case name == writeEvent && r.event != nil:
			r.events = k
		default:
			r.others += k
			r.skipped = append(r.skipped, name)
		}
	}
	return r
}

// writers names the field managers that wrote a Bucket's finalizers and its status.
func writers(b *unstructured.Unstructured) (finalizers, status string) {
	for _, e := range b.GetManagedFields() {
		switch {
		case e.Subresource == "status":
			status = e.Manager
		case e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `"f:finalizers"`):
			finalizers = e.Manager
		}
	}
	return finalizers, status
}

// total is the writes per object, the create included.
func (r *apiReplay) total() int { return 1 + r.metadata + r.statuses + r.events + r.others }

// describe says what is written per object: "create, finalizer, intent record, Ready status, event".
func (r *apiReplay) describe() string {
	parts := []string{"create"}
	add := func(k int, what string) {
		for range k {
			parts = append(parts, what)
		}
	}
	add(r.metadata, "finalizer")
	add(r.statuses-1, "intent record")
	add(min(r.statuses, 1), "Ready status")
	add(r.others, "small status patch")
	add(r.events, "event")
	return strings.Join(parts, ", ") + ", as the operator wrote them"
}

// write makes one object's writes: the create, then the rest in the operator's order.
func (r *apiReplay) write(ctx context.Context, s *servers, ns, name, bucketName string) error {
	buckets := s.dyn.Resource(bucketGVR).Namespace(ns)
	spec := map[string]any{"bucketName": bucketName, "contractName": "c-0", "bucketReclaimPolicy": string(storagev1alpha1.ReclaimPolicyDelete)}
	if r.spec != nil {
		spec = runtime.DeepCopyJSON(r.spec)
		spec["bucketName"] = bucketName
	}
	obj, err := buckets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": storagev1alpha1.GroupVersion.String(), "kind": "Bucket",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// As the operator patches: answered with the object's metadata only.
	patched := s.meta.Resource(bucketGVR).Namespace(ns)
	rv := obj.GetResourceVersion()
	patch := func(body map[string]any, manager string, subresources ...string) error {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		written, err := patched.Patch(ctx, name, k8stypes.MergePatchType, b, metav1.PatchOptions{FieldManager: manager}, subresources...)
		if err == nil {
			rv = written.GetResourceVersion()
		}
		return err
	}
	for range r.metadata {
		// As the operator adds its finalizer: with the resource version it read.
		if err := patch(map[string]any{"metadata": map[string]any{"finalizers": r.finalizers, "resourceVersion": rv}}, r.metadataManager); err != nil {
			return err
		}
	}
	for k := range r.statuses {
		body := map[string]any{"creatingBucket": bucketName} // the intent record
		if k == r.statuses-1 {
			body = runtime.DeepCopyJSON(r.status)
			body["bucketName"], body["creatingBucket"] = bucketName, nil
		}
		if err := patch(map[string]any{"status": body}, r.statusManager, "status"); err != nil {
			return err
		}
	}
	for k := range r.others {
		if err := patch(map[string]any{"status": map[string]any{"observedGeneration": k + 1}}, r.statusManager, "status"); err != nil {
			return err
		}
	}
	for k := range r.events {
		ev := runtime.DeepCopyJSON(r.event)
		ev["metadata"] = map[string]any{"name": fmt.Sprintf("%s.%d", name, k), "namespace": ns}
		ev["eventTime"] = metav1.NowMicro().Format(metav1.RFC3339Micro)
		ev["regarding"] = map[string]any{"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(), "namespace": ns,
			"name": name, "uid": string(obj.GetUID()), "resourceVersion": rv}
		if _, err := s.dyn.Resource(eventGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: ev}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating an event: %w", err)
		}
	}
	return nil
}

// runAPI makes n Buckets with r's writes each in a new namespace ns with w workers, straight at
// the API server, and says how long it took. cleanup deletes them (see s3Half.run).
func runAPI(ctx context.Context, s *servers, r *apiReplay, n, w int, ns string) (elapsed time.Duration, cleanup func() error, err error) {
	cleanup = func() error { return nil }
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{boundLabel: "true"}}},
		metav1.CreateOptions{}); err != nil {
		return 0, cleanup, err
	}
	buckets := s.dyn.Resource(bucketGVR).Namespace(ns)
	cleanup = func() error {
		// The finalizers would keep them: nothing here removes them.
		if err := parallel(ctx, n, w, func(i int) error {
			_, err := buckets.Patch(ctx, fmt.Sprintf("b-%d", i), k8stypes.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			return client.IgnoreNotFound(err)
		}); err != nil {
			return err
		}
		return buckets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
	start := time.Now()
	err = parallel(ctx, n, w, func(i int) error {
		return r.write(ctx, s, ns, fmt.Sprintf("b-%d", i), fmt.Sprintf("%s-%d", ns, i))
	})
	if err != nil {
		err = fmt.Errorf("the API bound: %w", err)
	}
	return time.Since(start), cleanup, err
}

// measureAPI runs the API half at several concurrencies and keeps the best rate, with the CPU
// each process used meanwhile. Its namespaces are "bound-<tag>-api-<concurrency>".
func measureAPI(ctx context.Context, s *servers, r *apiReplay, n int, tag string) (rate float64, workers int, tried map[int]float64, cpu counts, err error) {
	tried = map[int]float64{}
	for _, w := range []int{16, 64} {
		before := machineCPU()
		logf("bound         API half (%s) at concurrency %d", tag, w)
		elapsed, cleanup, err := runAPI(ctx, s, r, n, w, fmt.Sprintf("bound-%s-api-%d", tag, w))
		used := machineCPU().minus(before)
		logf("bound         API half (%s) at concurrency %d took %s", tag, w, elapsed.Round(10*time.Millisecond))
		if err := errors.Join(err, cleanup()); err != nil {
			return 0, 0, nil, nil, err
		}
		got := float64(n*r.total()) / elapsed.Seconds()
		tried[w] = got
		if got > rate {
			rate, workers, cpu = got, w, used
		}
	}
	return rate, workers, tried, cpu, nil
}

// measureTogether runs both halves at once and says when the later one finished, at the best of
// a few S3 concurrencies (fewer S3 workers leave the API half more of the machine; the API half
// keeps its best). This is the bound: the work the mission needs is both halves, and during a
// burst both servers share the machine's cores. Each half alone, with the machine to itself,
// takes less, but no operator can have that: the halves at once took 1.2x to 1.6x the larger
// half alone with no controller at all (docs/performance.md), so a bound of the halves alone
// is one the minimal work itself does not meet.
func measureTogether(ctx context.Context, s *servers, h s3Half, b *bound, n int, tag string) (best time.Duration, s3Workers int, err error) {
	tries := []int{4}
	if b.s3Workers != 4 {
		tries = append(tries, b.s3Workers)
	}
	for _, w := range tries {
		var s3Time, apiTime time.Duration
		var s3Err, apiErr error
		var s3Cleanup func()
		var apiCleanup func() error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			s3Time, s3Cleanup, s3Err = h.run(ctx, w, fmt.Sprintf("bound-%s-both-%d-", tag, w))
		}()
		go func() {
			defer wg.Done()
			apiTime, apiCleanup, apiErr = runAPI(ctx, s, b.replay, n, b.apiWorkers, fmt.Sprintf("bound-%s-both-%d", tag, w))
		}()
		wg.Wait()
		s3Cleanup()
		if err := errors.Join(s3Err, apiErr, apiCleanup()); err != nil {
			return 0, 0, err
		}
		if t := max(s3Time, apiTime); best == 0 || t < best {
			best, s3Workers = t, w
		}
	}
	return best, s3Workers, nil
}

// minimalMix is the S3 work the mission needs per Bucket: create it, and read back what status
// must show (its ACL and policy).
var minimalMix = []string{"CreateBucket", "GetBucketAcl", "GetBucketPolicy"}

// measureBound measures the minimal bound for a burst like ours (both halves at once, and each
// alone), and the bound of our own work replayed. tag tells its namespaces and buckets from
// other rounds'.
func measureBound(ctx context.Context, s *servers, ours *result, accessKey, secretKey, tag string) (*bound, error) {
	c := localenv.NewS3Client(s.stk.S3.Direct, s.stk.S3.Region, accessKey, secretKey)
	// The create and the Ready status, with the body and field manager of a Ready Bucket's.
	minimal := newAPIReplay(ours.sample, nil, counts{writeStatus: float64(ours.n)}, ours.n)
	tags := keepsTagsAtCreation(ours.s3, ours.n)
	b, err := measureHalves(ctx, s, s3Half{c: c, mix: minimalMix, n: ours.n, tagsAtCreation: tags}, minimal, tag)
	if err != nil {
		return nil, err
	}
	mix, skipped := s3Mix(ours.s3, ours.n)
	if len(skipped) > 0 {
		logf("bound         S3 calls the bound does not make: %s", strings.Join(skipped, ", "))
	}
	replay := newAPIReplay(ours.sample, ours.sampleEvent, ours.api, ours.n)
	if len(replay.skipped) > 0 {
		logf("bound         API writes the bound replays as small status patches: %s", strings.Join(replay.skipped, ", "))
	}
	if b.replayed, err = measureHalves(ctx, s, s3Half{c: c, mix: mix, n: ours.n, tagsAtCreation: tags}, replay, tag+"-ours"); err != nil {
		return nil, err
	}
	if ours.single != 0 {
		if b.single, err = singleBound(ctx, s, ours.sample, c, tags, tag); err != nil {
			return nil, fmt.Errorf("the single Bucket's bound: %w", err)
		}
	}
	h := s3Half{c: c, mix: b.mix, n: ours.n, tagsAtCreation: tags}
	if b.time, b.togetherS3Workers, err = measureTogether(ctx, s, h, b, ours.n, tag); err != nil {
		return nil, fmt.Errorf("both halves at once: %w", err)
	}
	return b, nil
}

// measureHalves measures the S3 half h and the API half that writes replay per Bucket, each at
// a few concurrencies, alone.
func measureHalves(ctx context.Context, s *servers, h s3Half, replay *apiReplay, tag string) (*bound, error) {
	b := &bound{mix: h.mix, replay: replay, writes: replay.total()}
	var err error
	if b.s3Rate, b.s3Workers, b.s3Tried, err = measureS3(ctx, h, tag); err != nil {
		return nil, err
	}
	if b.apiRate, b.apiWorkers, b.apiTried, b.apiCPU, err = measureAPI(ctx, s, replay, h.n, tag); err != nil {
		return nil, err
	}
	b.s3Time = time.Duration(float64(h.n*len(b.mix)) / b.s3Rate * float64(time.Second))
	b.apiTime = time.Duration(float64(h.n*b.writes) / b.apiRate * float64(time.Second))
	b.alone = max(b.s3Time, b.apiTime)
	return b, nil
}

// rates prints tried concurrencies and their rates: "4: 812/s, 16: 1033/s".
func rates(tried map[int]float64) string {
	var ws []int
	for w := range tried {
		ws = append(ws, w)
	}
	sort.Ints(ws)
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%d: %.0f/s", w, tried[w]))
	}
	return strings.Join(parts, ", ")
}
