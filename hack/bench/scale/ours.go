package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// createWorkers is how many creates and deletes the benchmark sends at once, as a few parallel
// `kubectl apply` would.
const createWorkers = 16

var (
	bucketGVR = schema.GroupVersionResource{Group: storagev1alpha1.GroupVersion.Group, Version: storagev1alpha1.GroupVersion.Version, Resource: "buckets"}
	eventGVR  = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
)

// result is what one controller did with one burst of N Buckets.
type result struct {
	name    string
	n       int
	ready   int           // Buckets Ready by the deadline
	burst   time.Duration // first create to last Ready
	p50     time.Duration // per Bucket, its create to its Ready
	p99     time.Duration
	curve   []time.Duration // each Bucket's Ready, since the first create, sorted
	s3      counts          // S3 calls during the burst, by operation
	api     counts          // the controller's API writes during the burst
	cpu     time.Duration   // the controller's CPU during the burst
	machine counts          // CPU seconds during the burst by process (machineCPU)
	rss     int64           // the controller's peak RSS over the whole run
	anon    int64           // the peak of its anonymous part (heap, stacks)
	file    int64           // the peak of its file-backed part (the binary's code)
	steady  *steady
	delete  time.Duration // first delete to last gone
	gone    int
	compat  counts // S3 calls a compatibility proxy answered itself (ACK only)
	// sample is a Bucket of the burst once Ready, and sampleEvent the event it got (nil if
	// none): the bound replays their writes.
	sample, sampleEvent *unstructured.Unstructured
	workers             int // Buckets reconciled at once
	// single is the median time from one Bucket's create to its Ready, one at a time on the
	// otherwise idle system (measured with the steady state).
	single time.Duration
	note   string
}

// steady is what two resyncs of every Bucket cost.
type steady struct {
	passes float64 // reconciles per Bucket in the window
	s3     counts
	api    counts
	// provider is the manager's contract API requests by operation (usage reads among them).
	provider counts
	cpu      time.Duration
	peak     float64 // S3 calls in the busiest second
	budget   *budgetRun
}

// runOurs runs the operator's scenarios in namespace ns, with a manager of its own: Contracts,
// then the burst, steady state through two resyncs (if steady), and deletion.
func runOurs(ctx context.Context, s *servers, manager shippedManager, o options, ns string, steady bool) (*result, error) {
	flags := []string{fmt.Sprintf("--resync-period=%s", o.resync), fmt.Sprintf("--resync-max-period=%s", o.resyncMax),
		fmt.Sprintf("--resync-budget=%g", o.budget), fmt.Sprintf("--resync-budget-per-contract=%g", o.budgetPerContract)}
	if o.concurrency > 0 {
		flags = append(flags, fmt.Sprintf("--max-concurrent-reconciles=%d", o.concurrency))
	}
	flags = append(flags, o.managerFlags...)
	mgr, err := s.startManager(ctx, manager, flags)
	if err != nil {
		return nil, err
	}
	defer func() { _ = mgr.proc.Stop() }()
	logf("manager       started (pid %d) with %v", mgr.proc.PID(), flags)

	if err := s.stk.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	if err := createContracts(ctx, s.stk.Client, ns, o.contracts); err != nil {
		return nil, err
	}
	logf("contracts     %d Ready", o.contracts)

	t, err := newTracker(ctx, s.dyn, s.stk.EtcdURL, bucketGVR, ns, storagev1alpha1.ReadyCondition)
	if err != nil {
		return nil, err
	}
	defer t.close()
	var objs []*unstructured.Unstructured
	var names []string
	for i := range o.n {
		name := fmt.Sprintf("b-%d", i)
		names = append(names, name)
		objs = append(objs, bucketObject(ns, name, fmt.Sprintf("%s-b-%d", ns, i), contractName(i%o.contracts)))
	}
	res := &result{name: "object-storage-manager", n: o.n}
	if err := burst(ctx, s, s.s3.snapshot, t, mgr, objs, names, "POST buckets", o.burstDeadline(), res); err != nil {
		return nil, err
	}
	logf("burst         %d of %d Ready in %s", res.ready, o.n, res.burst.Round(10*time.Millisecond))
	if res.sample, res.sampleEvent, err = sampleWrites(ctx, s, ns, names[0]); err != nil {
		return nil, err
	}
	// Read once the controllers run (they set it when they start, after the cache syncs).
	workers, err := gauge(ctx, mgr.metricsURL, "controller_runtime_max_concurrent_reconciles", "bucket")
	if err != nil {
		return nil, err
	}
	res.workers = int(workers)

	if steady {
		if res.steady, err = resyncTwice(ctx, s, mgr, o); err != nil {
			return nil, err
		}
		logf("steady state  %.1f passes per Bucket", res.steady.passes)
		if res.steady.budget, err = measureBudget(ctx, s, mgr, o, ns, names); err != nil {
			return nil, err
		}
		logf("budget        %s", res.steady.budget.line(drifted))
		var one []string
		res.single, one, err = oneAtATime(ctx, t, ns)
		names = append(names, one...)
		if err != nil {
			return nil, err
		}
		logf("one at a time create to Ready %s (median of %d)", res.single.Round(time.Millisecond), singleRuns)
	}

	if err := deleteBurst(ctx, t, names, o.burstDeadline(), res); err != nil {
		return nil, err
	}
	logf("delete        %d of %d gone in %s", res.gone, len(names), res.delete.Round(10*time.Millisecond))
	res.rss, res.anon, res.file = mgr.memory()
	return res, nil
}

