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

// Error is a call that did not succeed, classified so the caller knows whether to retry (the
// API was down or busy, or what answered was not the API) or to wait for the user (the API said
// no). What the API answered, its HTTP status and problem document, stays in this package:
// callers ask errors.Is with the sentinel errors above, or Retryable, RetryAfter, Detail and
// Summary, or hand the error to Classify.
//
// An Error with only Op and Cause is a call that got no answer (a lost connection, a timeout),
// which is retried: tests build it that way, and NewError and NewRefusal build the others.
type Error struct {
	// Op says what was attempted, for messages: "creating the contract".
	Op string
	// Cause is the transport error when there was no answer, or what was wrong with an answer
	// that could not be read.
	Cause error

	status     int                  // the HTTP status; 0 when the request got no answer
	problem    *contractapi.Problem // the RFC 7807 body, when the API sent one
	retryAfter time.Duration        // the API's Retry-After, when it sent one
	reason     error                // the sentinel the answer stands for (ErrNotFound, ...), nil when none
}

// NewError is a call that the API, or something in its place, answered with an HTTP status and
// no problem document of the API's own, for fakes and tests: NewError(op, 503) is an outage
// (retried), NewError(op, 409) a refusal (not retried), NewError(op, 404) a 404 that is not
// the API's (a wrong URL, a proxy: retried, never ErrNotFound). Status 0 is no answer at all.
func NewError(op string, status int) *Error { return &Error{Op: op, status: status} }

// NewRefusal is the API's own refusal of a call, for fakes and tests: reason is one of ErrNotFound,
// ErrHasBuckets, ErrLastKey, ErrPrincipalDeleted, ErrKeyRevoked or ErrNotSupported, which the
// error then Is, with the status the API answers it with; detail is the API's explanation (see
// Detail), "" for none. Any other reason is a programming error and panics.
func NewRefusal(op string, reason error, detail string) *Error {
	for _, r := range refusals {
		if r.err == reason {
			p := &contractapi.Problem{Type: r.problem, Status: r.status}
			if detail != "" {
				p.Detail = &detail
			}
			return &Error{Op: op, status: r.status, problem: p, reason: reason}
		}
	}
	panic(fmt.Sprintf("contractclient.NewRefusal: %v is not one of the API's refusals", reason))
}

// WithRetryAfter sets the wait the API asked for, as its Retry-After header does, and returns e.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	e.retryAfter = d
	return e
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %v", e.Op, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Op, e.Summary())
}

// Unwrap lets errors.Is find the cause, and ErrNotFound, ErrHasBuckets, ErrLastKey,
// ErrPrincipalDeleted, ErrKeyRevoked or ErrNotSupported when the API's answer says so.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	if e.reason != nil {
		out = append(out, e.reason)
	}
	return out
}

// Retryable reports whether the same request may succeed later: the API was unreachable, busy
// or failing, answered a success without a readable body, or it did not accept the operator's
// token (a fix to the operator's configuration, not to the resource's spec), or a 404 that is
// not the API's word on what was asked (a proxy, a wrong URL prefix). The API's own
// not-supported (501) is not: the provider cannot do it, however often asked.
func (e *Error) Retryable() bool {
	switch {
	case e.reason == ErrNotSupported:
		return false
	case e.status == 0, e.status >= 500:
		return true
	case e.status >= 200 && e.status < 300:
		return true // a success whose body could not be read (a gateway in the way): ask again
	case e.status == http.StatusTooManyRequests, e.status == http.StatusUnauthorized, e.status == http.StatusForbidden:
		return true
	case e.status == http.StatusNotFound && e.reason != ErrNotFound:
		return true
	}
	return false
}

// RetryAfter is how long the API asked the caller to wait before asking again (its
// Retry-After); 0 when it did not say.
func (e *Error) RetryAfter() time.Duration { return e.retryAfter }

