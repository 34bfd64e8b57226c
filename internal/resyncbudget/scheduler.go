// Package resyncbudget decides when a Ready resource is compared with its provider again, so
// that drift detection costs the provider a bounded rate of calls whatever the number of
// resources, and spends it where drift is likely.
//
//   - Each resource has a wanted period: Period after a pass that found it changed, drifted or
//     failing, doubled for each calm pass after that, up to MaxPeriod.
//   - Its next check is booked on two calendars of one-second slots: one for every resource
//     (Rate calls a second) and one for its share, its Contract (ShareRate calls a second). It
//     takes the first slot at or after the wanted time with room on both, for the calls its pass
//     made. A calm resource may fill a slot only to CalmShare of it: the rest is kept for those
//     that changed, so they are looked at on time even when calm ones are waiting.
//   - When the resources want more than the budget, their checks come later than wanted: the
//     period stretches, and the metrics of this package say by how much.
//
// The scheduler decides only when: a change, a watch event or a failure's retry reaches the
// controller's workqueue as it always does, and is never held back. Its state is in memory
// alone: after a restart every resource starts again at Period.
//
// golang.org/x/time/rate's token bucket books in the order it is asked, so a calm resource
// booked an hour ahead would take the tokens that one changed now needs in ten minutes; a
// calendar books each check at its own time, and gives it back when a sooner one replaces it.
package resyncbudget

