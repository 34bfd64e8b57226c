package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// apiError is a contract API call that did not succeed, classified so the reconciler knows
// whether to retry (the API was down or busy) or to wait for the user (the API said no).
type apiError struct {
	// op says what was attempted, for messages: "creating the contract".
	op string
	// status is the HTTP status; 0 when the request never got an answer.
	status int
	// problem is the RFC 7807 body, when the API sent one.
	problem *contractapi.Problem
	// retryAfter is the API's Retry-After, when it sent one.
	retryAfter time.Duration
	// cause is the transport error when there was no answer.
	cause error
}

func (e *apiError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %v", e.op, e.cause)
	}
	return fmt.Sprintf("%s: %s", e.op, e.summary())
}

func (e *apiError) Unwrap() error { return e.cause }

// retryable reports whether retrying the same request later may succeed: the API was
// unreachable, busy or failing, or it did not accept the operator's token (a fix to the
// operator's configuration, not to the resource's spec).
func (e *apiError) retryable() bool {
	switch {
	case e.status == 0, e.status >= 500:
		return true
	case e.status == http.StatusTooManyRequests, e.status == http.StatusUnauthorized, e.status == http.StatusForbidden:
		return true
	}
	return false
}

// hasType reports whether the API answered with the given problem type.
func (e *apiError) hasType(t contractapi.ProblemType) bool {
	return e.problem != nil && e.problem.Type == t
}

// summary is the API's own account of the failure, for a condition message.
func (e *apiError) summary() string {
	if e.problem == nil {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	msg := strings.TrimSuffix(e.problem.Title, ".")
	if e.problem.Detail != nil && *e.problem.Detail != "" {
		msg += ": " + strings.TrimSuffix(*e.problem.Detail, ".")
	}
	return fmt.Sprintf("%s (HTTP %d)", msg, e.status)
}

// checkResponse turns the answer to a generated client call into nil (2xx) or an *apiError. It
// reads the problem body itself, so it works the same for every operation.
func checkResponse(op string, resp *http.Response, body []byte) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	e := &apiError{op: op, status: resp.StatusCode}
	var p contractapi.Problem
	if json.Unmarshal(body, &p) == nil && p.Type != "" {
		e.problem = &p
	}
	if secs, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && secs > 0 {
		e.retryAfter = time.Duration(secs) * time.Second
	}
	return e
}

// asAPIError unwraps an *apiError from err.
func asAPIError(err error) (*apiError, bool) {
	var e *apiError
	ok := errors.As(err, &e)
	return e, ok
}
