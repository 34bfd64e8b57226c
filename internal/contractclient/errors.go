package contractclient

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

var (
	// ErrNotFound: the API itself says it knows no such contract, or no such principal or key
	// of it (problem type not-found). A bare 404 from a wrong URL or a proxy is not this: it is
	// an *Error that is retried and never taken to mean that a contract is gone.
	ErrNotFound = errors.New("the provider knows no such contract or principal")
	// ErrHasBuckets: the account still owns buckets, so it is not cancelled without force.
	ErrHasBuckets = errors.New("the contract still owns buckets")
	// ErrLastKey: the key pair is the only one of its principal (or contract), so it is not
	// revoked; another must be added first.
	ErrLastKey = errors.New("the last key pair cannot be revoked")
	// ErrPrincipalDeleted: the principal made for this idempotency key was deleted since; a new
	// principal needs a new key.
	ErrPrincipalDeleted = errors.New("the principal made for this idempotency key was deleted")
	// ErrKeyRevoked: the key pair made for this idempotency key was revoked since; a new key
	// pair needs a new idempotency key.
	ErrKeyRevoked = errors.New("the key pair made for this idempotency key was revoked")
	// ErrNotSupported: the provider's backend cannot do this at all (problem type
	// not-supported), for example a second key pair on versitygw, whose accounts hold one.
	// Asking again does not help.
	ErrNotSupported = errors.New("the provider cannot do this")
)

// Error is a call that did not succeed, classified so the reconciler knows whether to retry (the
// API was down or busy) or to wait for the user (the API said no).
type Error struct {
	// Op says what was attempted, for messages: "creating the contract".
	Op string
	// Status is the HTTP status; 0 when the request never got an answer.
	Status int
	// Problem is the RFC 7807 body, when the API sent one.
	Problem *contractapi.Problem
	// RetryAfter is the API's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Cause is the transport error when there was no answer.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %v", e.Op, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Op, e.Summary())
}

// Unwrap lets errors.Is find the cause, and ErrNotFound, ErrHasBuckets, ErrLastKey,
// ErrPrincipalDeleted, ErrKeyRevoked or ErrNotSupported when the API's problem type says so.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	switch {
	case e.hasType(contractapi.ProblemNotFound) && e.Status == http.StatusNotFound:
		out = append(out, ErrNotFound)
	case e.hasType(contractapi.ProblemContractHasBuckets):
		out = append(out, ErrHasBuckets)
	case e.hasType(contractapi.ProblemLastKey):
		out = append(out, ErrLastKey)
	case e.hasType(contractapi.ProblemPrincipalDeleted):
		out = append(out, ErrPrincipalDeleted)
	case e.hasType(contractapi.ProblemKeyRevoked):
		out = append(out, ErrKeyRevoked)
	case e.hasType(contractapi.ProblemNotSupported):
		out = append(out, ErrNotSupported)
	}
	return out
}

// Retryable reports whether the same request may succeed later: the API was unreachable, busy
// or failing, answered a success without a readable body, or it did not accept the operator's token (a fix to the operator's configuration,
// not to the resource's spec), or a 404 that is not the API's own (a proxy, a wrong prefix).
// The API's own not-supported (501) is not: the provider cannot do it, however often asked.
func (e *Error) Retryable() bool {
	switch {
	case e.hasType(contractapi.ProblemNotSupported):
		return false
	case e.Status == 0, e.Status >= 500:
		return true
	case e.Status >= 200 && e.Status < 300:
		return true // a success whose body could not be read (a gateway in the way): ask again
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusUnauthorized, e.Status == http.StatusForbidden:
		return true
	case e.Status == http.StatusNotFound && !e.hasType(contractapi.ProblemNotFound):
		return true
	}
	return false
}

func (e *Error) hasType(t contractapi.ProblemType) bool {
	return e.Problem != nil && e.Problem.Type == t
}

// Summary is the API's own account of the failure, for a condition message.
func (e *Error) Summary() string {
	if e.Problem == nil {
		if e.Status == http.StatusNotFound {
			return "HTTP 404 without the contract API's problem document (is the contract API URL right?)"
		}
		if e.Status == 0 && e.Cause != nil {
			return e.Cause.Error()
		}
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	msg := strings.TrimSuffix(e.Problem.Title, ".")
	if e.Problem.Detail != nil && *e.Problem.Detail != "" {
		msg += ": " + strings.TrimSuffix(*e.Problem.Detail, ".")
	}
	return fmt.Sprintf("%s (HTTP %d)", msg, e.Status)
}

// AsError unwraps an *Error from err.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// check turns the answer to a generated client call into nil (2xx) or an *Error. It reads the
// problem body itself, so it works the same for every operation.
func check(op string, resp *http.Response, body []byte) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	e := &Error{Op: op, Status: resp.StatusCode}
	var p contractapi.Problem
	if json.Unmarshal(body, &p) == nil && p.Type != "" {
		e.Problem = &p
	}
	if secs, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}

// NothingStored reports whether err proves that the API stored nothing for a create request:
// it refused the request itself (invalid, an unknown plan or region). Anything else, even a
// refusal, may come after a contract was made.
func NothingStored(err error) bool {
	e, ok := AsError(err)
	if !ok || e.Problem == nil {
		return false
	}
	switch e.Problem.Type {
	case contractapi.ProblemInvalidRequest, contractapi.ProblemUnknownPlan, contractapi.ProblemUnsupportedRegion:
		return true
	}
	return false
}