import (
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Options configure a Scheduler.
type Options struct {
	// Kind names the resources in the metrics (bucket).
	Kind string
	// Period is the wanted period of a resource that changed, drifted or failed lately.
	Period time.Duration
	// MaxPeriod is the longest a calm resource waits when the budget has room; under Period:
	// Period.
	MaxPeriod time.Duration
	// Rate is the budget of provider calls a second for every resource together; 0: none.
	Rate float64
	// ShareRate is the budget of calls a second of one share (a Contract); 0: none.
	ShareRate float64
	// CalmShare is the part of a slot calm resources may fill; 0: all of it.
	CalmShare float64
	// Jitter adds up to this part of the wanted period at random, so resources checked in one
	// moment drift apart.
	Jitter float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Check is what a pass that ended Ready says of itself.
type Check struct {
	UID types.UID
	// Share is whose budget it spends: its Contract (namespace/name).
	Share string
	// Cost is the provider calls the pass made; the next check is booked for as many.
	Cost int
	// Calm: the pass wrote nothing, and the pass before it had left the resource Ready as it
	// is now (no change of spec, no failure since).
	Calm bool
}

// Scheduler books the next check of each resource. Its methods may be called concurrently.
type Scheduler struct {
	opts Options

	mu      sync.Mutex
	all     *calendar
	shares  map[string]*calendar
	objects map[types.UID]*object
	// trimmed is the slot up to which the calendars are trimmed; swept, when objects were
	// last swept of those no longer checked.
	trimmed int64
	swept   time.Time
}

// object is what the scheduler keeps of one resource.
type object struct {
	share  string
	streak int
	// last is when its last check ended; slot is the one booked for its next.
	last time.Time
	slot int64
	// all and share are what its booking holds on the two calendars.
	all, shared []hold
}

// New returns a Scheduler, and makes it the one the metrics of opts.Kind report.
func New(opts Options) *Scheduler {
	if opts.MaxPeriod < opts.Period {
		opts.MaxPeriod = opts.Period
	}
	if opts.CalmShare <= 0 || opts.CalmShare > 1 {
		opts.CalmShare = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	now := opts.Now()
	s := &Scheduler{opts: opts, all: newCalendar(opts.Rate, floorSlot(now)), shares: map[string]*calendar{},
		objects: map[types.UID]*object{}, trimmed: floorSlot(now), swept: now}
	report(s)
	return s
}

// Next books the next check of the resource c is about and returns how long until it.
func (s *Scheduler) Next(c Check) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	s.tidy(now)
	o := s.checked(c, now)
	want := slotOf(now.Add(s.wanted(o.streak)))
	// The workqueue keeps the soonest wake-up it was given: a booking still ahead and no later
	// than wanted is when it runs anyway.
	if o.slot > floorSlot(now) && o.slot <= want && o.share == c.Share {
		return timeOf(o.slot).Sub(now)
	}
	s.release(o, now)
	o.share = c.Share
	o.slot = s.book(o, want, float64(max(c.Cost, 1)), c.Calm)
	budgetDelay.WithLabelValues(s.opts.Kind).Observe(float64(o.slot-want) * binWidth)
	return max(timeOf(o.slot).Sub(now), 0)
}

// checked records the check c of now: its interval since the last, and its calm streak.
func (s *Scheduler) checked(c Check, now time.Time) *object {
	o := s.objects[c.UID]
	if o == nil {
		o = &object{}
		s.objects[c.UID] = o
	} else {
		checkInterval.WithLabelValues(s.opts.Kind).Observe(now.Sub(o.last).Seconds())
	}
	o.last = now
	if c.Calm {
		o.streak++
	} else {
		o.streak = 0
	}
	return o
}

// wanted is the period of a resource after streak calm passes: Period, doubled for each, at
// most MaxPeriod, with jitter.
func (s *Scheduler) wanted(streak int) time.Duration {
	d := s.opts.Period
	for range streak {
		if d >= s.opts.MaxPeriod {
			break
		}
		d *= 2
	}
	d = min(d, s.opts.MaxPeriod)
	if s.opts.Jitter > 0 {
		d += time.Duration(rand.Float64() * s.opts.Jitter * float64(d))
	}
	return d
}

// book takes the first slot at or after want with room on both calendars for cost calls.
func (s *Scheduler) book(o *object, want int64, cost float64, calm bool) int64 {
	share := s.share(o.share)
	limit := 1.0
	if calm {
		limit = s.opts.CalmShare
	}
	slot := want
	for !s.all.room(slot, limit) || !share.room(slot, limit) {
		slot++
	}
	o.all, o.shared = s.all.take(slot, cost, limit), share.take(slot, cost, limit)
	return slot
}

// release gives back o's booking if it is still ahead: a sooner check replaces it. One that
// has come was spent by the pass that came with it.
func (s *Scheduler) release(o *object, now time.Time) {
	if o.slot > floorSlot(now) {
		s.all.give(o.all)
		if share := s.shares[o.share]; share != nil {
			share.give(o.shared)
		}
	}
	o.all, o.shared = nil, nil
}

func (s *Scheduler) share(name string) *calendar {
	c, ok := s.shares[name]
	if !ok {
		c = newCalendar(s.opts.ShareRate, s.trimmed)
		s.shares[name] = c
	}
	return c
}

// tidy forgets past slots, and, once a Period, the resources no longer checked (deleted, or no
// longer Ready) and the shares with nothing booked.
func (s *Scheduler) tidy(now time.Time) {
	if slot := floorSlot(now); slot > s.trimmed {
		s.trimmed = slot
		s.all.trim(slot)
		for _, c := range s.shares {
			c.trim(slot)
		}
	}
	if now.Sub(s.swept) < s.opts.Period {
		return
	}
	s.swept = now
	for uid, o := range s.objects {
		if s.gone(o, now) {
			delete(s.objects, uid)
		}
	}
	for name, c := range s.shares {
		if c == nil || c.empty() {
			delete(s.shares, name)
		}
	}
}

// gone reports whether o missed its booked check by more than a Period: the resource was
// deleted, or stopped being Ready, and its controller no longer books.
func (s *Scheduler) gone(o *object, now time.Time) bool {
	return now.Sub(timeOf(o.slot)) > s.opts.Period
}

// oldest is how long ago the resource checked least recently was checked.
func (s *Scheduler) oldest() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	var age time.Duration
	for _, o := range s.objects {
		if !s.gone(o, now) {
			age = max(age, now.Sub(o.last))
		}
	}
	return age
}

// slotOf is the first slot that starts at or after t; floorSlot, the one t is in.
func slotOf(t time.Time) int64 { return floorSlot(t.Add(binWidth*time.Second - 1)) }

func floorSlot(t time.Time) int64 { return t.Unix() / binWidth }

func timeOf(slot int64) time.Time { return time.Unix(slot*binWidth, 0) }
