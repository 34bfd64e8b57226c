package contractserver

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// authenticate refuses requests without the bearer token before anything else runs, and hands
// the client's name on to rateLimit. A refusal is cheap (a constant-time compare and a small
// answer) and takes from one small budget shared by every failed request (failedAuthRate),
// never from the budget of a client that holds the token.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want, client := s.token.current()
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			if delay := take(time.Now(), s.failedAuth); delay > 0 {
				// Said, so that a client with a wrong token learns it from this answer too.
				tooManyRequests(w, r, s.log, delay, "too many requests without the right bearer token")
				return
			}
			drain(w, r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="contract-api"`)
			detail := "the bearer token is wrong"
			if !strings.HasPrefix(string(got), "Bearer ") {
				detail = "the request carries no bearer token"
			}
			writeProblem(w, r, s.log, newProblem(contractapi.ProblemUnauthorized, http.StatusUnauthorized, "%s", detail))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, client)))
	})
}

// clientKey is the context key of the name authenticate gives the client.
type clientKey struct{}

// rateLimit answers 429 with the wait the request's budgets need, instead of queueing it: its
// client's (clientKey) and its tenant's (TenantHeader: the Kubernetes namespace the call is
// for; requests without it share the budget of the tenant ""). A request takes from both or
// from neither. It runs after authenticate, so a flood from anyone without the token never
// reaches it, and only holders of the token can name tenants.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := r.Header.Get(contractapi.TenantHeader)
		if tenant != "" && !tenantName.MatchString(tenant) {
			drain(w, r)
			writeProblem(w, r, s.log, newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest,
				"%s must be a Kubernetes namespace's name (a DNS-1123 label of at most 63 characters)", contractapi.TenantHeader))
			return
		}
		client, _ := r.Context().Value(clientKey{}).(string)
		at := time.Now()
		var clientLim, tenantLim *rate.Limiter
		if s.clients != nil {
			clientLim = s.clients.get(client, at)
		}
		if s.tenants != nil {
			tenantLim = s.tenants.get(tenant, at)
		}
		if delay := take(at, clientLim, tenantLim); delay > 0 {
			what := "too many requests"
			if tenantLim != nil && tenantLim.TokensAt(at) < 1 {
				what = fmt.Sprintf("too many requests for tenant %q (%s)", tenant, contractapi.TenantHeader)
			}
			tooManyRequests(w, r, s.log, delay, what)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooManyRequests answers 429 with the delay, in whole seconds, in Retry-After.
func tooManyRequests(w http.ResponseWriter, r *http.Request, log *slog.Logger, delay time.Duration, what string) {
	drain(w, r)
	p := newProblem(contractapi.ProblemRateLimited, http.StatusTooManyRequests, "%s; retry after the delay in Retry-After", what)
	p.RetryAfter = int(math.Ceil(delay.Seconds()))
	writeProblem(w, r, log, p)
}

// limitBody caps the body the handlers may read; reading past the cap fails with
// *http.MaxBytesError, which routes answers 413.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		next.ServeHTTP(w, r)
	})
}

// now is the server's clock, in UTC and rounded to the second the API shows.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }
