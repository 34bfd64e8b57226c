package contractserver

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

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
			if delay := take(s.failedAuth, time.Now()); delay > 0 {
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

// rateLimit answers 429 with the wait the client's own limiter needs, instead of queueing the
// request. It runs after authenticate, so a flood from anyone without the token never reaches it.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	if s.limiters == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, _ := r.Context().Value(clientKey{}).(string)
		if delay := s.limiters.delay(client, time.Now()); delay > 0 {
			tooManyRequests(w, r, s.log, delay, "too many requests")
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
