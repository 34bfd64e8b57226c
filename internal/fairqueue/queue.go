// Package fairqueue is the workqueue of the operator's controllers: it shares their workers
// among namespaces, so that one tenant's slow or hostile server delays that tenant alone.
//
// A plain workqueue hands out items in the order they came. A tenant whose S3 endpoint accepts
// connections and never answers (a tar pit) then holds every worker its Buckets reach, each for
// a whole pass budget, and every other namespace's Buckets wait behind them. This queue:
//
//   - hands items out by namespace in turn, the namespace with the fewest passes running first,
//     so a burst in one namespace does not queue ahead of another's single change;
//   - never lets one namespace hold more than its workers less a reserve (a worker in eight), so
//     another namespace's change always finds a worker free;
//   - holds a namespace whose passes are slow (one has run longer than SlowPass, now or lately)
//     to a small share (a worker in eight, at least one) until its passes are quick again.
//
// With one namespace busy and the others idle it is as fast as a plain queue, less the reserve.
// It implements client-go's TypedInterface; client-go's delaying and rate-limiting layers sit
// on top of it (NewQueue), as they sit on a plain queue.
package fairqueue

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Queue is a work queue of reconcile requests shared fairly among their namespaces. Like
// client-go's, it hands out an item to one worker at a time, and an item added while a worker has
// it is handed out again after Done.
type Queue struct {
	workers, reserve, slowShare int
	slowPass, slowFor           time.Duration
	now                         func() time.Time

	mu   sync.Mutex
	cond *sync.Cond
	// namespaces holds each namespace's items that wait for a worker, in order, and what it
	// runs; ready counts the waiting items of all.
	namespaces map[string]*namespace
	ready      int
	// dirty are the items added and not handed out since; processing, those handed out and not
	// Done yet, with when they were handed out.
	dirty      map[reconcile.Request]struct{}
	processing map[reconcile.Request]time.Time
	// turns counts hand-outs: the namespace served longest ago goes first among equals.
	turns        uint64
	shuttingDown bool
	drain        bool
}

type namespace struct {
	waiting  []reconcile.Request
	running  int
	lastTurn uint64
	// slowUntil: a pass of the namespace took longer than slowPass; until then it counts as
	// slow.
	slowUntil time.Time
}

// Defaults of Options.
const (
	// DefaultSlowPass: a quick pass of the operator takes milliseconds against a server that
	// answers, a Bucket's first pass on Ceph RGW under load up to about a second; longer is a
	// server that does not answer.
	DefaultSlowPass = 2 * time.Second
	// DefaultSlowFor: long enough that a namespace whose every pass times out stays held back
	// between them.
	DefaultSlowFor = time.Minute
)

// Options tune a Queue; a field's zero value takes its default.
type Options struct {
	// SlowPass is how long a pass may run before its namespace counts as slow.
	SlowPass time.Duration
	// SlowFor is how long a namespace counts as slow after a slow pass.
	SlowFor time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// New returns a Queue for a controller that runs workers passes at once.
func New(workers int, opts Options) *Queue {
	workers = max(workers, 1)
	q := &Queue{
		workers: workers,
		// With fewer than eight workers nothing is reserved: the reserve would be most of them.
		reserve:    workers / 8,
		slowShare:  max(1, workers/8),
		slowPass:   opts.SlowPass,
		slowFor:    opts.SlowFor,
		now:        opts.Now,
		namespaces: map[string]*namespace{},
		dirty:      map[reconcile.Request]struct{}{},
		processing: map[reconcile.Request]time.Time{},
	}
	if q.slowPass <= 0 {
		q.slowPass = DefaultSlowPass
	}
	if q.slowFor <= 0 {
		q.slowFor = DefaultSlowFor
	}
	if q.now == nil {
		q.now = time.Now
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues item, unless it is queued already; an item being processed is queued again when
// it is Done.
func (q *Queue) Add(item reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return
	}
	q.push(item)
	q.cond.Broadcast()
}

func (q *Queue) push(item reconcile.Request) {
	ns := q.namespaces[item.Namespace]
	if ns == nil {
		ns = &namespace{}
		q.namespaces[item.Namespace] = ns
	}
	ns.waiting = append(ns.waiting, item)
	q.ready++
}

// Len is the number of items waiting for a worker.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready
}

// Get blocks until an item may be handed out, and hands it out; shutdown is true once the
// queue shuts down with nothing left to hand out.
func (q *Queue) Get() (reconcile.Request, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if name, ns := q.next(); ns != nil {
			item := ns.waiting[0]
			ns.waiting = ns.waiting[1:]
			q.ready--
			ns.running++
			q.turns++
			ns.lastTurn = q.turns
			q.processing[item] = q.now()
			delete(q.dirty, item)
			q.forgetIfIdle(name, ns)
			return item, false
		}
		if q.shuttingDown {
			// What is left may wait for passes to end; a queue shutting down hands out no more.
			return reconcile.Request{}, true
		}
		q.cond.Wait()
	}
}

// next is the namespace to serve now: of those with items waiting and room to run one, the one
// running fewest, then the one served longest ago.
func (q *Queue) next() (string, *namespace) {
	if q.ready == 0 {
		return "", nil
	}
	now := q.now()
	var bestName string
	var best *namespace
	for name, ns := range q.namespaces {
		if len(ns.waiting) == 0 || ns.running >= q.share(name, ns, now) {
			continue
		}
		if best == nil || ns.running < best.running || ns.running == best.running && ns.lastTurn < best.lastTurn {
			bestName, best = name, ns
		}
	}
	return bestName, best
}

// share is how many passes a namespace may run at once now.
func (q *Queue) share(name string, ns *namespace, now time.Time) int {
	if now.Before(ns.slowUntil) {
		return q.slowShare
	}
	for item, since := range q.processing {
		if item.Namespace == name && now.Sub(since) > q.slowPass {
			return q.slowShare
		}
	}
	return q.workers - q.reserve
}

// Done marks item processed: it is handed out again if it was added meanwhile.
func (q *Queue) Done(item reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	since, ok := q.processing[item]
	if !ok {
		return
	}
	delete(q.processing, item)
	ns := q.namespaces[item.Namespace]
	ns.running--
	if now := q.now(); now.Sub(since) > q.slowPass {
		ns.slowUntil = now.Add(q.slowFor)
	}
	if _, ok := q.dirty[item]; ok {
		q.push(item)
	}
	q.forgetIfIdle(item.Namespace, ns)
	// A worker is free, and a namespace may have room again: wake every waiting Get to look.
	q.cond.Broadcast()
}

// forgetIfIdle drops what the queue keeps of a namespace with nothing waiting, nothing running
// and no slowness to remember: namespaces come and go, and their count is a tenant's choice.
func (q *Queue) forgetIfIdle(name string, ns *namespace) {
	if len(ns.waiting) == 0 && ns.running == 0 && !q.now().Before(ns.slowUntil) {
		delete(q.namespaces, name)
	}
}

// ShutDown stops the queue taking items; Get hands out what may run at once, then reports
// shutdown.
func (q *Queue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain shuts the queue down and waits until every item handed out is Done.
func (q *Queue) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown, q.drain = true, true
	q.cond.Broadcast()
	for len(q.processing) > 0 && q.drain {
		q.cond.Wait()
	}
}

// ShuttingDown reports whether the queue is shutting down.
func (q *Queue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
