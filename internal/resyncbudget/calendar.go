package resyncbudget

// binWidth is one slot of a calendar, in seconds: a check is booked for the start of a slot, and
// a slot holds rate calls.
const binWidth = 1

// calendar books provider calls into one-second slots, each holding at most capacity calls. A
// nil calendar is no budget: every slot has room.
type calendar struct {
	capacity float64
	// used[i] is what slot base+i holds; slots before base are past and forgotten.
	base int64
	used []float64
}

// newCalendar is a calendar of rate calls a second whose first slot is now.
func newCalendar(rate float64, now int64) *calendar {
	if rate <= 0 {
		return nil
	}
	return &calendar{capacity: rate * binWidth, base: now}
}

// room reports whether slot may take a booking while at most share of its capacity is held.
func (c *calendar) room(slot int64, share float64) bool {
	return c == nil || c.at(slot) < c.capacity*share
}

func (c *calendar) at(slot int64) float64 {
	if c == nil || slot < c.base || slot >= c.base+int64(len(c.used)) {
		return 0
	}
	return c.used[slot-c.base]
}

// hold is a part of a booking: calls held in one slot.
type hold struct {
	slot  int64
	calls float64
}

// take books cost calls from slot on, filling each slot to share of its capacity: what one
// has no room for spills into the slots after it, so over any second or more the calendar
// holds its rate, give or take one booking.
func (c *calendar) take(slot int64, cost, share float64) []hold {
	if c == nil {
		return nil
	}
	var held []hold
	for s := slot; cost > 0; s++ {
		n := min(cost, max(c.capacity*share-c.at(s), 0))
		if n > 0 {
			c.add(s, n)
			held = append(held, hold{s, n})
			cost -= n
		}
	}
	return held
}

// give returns what a booking holds.
func (c *calendar) give(held []hold) {
	for _, h := range held {
		c.add(h.slot, -h.calls)
	}
}

func (c *calendar) add(slot int64, calls float64) {
	if slot < c.base {
		return // past
	}
	for slot >= c.base+int64(len(c.used)) {
		c.used = append(c.used, 0)
	}
	c.used[slot-c.base] = max(c.used[slot-c.base]+calls, 0)
}

// trim forgets the slots before now.
func (c *calendar) trim(now int64) {
	if c == nil || now <= c.base {
		return
	}
	c.used = c.used[min(now-c.base, int64(len(c.used))):]
	c.base = now
}

// empty reports whether nothing is booked.
func (c *calendar) empty() bool {
	for _, u := range c.used {
		if u > 0 {
			return false
		}
	}
	return true
}
