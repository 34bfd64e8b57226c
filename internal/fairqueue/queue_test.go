package fairqueue

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func req(ns string, i int) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: fmt.Sprint(i)}}
}

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// get hands out an item, or fails the test if Get would block.
func get(t *testing.T, q *Queue) reconcile.Request {
	t.Helper()
	got := make(chan reconcile.Request, 1)
	go func() {
		item, shutdown := q.Get()
		if !shutdown {
			got <- item
		}
	}()
	select {
	case item := <-got:
		return item
	case <-time.After(2 * time.Second):
		t.Fatal("Get blocked")
		return reconcile.Request{}
	}
}

// blocks reports whether Get waits, and leaves no Get behind.
func blocks(q *Queue) bool {
	got := make(chan struct{})
	go func() {
		if item, shutdown := q.Get(); !shutdown {
			q.Done(item)
		}
		close(got)
	}()
	select {
	case <-got:
		return false
	case <-time.After(100 * time.Millisecond):
		q.ShutDown()
		<-got
		return true
	}
}

func TestItIsAWorkQueue(t *testing.T) {
	q := New(2, Options{})
	a := req("team-a", 1)
	q.Add(a)
	q.Add(a)
	if q.Len() != 1 {
		t.Fatalf("an item added twice is queued %d times", q.Len())
	}
	if got := get(t, q); got != a {
		t.Fatalf("Get = %v, want %v", got, a)
	}
	q.Add(a) // while a worker has it
	if q.Len() != 0 {
		t.Fatal("an item being processed was handed out again before Done")
	}
	q.Done(a)
	if got := get(t, q); got != a {
		t.Fatalf("an item added while processed is not handed out after Done: %v", got)
	}
	q.Done(a)
	if !blocks(q) {
		t.Error("Get on an empty queue did not wait")
	}
	q.Add(req("team-a", 2)) // after ShutDown: not taken
	if _, shutdown := q.Get(); !shutdown || q.Len() != 0 {
		t.Error("a queue shut down took an item or did not report shutdown")
	}
}

func TestNamespacesTakeTurns(t *testing.T) {
	q := New(8, Options{})
	for i := range 100 {
		q.Add(req("burst", i))
	}
	q.Add(req("quiet", 0))
	seen := []string{get(t, q).Namespace, get(t, q).Namespace}
	if seen[0] != "quiet" && seen[1] != "quiet" {
		t.Errorf("a namespace's one change waited behind another's burst of 100: handed out %v first", seen)
	}
}

func TestANamespaceNeverHoldsTheReserve(t *testing.T) {
	q := New(8, Options{})
	for i := range 100 {
		q.Add(req("burst", i))
	}
	for range 7 { // workers less the reserve of one in eight
		get(t, q)
	}
	if !blocks(q) {
		t.Fatal("one namespace took the last worker, which is kept for the others")
	}
	q = New(8, Options{})
	for i := range 100 {
		q.Add(req("burst", i))
	}
	for range 7 {
		get(t, q)
	}
	q.Add(req("other", 0))
	if got := get(t, q); got.Namespace != "other" {
		t.Errorf("with one namespace at its share, another's change got no worker: %v", got)
	}
}

func TestASlowNamespaceIsHeldToASmallShare(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	tarpit := func() *Queue {
		q := New(16, Options{SlowPass: time.Second, SlowFor: time.Minute, Now: c.now})
		for i := range 100 {
			q.Add(req("tarpit", i))
		}
		return q
	}

	q := tarpit()
	for range 3 {
		get(t, q)
	}
	c.add(2 * time.Second) // its passes do not come back
	if !blocks(q) {
		t.Fatal("a namespace whose passes hang got more workers than its slow share (2 of 16)")
	}

	q = tarpit()
	item := get(t, q)
	c.add(2 * time.Second)
	q.Done(item) // a slow pass ended: the namespace stays slow for a minute
	get(t, q)
	get(t, q)
	if !blocks(q) {
		t.Fatal("a namespace that was slow a moment ago got more than its slow share")
	}

	q = tarpit()
	item = get(t, q)
	c.add(2 * time.Second)
	q.Done(item)
	c.add(time.Minute)
	for range 14 { // quick again: workers less the reserve
		get(t, q)
	}
}

func TestShutDownWithDrainWaitsForTheItemsHandedOut(t *testing.T) {
	q := New(2, Options{})
	q.Add(req("team-a", 1))
	item := get(t, q)
	drained := make(chan struct{})
	go func() { q.ShutDownWithDrain(); close(drained) }()
	select {
	case <-drained:
		t.Fatal("drained with an item still handed out")
	case <-time.After(50 * time.Millisecond):
	}
	q.Done(item)
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		t.Fatal("not drained after Done")
	}
}