// sampleWrites reads what the operator wrote for one Bucket of the burst: the Bucket, and the
// event about it that the operator emitted (nil if there is none).
func sampleWrites(ctx context.Context, s *servers, ns, name string) (*unstructured.Unstructured, *unstructured.Unstructured, error) {
	b, err := s.dyn.Resource(bucketGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	events, err := s.dyn.Resource(eventGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	for i := range events.Items {
		ev := &events.Items[i]
		if uid, _, _ := unstructured.NestedString(ev.Object, "regarding", "uid"); uid == string(b.GetUID()) {
			return b, ev, nil
		}
	}
	return b, nil, nil
}

func contractName(i int) string { return fmt.Sprintf("c-%d", i) }

func createContracts(ctx context.Context, c client.Client, ns string, n int) error {
	for i := range n {
		obj := &storagev1alpha1.Contract{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: contractName(i)},
			Spec:       storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete},
		}
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list storagev1alpha1.ContractList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for _, obj := range list.Items {
			if meta.IsStatusConditionTrue(obj.Status.Conditions, storagev1alpha1.ReadyCondition) {
				ready++
			}
		}
		if ready == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d Contracts Ready after 2 minutes", ready, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// burst creates objs at once and waits until they are Ready, measuring the controller, S3 (as
// s3Calls counts it) and the API server meanwhile. ownCreates names the benchmark's own writes,
// left out of the count.
func burst(ctx context.Context, s *servers, s3Calls func() counts, t *tracker, p *process, objs []*unstructured.Unstructured, names []string,
	ownCreates string, deadline time.Duration, res *result) error {
	s3Before, apiBefore, cpuBefore, err := snapshot(ctx, s, s3Calls, p)
	if err != nil {
		return err
	}
	machineBefore := machineCPU()
	start := time.Now()
	if err := t.createAll(ctx, objs, createWorkers); err != nil {
		return err
	}
	res.ready = t.waitReady(ctx, names, deadline)
	res.machine = machineCPU().minus(machineBefore)
	s3After, apiAfter, cpuAfter, err := snapshot(ctx, s, s3Calls, p)
	if err != nil {
		return err
	}
	perBucket, sinceStart := t.latencies(names, start)
	if len(sinceStart) > 0 {
		res.burst = sinceStart[len(sinceStart)-1]
	}
	if res.ready < len(names) {
		res.burst = time.Since(start)
		res.note = fmt.Sprintf("only %d of %d Ready after %s", res.ready, len(names), deadline)
	}
	res.p50, res.p99 = percentile(perBucket, 0.5), percentile(perBucket, 0.99)
	res.curve = sinceStart
	res.s3 = s3After.minus(s3Before)
	res.api = apiAfter.minus(apiBefore)
	res.api[ownCreates] -= float64(len(objs))
	if res.api[ownCreates] == 0 {
		delete(res.api, ownCreates)
	}
	res.cpu = cpuAfter - cpuBefore
	return nil
}

// deleteBurst deletes every object and waits until they are gone.
func deleteBurst(ctx context.Context, t *tracker, names []string, deadline time.Duration, res *result) error {
	start := time.Now()
	if err := t.deleteAll(ctx, names, createWorkers); err != nil {
		return err
	}
	res.gone = t.waitGone(ctx, names, deadline)
	res.delete = time.Since(start)
	if res.gone < len(names) {
		res.note += fmt.Sprintf("; only %d of %d gone after %s", res.gone, len(names), deadline)
	}
	return nil
}

// resyncTwice waits until the manager has reconciled every Bucket twice more (its resync
// period comes round twice) and counts what that cost.
func resyncTwice(ctx context.Context, s *servers, p *process, o options) (*steady, error) {
	s3Before, apiBefore, cpuBefore, err := snapshot(ctx, s, s.s3.snapshot, p)
	if err != nil {
		return nil, err
	}
	r0, err := reconciles(ctx, p.metricsURL, "bucket")
	if err != nil {
		return nil, err
	}
	providerBefore, err := providerCalls(ctx, p.metricsURL)
	if err != nil {
		return nil, err
	}
	want := r0 + 2*float64(o.n)
	deadline := time.Now().Add(3*o.resync + 2*time.Minute)
	r, peak, last := r0, 0.0, s.s3.snapshot().total()
	for r < want && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Second)
		if r, err = reconciles(ctx, p.metricsURL, "bucket"); err != nil {
			return nil, err
		}
		// The busiest second shows whether resyncs come all at once or spread out.
		now := s.s3.snapshot().total()
		peak, last = max(peak, now-last), now
	}
	s3After, apiAfter, cpuAfter, err := snapshot(ctx, s, s.s3.snapshot, p)
	if err != nil {
		return nil, err
	}
	providerAfter, err := providerCalls(ctx, p.metricsURL)
	if err != nil {
		return nil, err
	}
	return &steady{
		passes:   (r - r0) / float64(o.n),
		s3:       s3After.minus(s3Before),
		api:      apiAfter.minus(apiBefore),
		provider: providerAfter.minus(providerBefore),
		cpu:      cpuAfter - cpuBefore,
		peak:     peak,
	}, nil
}

// snapshot reads the S3 calls counted so far, the API server's writes, and p's CPU.
func snapshot(ctx context.Context, s *servers, s3Calls func() counts, p *process) (counts, counts, time.Duration, error) {
	api, err := apiWrites(ctx, s.cs)
	if err != nil {
		return nil, nil, 0, err
	}
	return s3Calls(), api, p.stats().cpu, nil
}
