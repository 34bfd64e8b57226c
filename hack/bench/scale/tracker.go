package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// tracker follows the objects of one kind in one namespace and records when each was created
// (by the benchmark), first stored Ready, and gone.
//
// It watches them in etcd, under the API server, not through it: a watch through the API server
// costs the API server about as much as a second controller would (two watchers of the bound's
// writes made it use 16% more CPU, and took the benchmark 2 CPU-s to decode), on the same two
// cores as the burst it measures. An object is Ready when its Ready condition is stored, which
// is what a watcher such as `kubectl wait` then sees.
type tracker struct {
	dyn dynamic.Interface
	gvr schema.GroupVersionResource
	ns  string

	mu      sync.Mutex
	created map[string]time.Time
	ready   map[string]time.Time
	present map[string]bool
	stop    context.CancelFunc
	done    chan struct{}
}

// newTracker follows gvr's objects in ns, whose stored state etcdURL serves; an object is
// Ready when its status has a condition of type readyCondition with status True.
func newTracker(ctx context.Context, dyn dynamic.Interface, etcdURL string, gvr schema.GroupVersionResource, ns, readyCondition string) (*tracker, error) {
	t := &tracker{dyn: dyn, gvr: gvr, ns: ns,
		created: map[string]time.Time{}, ready: map[string]time.Time{}, present: map[string]bool{}, done: make(chan struct{})}
	prefix := etcdPrefix(gvr, ns)
	w, err := watchEtcd(ctx, etcdURL, prefix)
	if err != nil {
		return nil, fmt.Errorf("watching %s in etcd: %w", gvr.Resource, err)
	}
	t.stop = w.stop
	go func() {
		defer close(t.done)
		for ev := range w.events {
			now := time.Now()
			name := strings.TrimPrefix(ev.key, prefix)
			t.mu.Lock()
			if ev.deleted {
				delete(t.present, name)
			} else {
				t.present[name] = true
				if _, done := t.ready[name]; !done && storedConditionTrue(ev.value, readyCondition) {
					t.ready[name] = now
				}
			}
			t.mu.Unlock()
		}
	}()
	return t, nil
}

func (t *tracker) close() {
	t.stop()
	<-t.done
}

// etcdPrefix is where the API server keeps gvr's objects of namespace ns: its default
// --etcd-prefix, then group, resource and namespace, as it lays out custom resources.
func etcdPrefix(gvr schema.GroupVersionResource, ns string) string {
	return "/registry/" + gvr.Group + "/" + gvr.Resource + "/" + ns + "/"
}

// storedConditionTrue reports whether a stored object (custom resources are stored as JSON)
// has a status condition of that type with status True. Only the conditions are decoded.
func storedConditionTrue(value []byte, typ string) bool {
	var obj struct {
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(value, &obj) != nil {
		return false
	}
	for _, c := range obj.Status.Conditions {
		if c.Type == typ && c.Status == "True" {
			return true
		}
	}
	return false
}

// createAll creates objs with workers in parallel and records when each create returned.
func (t *tracker) createAll(ctx context.Context, objs []*unstructured.Unstructured, workers int) error {
	return parallel(ctx, len(objs), workers, func(i int) error {
		obj := objs[i]
		if _, err := t.dyn.Resource(t.gvr).Namespace(t.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s %s: %w", t.gvr.Resource, obj.GetName(), err)
		}
		t.mu.Lock()
		t.created[obj.GetName()] = time.Now()
		t.mu.Unlock()
		return nil
	})
}

// deleteAll deletes the named objects with workers in parallel.
func (t *tracker) deleteAll(ctx context.Context, names []string, workers int) error {
	return parallel(ctx, len(names), workers, func(i int) error {
		err := t.dyn.Resource(t.gvr).Namespace(t.ns).Delete(ctx, names[i], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", t.gvr.Resource, names[i], err)
		}
		return nil
	})
}

// waitReady waits until every named object has been seen Ready, or the deadline; it returns how
// many were.
func (t *tracker) waitReady(ctx context.Context, names []string, deadline time.Duration) int {
	return t.waitFor(ctx, deadline, func() int {
		n := 0
		for _, name := range names {
			if _, ok := t.ready[name]; ok {
				n++
			}
		}
		return n
	}, len(names))
}

// waitGone waits until none of the named objects is left, or the deadline; it returns how many
// are gone.
func (t *tracker) waitGone(ctx context.Context, names []string, deadline time.Duration) int {
	return t.waitFor(ctx, deadline, func() int {
		n := 0
		for _, name := range names {
			if !t.present[name] {
				n++
			}
		}
		return n
	}, len(names))
}

func (t *tracker) waitFor(ctx context.Context, deadline time.Duration, done func() int, want int) int {
	end := time.Now().Add(deadline)
	for {
		t.mu.Lock()
		n := done()
		t.mu.Unlock()
		if n >= want || time.Now().After(end) || ctx.Err() != nil {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// latencies are, for the named objects seen Ready, the times from their create to Ready, and
// from start to Ready (sorted), for percentiles and the plot.
func (t *tracker) latencies(names []string, start time.Time) (perObject, sinceStart []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, name := range names {
		r, ok := t.ready[name]
		if !ok {
			continue
		}
		perObject = append(perObject, r.Sub(t.created[name]))
		sinceStart = append(sinceStart, r.Sub(start))
	}
	slices.Sort(perObject)
	slices.Sort(sinceStart)
	return perObject, sinceStart
}

// percentile of sorted durations; 0 when there are none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// parallel runs do(0..n-1) on workers goroutines and returns the first error; the others stop
// taking work once one failed.
func parallel(ctx context.Context, n, workers int, do func(i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					once.Do(func() { firstErr = err })
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		return ctx.Err()
	}
	return firstErr
}
