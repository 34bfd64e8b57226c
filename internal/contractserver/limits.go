package contractserver

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// failedAuthRate and failedAuthBurst bound the requests that fail authentication, all senders
// together: a misconfigured client still sees its 401s, guessing the token is held to one try
// a second, and neither touches the budget of the clients that hold the token. Always on.
const (
	failedAuthRate  = rate.Limit(1)
	failedAuthBurst = 10
)

// clientLimiters give each authenticated client a rate limiter of its own, so a busy client
// waits for its own budget only and can never use up another's. A client is what
// authentication names it (bearerToken.current): today, every holder of the bearer token.
type clientLimiters struct {
	limit rate.Limit
	burst int

	mu       sync.Mutex
	byClient map[string]*clientLimiter
}

type clientLimiter struct {
	lim  *rate.Limiter
	used time.Time
}

func newClientLimiters(perSecond float64, burst int) *clientLimiters {
	return &clientLimiters{limit: rate.Limit(perSecond), burst: max(burst, 1), byClient: map[string]*clientLimiter{}}
}

// delay takes one request from client's budget at now and returns 0, or, when the budget is
// spent, returns how long until it allows one and takes nothing.
func (c *clientLimiters) delay(client string, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.byClient[client]
	if !ok {
		c.forgetIdle(now)
		l = &clientLimiter{lim: rate.NewLimiter(c.limit, c.burst)}
		c.byClient[client] = l
	}
	l.used = now
	return take(l.lim, now)
}

// forgetIdle drops the limiters of clients idle long enough to have their whole burst back: a
// new limiter is the same, so forgetting them changes nothing but the memory that clients gone
// (a rotated token) would hold.
func (c *clientLimiters) forgetIdle(now time.Time) {
	refill := time.Duration(float64(c.burst) / float64(c.limit) * float64(time.Second))
	for id, l := range c.byClient {
		if now.Sub(l.used) >= refill {
			delete(c.byClient, id)
		}
	}
}

// take takes one request from lim at now and returns 0, or, when lim allows none now, returns
// how long until it does and takes nothing.
func take(lim *rate.Limiter, now time.Time) time.Duration {
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}
