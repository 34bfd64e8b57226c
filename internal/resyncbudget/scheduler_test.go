package resyncbudget

import (
	"container/heap"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// fleet runs a Scheduler over simulated resources on a fake clock: each is checked when its
// booking comes, as the workqueue would run it, and every check costs two calls, as a Bucket's
// resync does (GetBucketAcl, GetBucketPolicy).
type fleet struct {
	t     *testing.T
	now   time.Time
	s     *Scheduler
	queue dueQueue
	share map[types.UID]string
	// calm says whether a check of uid finds nothing to correct; always, unless set.
	calm func(uid types.UID) bool
	// checks are the checks made, in order.
	checks []check
	last   map[types.UID]time.Time
	// longest is the longest interval between two checks of each resource.
	longest map[types.UID]time.Duration
}

type check struct {
	at    time.Time
	uid   types.UID
	share string
}

const cost = 2

var start = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func newFleet(t *testing.T, opts Options, shares map[string]int) *fleet {
	f := &fleet{t: t, now: start, share: map[types.UID]string{}, last: map[types.UID]time.Time{},
		longest: map[types.UID]time.Duration{}, calm: func(types.UID) bool { return true }}
	opts.Kind = "test"
	opts.Now = func() time.Time { return f.now }
	f.s = New(opts)
	for share, n := range shares {
		for i := range n {
			uid := types.UID(fmt.Sprintf("%s-%d", share, i))
			f.share[uid] = share
			// All made at once: their first passes are event-driven, outside the budget.
			heap.Push(&f.queue, due{at: start, uid: uid})
		}
	}
	return f
}

func (f *fleet) uid(i int) types.UID { return types.UID(fmt.Sprintf("r-%d", i)) }

// run checks resources as they come due until the clock reaches until.
func (f *fleet) run(until time.Time) {
	for f.queue.Len() > 0 && !f.queue[0].at.After(until) {
		d := heap.Pop(&f.queue).(due)
		f.now = d.at
		f.check(d.uid, f.calm(d.uid))
	}
	f.now = until
}

// check is one pass over uid that ended Ready; it returns the wait the scheduler booked.
func (f *fleet) check(uid types.UID, calm bool) time.Duration {
	if last, ok := f.last[uid]; ok {
		f.longest[uid] = max(f.longest[uid], f.now.Sub(last))
	}
	f.last[uid] = f.now
	f.checks = append(f.checks, check{f.now, uid, f.share[uid]})
	after := f.s.Next(Check{UID: uid, Share: f.share[uid], Cost: cost, Calm: calm})
	if after < 0 {
		f.t.Fatalf("Next(%s) = %s; want no negative wait", uid, after)
	}
	f.queue.schedule(uid, f.now.Add(after))
	return after
}

// busiest is the most calls any window of width made in [from, to), for share ("" for all),
// and when that window began.
func (f *fleet) busiest(from, to time.Time, width time.Duration, share string) (int, time.Time) {
	perSecond := make([]int, int(to.Sub(from)/time.Second)+1)
	for _, c := range f.checks {
		if !c.at.Before(from) && c.at.Before(to) && (share == "" || c.share == share) {
			perSecond[int(c.at.Sub(from)/time.Second)] += cost
		}
	}
	most, at, w := 0, from, int(width/time.Second)
	for i := range perSecond {
		n := 0
		for _, x := range perSecond[i:min(i+w, len(perSecond))] {
			n += x
		}
		if n > most {
			most, at = n, from.Add(time.Duration(i)*time.Second)
		}
	}
	return most, at
}

// longestOf is the longest interval between two checks of any resource of share.
func (f *fleet) longestOf(share string) time.Duration {
	var d time.Duration
	for uid, l := range f.longest {
		if f.share[uid] == share {
			d = max(d, l)
		}
	}
	return d
}

type due struct {
	at  time.Time
	uid types.UID
}

// dueQueue is the workqueue's delaying part: one wake-up per resource, the soonest it was
// given.
type dueQueue []due

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q dueQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)        { *q = append(*q, x.(due)) }
func (q *dueQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// remove takes uid's wake-up out of the queue and returns its time.
func (q *dueQueue) remove(uid types.UID) time.Time {
	for i, d := range *q {
		if d.uid == uid {
			heap.Remove(q, i)
			return d.at
		}
	}
	panic("no wake-up for " + uid)
}

func (q *dueQueue) schedule(uid types.UID, at time.Time) {
	for i, d := range *q {
		if d.uid == uid {
			if at.Before(d.at) {
				(*q)[i].at = at
				heap.Fix(q, i)
			}
			return
		}
	}
	heap.Push(q, due{at: at, uid: uid})
}

// checkBudget fails t if share ("" for all) made more calls in some ten seconds after the
// first passes than rate allows, give or take one booking.
func (f *fleet) checkBudget(share string, rate float64) {
	f.t.Helper()
	got, at := f.busiest(start.Add(time.Second), f.now, 10*time.Second, share)
	if limit := int(rate*10) + cost; got > limit {
		f.t.Errorf("%q: %d calls in the 10 s from %s; the budget allows %d", share, got, at.Sub(start), limit)
	}
}

// A fleet that wants twice the budget is held to it in every ten seconds after the first
// passes, and every resource is still checked: its check comes at most N·cost/Rate after the
// period it wants (the other resources' bookings are all that can stand between), and settles
// at N·cost/Rate apart.
func TestBudgetIsHeldOverAFleet(t *testing.T) {
	const n, rate = 12000, 20.0 // every 10 minutes: 40 calls/s wanted
	f := newFleet(t, Options{Period: 10 * time.Minute, MaxPeriod: time.Hour, Rate: rate, CalmShare: 0.8, Jitter: 0.1},
		map[string]int{"ns/a": n / 2, "ns/b": n / 2})
	f.calm = func(types.UID) bool { return false } // every pass corrects something: none is calm
	f.run(start.Add(2 * time.Hour))

	f.checkBudget("", rate)
	stretched := time.Duration(float64(n*cost)/rate) * time.Second
	for _, share := range []string{"ns/a", "ns/b"} {
		if got, bound := f.longestOf(share), 11*time.Minute+stretched; got > bound {
			t.Errorf("a resource of %s waited %s between checks; want at most %s", share, got, bound)
		}
	}
	clear(f.longest)
	f.run(f.now.Add(time.Hour))
	if got := f.longestOf("ns/a"); got > stretched+time.Minute {
		t.Errorf("after the first round a resource waited %s between checks; want the stretched period, %s", got, stretched)
	}
	if len(f.last) != n {
		t.Errorf("%d resources checked; want %d", len(f.last), n)
	}
}

// A resource that changed, drifted or failed is booked at Period even when calm ones fill the
// budget for longer than that, and a calm one waits its turn.
func TestAChangedResourceIsCheckedSooner(t *testing.T) {
	const period = 10 * time.Minute
	f := newFleet(t, Options{Period: period, MaxPeriod: time.Hour, Rate: 1, CalmShare: 0.8},
		map[string]int{"ns/a": 3000}) // calm at the maximum: 1.7 calls/s wanted
	f.run(start.Add(3 * time.Hour))

	f.share["calm"], f.share["changed"] = "ns/a", "ns/a"
	if after := f.check("calm", true); after <= 2*period {
		t.Fatalf("a calm resource was booked %s ahead; the fleet should be waiting far longer than the period for this test", after)
	}
	if after := f.check("changed", false); after > period+time.Second {
		t.Errorf("a changed resource was booked %s ahead; want the period, %s", after, period)
	}
}

// next runs the check of uid booked last, and returns the wait it books.
func (f *fleet) next(uid types.UID, calm bool) time.Duration {
	f.now = f.queue.remove(uid)
	return f.check(uid, calm)
}

// A calm resource's period doubles up to MaxPeriod and never passes it while the budget has
// room; a change brings it back to Period.
func TestACalmResourceIsNeverPastTheMaximum(t *testing.T) {
	f := newFleet(t, Options{Period: time.Minute, MaxPeriod: 8 * time.Minute, Rate: 20, Jitter: 0.1},
		map[string]int{"ns/a": 100})
	f.run(start)
	var waits []time.Duration
	for range 7 {
		waits = append(waits, f.next("ns/a-0", true))
	}
	want := []time.Duration{4, 8, 8, 8, 8, 8, 8} // its first pass, in run, was calm too: 2m
	for i, w := range waits {
		if w < want[i]*time.Minute || w > want[i]*time.Minute*11/10+time.Second {
			t.Errorf("wait after %d calm checks: %s; want %dm plus up to a tenth (%v)", i+2, w, want[i], waits)
		}
	}
	if after := f.next("ns/a-0", false); after > time.Minute*11/10+time.Second {
		t.Errorf("after a change the wait is %s; want the period, a minute, plus up to a tenth", after)
	}
	f.run(start.Add(3 * time.Hour))
	if got := f.longestOf("ns/a"); got > 8*time.Minute*11/10+time.Second {
		t.Errorf("a calm resource waited %s between checks; the maximum is 8m plus a tenth", got)
	}
}

// One Contract's thousands of Buckets spend only its share: another Contract's few are checked
// within the maximum period while the large one's stretch.
func TestOneShareCannotStarveAnother(t *testing.T) {
	const big, shareRate = 6000, 2.0
	f := newFleet(t, Options{Period: 10 * time.Minute, MaxPeriod: time.Hour, Rate: 20, ShareRate: shareRate,
		CalmShare: 0.8}, map[string]int{"ns/big": big, "other/small": 20})
	f.run(start.Add(4 * time.Hour))

	if got := f.longestOf("other/small"); got > time.Hour+time.Second {
		t.Errorf("the small Contract's Buckets waited %s; want at most the maximum period, 1h", got)
	}
	if got := f.longestOf("ns/big"); got < 90*time.Minute {
		t.Errorf("the big Contract's Buckets waited at most %s; its share (%.0f calls/s) should stretch it past 1h30m", got, shareRate)
	}
	f.checkBudget("ns/big", shareRate)
	f.checkBudget("", 20)
}

// A sooner booking gives the later one back: a resource changed again and again holds one
// booking, not one per change.
func TestASoonerBookingGivesTheLaterBack(t *testing.T) {
	f := newFleet(t, Options{Period: time.Minute, MaxPeriod: time.Hour, Rate: cost}, map[string]int{"ns/a": 1})
	f.run(start)
	for range 6 {
		f.next("ns/a-0", true) // calm: booked further ahead each time
	}
	f.now = f.now.Add(time.Second)
	f.check("ns/a-0", false) // changed before it: booked a minute ahead, the far booking given back
	if got := sum(f.s.all.used); got != cost {
		t.Errorf("the calendar holds %.0f calls; want one booking, %d", got, cost)
	}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}
