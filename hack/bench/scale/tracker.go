package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// tracker follows the objects of one kind in one namespace through a watch, and records when
// each was created (by the benchmark), first seen Ready, and gone.
type tracker struct {
	dyn     dynamic.Interface
	gvr     schema.GroupVersionResource
	ns      string
	isReady func(*unstructured.Unstructured) bool

	mu      sync.Mutex
	created map[string]time.Time
	ready   map[string]time.Time
	present map[string]bool
	stop    chan struct{}
}

func newTracker(dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, isReady func(*unstructured.Unstructured) bool) (*tracker, error) {
	t := &tracker{dyn: dyn, gvr: gvr, ns: ns, isReady: isReady,
		created: map[string]time.Time{}, ready: map[string]time.Time{}, present: map[string]bool{}, stop: make(chan struct{})}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	inf := factory.ForResource(gvr).Informer()
	seen := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		now := time.Now()
		t.mu.Lock()
		defer t.mu.Unlock()
		t.present[u.GetName()] = true
		if _, done := t.ready[u.GetName()]; !done && t.isReady(u) {
			t.ready[u.GetName()] = now
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				t.mu.Lock()
				delete(t.present, u.GetName())
				t.mu.Unlock()
			}
		},
	}); err != nil {
		return nil, err
	}
	factory.Start(t.stop)
	if !cache.WaitForCacheSync(t.stop, inf.HasSynced) {
		return nil, fmt.Errorf("watching %s did not sync", gvr.Resource)
	}
	return t, nil
}

func (t *tracker) close() { close(t.stop) }

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

// conditionTrue reports whether the object's status has a condition of that type with status
// True.
func conditionTrue(typ string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if ok && m["type"] == typ && m["status"] == "True" {
				return true
			}
		}
		return false
	}
}
