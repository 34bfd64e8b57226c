package contractserver

import (
	"net/http"
	"regexp"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// failedAuthRate and failedAuthBurst bound the requests that fail authentication, all senders
// together: a misconfigured client still sees its 401s, guessing the token is held to one try
// a second, and neither touches the budget of the clients that hold the token. Always on.
const (
	failedAuthRate  = rate.Limit(1)
	failedAuthBurst = 10
)

// The default budgets of Config, each in requests a second with a burst. The operator is one
// client for every tenant: its budget bounds what the server and its backend take from all of
// them together, and each tenant's budget is a quarter of it, so one namespace's churn leaves
// the rest to the others. Measured with the operator's own burst (internal/operator
// TestEveryContractAPICallNamesItsNamespaceWithinTheDefaultBudgets with 180 Buckets and
// BucketAccesses in one namespace, made, rotated and deleted at once with the shipped 32
// workers, twice): about 730 calls in 45 to 60 s, 12 to 16 a second on average and at most 41
// in one second. A tenant's 50 a second is three times that average and above its busiest
// second, with a burst of ten seconds' worth; the client's 200 a second lets four namespaces
// burst so at once.
const (
	DefaultRequestsPerSecond       = 200
	DefaultBurst                   = 2000
	DefaultTenantRequestsPerSecond = 50
	DefaultTenantBurst             = 500
)

// Limits bound what one contract holds at the server, so that no tenant's churn grows the
// records, or the work of a request, without bound. A zero field takes its Default; a
// negative one turns that bound off.
type Limits struct {
	// Principals is how many principals a contract may have (422 limit-exceeded beyond), and
	// how many deleted ones it may remember within TombstoneRetention (429 with Retry-After
	// beyond, until the oldest is forgotten).
	Principals int
	// Keys is how many key pairs a contract, and each of its principals, may have in effect
	// or in the making (422 limit-exceeded beyond).
	Keys int
	// Topics is how many notification topics a contract may have (422 limit-exceeded beyond).
	Topics int
	// Roles is how many roles a contract may have (422 limit-exceeded beyond).
	Roles int
	// TombstoneRetention is how long what a deleted principal or a revoked key leaves behind is
	// kept, so a replay of the call that made it is answered as the first answer was: 410
	// principal-deleted, 410 key-revoked, the revoked key pair. After it the server forgets
	// the idempotency key; a negative value never forgets.
	TombstoneRetention time.Duration
	// RevokedKeys is how many tombstones of revoked keys a contract, and each principal, keeps
	// at most, the newest: a client asks for a key only once it recorded the answer about the
	// one before, so a replay behind that many later keys is stale (see keyTombstone).
	RevokedKeys int
}

// The default Limits. DefaultPrincipals is ten times the BucketAccesses of one contract in the
// fault suite at 1,000 Buckets (about 110); DefaultKeys is five times what a rotation needs
// (the key in use and the next); DefaultTopics is RGW's default of 1,000 buckets per user, a
// topic each; DefaultRoles is DefaultPrincipals, a role per keyless BucketAccess as a principal per
// keyed one; a day of retention outlasts any outage a replay is expected across, and 16
// revoked keys are 16 rotations behind.
const (
	DefaultPrincipals         = 1000
	DefaultKeys               = 10
	DefaultTopics             = 1000
	DefaultRoles              = DefaultPrincipals
	DefaultTombstoneRetention = 24 * time.Hour
	DefaultRevokedKeys        = 16
)

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.Principals, DefaultPrincipals)
	def(&l.Keys, DefaultKeys)
	def(&l.Topics, DefaultTopics)
	def(&l.Roles, DefaultRoles)
	def(&l.RevokedKeys, DefaultRevokedKeys)
	if l.TombstoneRetention == 0 {
		l.TombstoneRetention = DefaultTombstoneRetention
	}
	return l
}

// within reports whether one more than have stays within limit (negative: none).
func within(have, limit int) bool { return limit < 0 || have < limit }

// limitExceeded is the answer to a call that would take a contract past one of its Limits. It
// is permanent for the same request until something is deleted, so it is no 429.
func limitExceeded(format string, args ...any) *problem {
	return newProblem(contractapi.ProblemLimitExceeded, http.StatusUnprocessableEntity, format, args...)
}

// tenantName is what TenantHeader may hold: a Kubernetes namespace's name (a DNS-1123 label).
var tenantName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// limiters give each client, or each tenant, a rate limiter of its own, so a busy one waits for
// its own budget only and can never use up another's.
type limiters struct {
	limit rate.Limit
	burst int

	mu    sync.Mutex
	byKey map[string]*keyLimiter
}

type keyLimiter struct {
	lim  *rate.Limiter
	used time.Time
}

// newLimiters returns nil (no limit) for a rate that is not positive.
func newLimiters(perSecond float64, burst int) *limiters {
	if perSecond <= 0 {
		return nil
	}
	return &limiters{limit: rate.Limit(perSecond), burst: max(burst, 1), byKey: map[string]*keyLimiter{}}
}

// get returns key's limiter, made at now if key has none.
func (c *limiters) get(key string, now time.Time) *rate.Limiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.byKey[key]
	if !ok {
		c.forgetIdle(now)
		l = &keyLimiter{lim: rate.NewLimiter(c.limit, c.burst)}
		c.byKey[key] = l
	}
	l.used = now
	return l.lim
}

// forgetIdle drops the limiters idle long enough to have their whole burst back: a new limiter
// is the same, so forgetting them changes nothing but the memory that clients gone (a rotated
// token) or tenants gone would hold.
func (c *limiters) forgetIdle(now time.Time) {
	refill := time.Duration(float64(c.burst) / float64(c.limit) * float64(time.Second))
	for id, l := range c.byKey {
		if now.Sub(l.used) >= refill {
			delete(c.byKey, id)
		}
	}
}

// take takes one request from every limiter at now and returns 0, or, when one allows none now,
// returns the longest wait among those that do not and takes from none: a request refused by
// its tenant's budget costs its client's nothing, and the other way round.
func take(now time.Time, lims ...*rate.Limiter) time.Duration {
	var wait time.Duration
	reservations := make([]*rate.Reservation, 0, len(lims))
	for _, lim := range lims {
		if lim == nil {
			continue
		}
		res := lim.ReserveN(now, 1)
		reservations = append(reservations, res)
		wait = max(wait, res.DelayFrom(now))
	}
	if wait > 0 {
		for _, res := range reservations {
			res.CancelAt(now)
		}
	}
	return wait
}
