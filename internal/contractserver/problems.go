package contractserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// backendRetryAfter is what a 503 tells the caller to wait: long enough for a restarting
// gateway, short enough that a controller's first retry usually succeeds.
const backendRetryAfter = 5

// problem is an error the API reports as an RFC 7807 document. Handlers return it; the strict
// server's error hook writes it.
type problem struct {
	Type       contractapi.ProblemType
	Status     int
	Detail     string
	RetryAfter int // seconds; sent as Retry-After when set
	cause      error
}

func (p *problem) Error() string {
	if p.cause != nil {
		return fmt.Sprintf("%s: %s: %v", p.Type, p.Detail, p.cause)
	}
	return fmt.Sprintf("%s: %s", p.Type, p.Detail)
}

func (p *problem) Unwrap() error { return p.cause }

// problemTitles are fixed per type, as RFC 7807 asks.
var problemTitles = map[contractapi.ProblemType]string{
	contractapi.ProblemUnauthorized:        "Unauthorized",
	contractapi.ProblemInvalidRequest:      "Invalid request",
	contractapi.ProblemNotFound:            "Not found",
	contractapi.ProblemNoSuchRoute:         "No such route",
	contractapi.ProblemUnknownPlan:         "Unknown plan",
	contractapi.ProblemUnsupportedRegion:   "Unsupported region",
	contractapi.ProblemLimitExceeded:       "Limit exceeded",
	contractapi.ProblemIdempotencyKeyReuse: "Idempotency key reused with a different request",
	contractapi.ProblemContractHasBuckets:  "Contract still owns buckets",
	contractapi.ProblemLastKey:             "Last key",
	contractapi.ProblemContractCancelled:   "Contract cancelled",
	contractapi.ProblemPrincipalDeleted:    "Principal deleted",
	contractapi.ProblemKeyRevoked:          "Key revoked",
	contractapi.ProblemNotSupported:        "Not supported by this provider",
	contractapi.ProblemRateLimited:         "Too many requests",
	contractapi.ProblemBackendUnavailable:  "Storage backend unavailable",
	contractapi.ProblemInternal:            "Internal server error",
}

func newProblem(t contractapi.ProblemType, status int, format string, args ...any) *problem {
	return &problem{Type: t, Status: status, Detail: fmt.Sprintf(format, args...)}
}

// backendProblem classifies an error from the Backend. Anything the backend does not name is
// treated as the storage system being unavailable: retrying is always safe, because every
// backend call is idempotent.
func backendProblem(op string, err error) *problem {
	switch {
	case errors.Is(err, ErrAccountHasBuckets):
		return newProblem(contractapi.ProblemContractHasBuckets, http.StatusConflict,
			"the contract's account still owns buckets; delete them or cancel with force=true")
	case errors.Is(err, ErrNotSupported):
		p := newProblem(contractapi.ProblemNotSupported, http.StatusNotImplemented, "%s", err.Error())
		p.cause = err
		return p
	}
	p := newProblem(contractapi.ProblemBackendUnavailable, http.StatusServiceUnavailable,
		"%s failed at the storage backend; repeat the request later", op)
	p.RetryAfter = backendRetryAfter
	p.cause = err
	return p
}

// writeProblem writes err as problem+json; an error that is not a problem is an internal one.
func writeProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var p *problem
	if !errors.As(err, &p) {
		p = &problem{Type: contractapi.ProblemInternal, Status: http.StatusInternalServerError,
			Detail: "the server failed; repeating the request is safe", cause: err}
	}
	if p.Status >= 500 {
		log.Error("Request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "error", err)
	}
	instance := r.URL.Path
	body := contractapi.Problem{
		Type:     p.Type,
		Title:    problemTitles[p.Type],
		Status:   p.Status,
		Detail:   &p.Detail,
		Instance: &instance,
	}
	data, mErr := json.Marshal(body)
	if mErr != nil {
		http.Error(w, "encoding problem", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/problem+json")
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(data)
}
