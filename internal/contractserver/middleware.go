package contractserver

import (
	"crypto/subtle"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// authenticate refuses requests without the bearer token, before any handler runs.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, s.token.header()) != 1 {
			drain(r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="contract-api"`)
			detail := "the bearer token is wrong"
			if !strings.HasPrefix(string(got), "Bearer ") {
				detail = "the request carries no bearer token"
			}
			writeProblem(w, r, s.log, newProblem(contractapi.ProblemUnauthorized, http.StatusUnauthorized, "%s", detail))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// rateLimit answers 429 with the wait the limiter needs, instead of queueing the request.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	if s.limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := s.limiter.Reserve()
		if delay := res.Delay(); delay > 0 {
			res.Cancel()
			drain(r)
			p := newProblem(contractapi.ProblemRateLimited, http.StatusTooManyRequests, "too many requests; retry after the delay in Retry-After")
			p.RetryAfter = int(math.Ceil(delay.Seconds()))
			writeProblem(w, r, s.log, p)
			return
		}
		next.ServeHTTP(w, r)
	})
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