// Detail is the API's own account of this failure (its problem document's detail), for people:
// why a second key pair is not supported, which plan is unknown. "" when the API gave none, or
// when what answered was not the API.
func (e *Error) Detail() string {
	if e.problem == nil || e.problem.Detail == nil {
		return ""
	}
	return *e.problem.Detail
}

// Summary is the failure in one phrase for a condition message: the API's title and detail,
// with the HTTP status; for a 404 that does not prove the resource gone, the question whether
// the contract API URL is right (it probably is not).
func (e *Error) Summary() string {
	switch {
	case e.problem == nil && e.Cause != nil:
		return e.Cause.Error()
	case e.status == 0:
		return "no answer"
	}
	status := fmt.Sprintf("HTTP %d", e.status)
	if e.status == http.StatusNotFound && e.reason != ErrNotFound {
		if e.problem == nil {
			status += " without the contract API's problem document"
		}
		status += "; is the contract API URL right?"
	}
	var said []string
	if e.problem != nil {
		for _, s := range []string{e.problem.Title, e.Detail()} {
			if s = strings.TrimSuffix(s, "."); s != "" {
				said = append(said, s)
			}
		}
	}
	if len(said) == 0 {
		return status
	}
	return fmt.Sprintf("%s (%s)", strings.Join(said, ": "), status)
}

// AsError unwraps an *Error from err.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// check turns the answer to a generated client call into nil (2xx) or an *Error. It reads the
// problem body itself, so it works the same for every operation. asked is the API path of what
// the call is about, as the server routes it (contractPath), which the API's not-found must name
// to prove it gone; "" when nothing the call asks about can be gone.
func check(op, asked string, resp *http.Response, body []byte) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	e := &Error{Op: op, status: resp.StatusCode}
	var p contractapi.Problem
	if json.Unmarshal(body, &p) == nil && p.Type != "" {
		e.problem = &p
	}
	if secs, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && secs > 0 {
		e.retryAfter = time.Duration(secs) * time.Second
	}
	e.reason = reasonOf(e.status, e.problem, asked)
	return e
}

// reasonOf is the sentinel error an answer stands for; nil for none. The API's not-found proves
// something gone only when its instance is the path asked about. A bare 404, a 404 of another
// type (no-such-route: a wrong URL prefix), or a not-found about another path comes from a wrong
// URL or from something in front of the API, and must never make a caller forget a contract, a
// key or a principal that still exists.
func reasonOf(status int, p *contractapi.Problem, asked string) error {
	if p == nil {
		return nil
	}
	if p.Type == contractapi.ProblemNotFound {
		if status == http.StatusNotFound && asked != "" && p.Instance != nil && *p.Instance == asked {
			return ErrNotFound
		}
		return nil
	}
	for _, r := range refusals {
		if r.problem == p.Type {
			return r.err
		}
	}
	return nil
}

// refusals are the API's problem types the sentinel errors stand for, with the status the API
// answers each with.
var refusals = []struct {
	err     error
	problem contractapi.ProblemType
	status  int
}{
	{ErrNotFound, contractapi.ProblemNotFound, http.StatusNotFound},
	{ErrHasBuckets, contractapi.ProblemContractHasBuckets, http.StatusConflict},
	{ErrLastKey, contractapi.ProblemLastKey, http.StatusConflict},
	{ErrPrincipalDeleted, contractapi.ProblemPrincipalDeleted, http.StatusGone},
	{ErrKeyRevoked, contractapi.ProblemKeyRevoked, http.StatusGone},
	{ErrNotSupported, contractapi.ProblemNotSupported, http.StatusNotImplemented},
}

// NothingStored reports whether err proves that the API stored nothing for a create request:
// it refused the request itself (invalid, an unknown plan or region). Anything else, even a
// refusal, may come after a contract was made.
func NothingStored(err error) bool {
	e, ok := AsError(err)
	if !ok || e.problem == nil {
		return false
	}
	switch e.problem.Type {
	case contractapi.ProblemInvalidRequest, contractapi.ProblemUnknownPlan, contractapi.ProblemUnsupportedRegion:
		return true
	}
	return false
}
