package contractclient

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

func TestCheckClassifiesTheAPIsAnswers(t *testing.T) {
	problem := func(status, typ, title, detail string) []byte {
		return []byte(`{"type":"https://osm.dev/problems/` + typ + `","title":"` + title + `","status":` + status + `,"detail":"` + detail + `"}`)
	}
	// notFound is a not-found problem about instance; the test asks about /v1/contracts/x.
	notFound := func(instance string) []byte {
		return []byte(`{"type":"https://osm.dev/problems/not-found","title":"Not found","status":404,"detail":"no contract x","instance":"` + instance + `"}`)
	}
	const hint = "; is the contract API URL right?"
	tests := []struct {
		name   string
		status int
		header http.Header
		body   []byte
		want   *classification
	}{
		{name: "2xx is success", status: 201},
		{name: "a refusal with a problem body is not retried", status: 422,
			body: problem("422", "unknown-plan", "Unknown plan.", "plan 'gold' is not offered."),
			want: &classification{Summary: "Unknown plan: plan 'gold' is not offered (HTTP 422)", Detail: "plan 'gold' is not offered."}},
		{name: "the API's own not-found about the path asked for proves the contract gone", status: 404,
			body: notFound("/v1/contracts/x"),
			want: &classification{NotFound: true, Summary: "Not found: no contract x (HTTP 404)", Detail: "no contract x"}},
		{name: "a not-found about another path proves nothing, and is retried", status: 404,
			body: notFound("/v1/contracts/y"),
			want: &classification{Retryable: true, Summary: "Not found: no contract x (HTTP 404" + hint + ")", Detail: "no contract x"}},
		{name: "a not-found about the path under a prefix the API does not serve proves nothing", status: 404,
			body: notFound("/api/v1/contracts/x"),
			want: &classification{Retryable: true, Summary: "Not found: no contract x (HTTP 404" + hint + ")", Detail: "no contract x"}},
		{name: "a not-found that names no path proves nothing", status: 404,
			body: problem("404", "not-found", "Not found", "no contract x"),
			want: &classification{Retryable: true, Summary: "Not found: no contract x (HTTP 404" + hint + ")", Detail: "no contract x"}},
		{name: "no-such-route (a wrong URL prefix) is not a missing contract, and is retried", status: 404,
			body: problem("404", "no-such-route", "No such route", "this API has no route GET /api/v1/contracts/x"),
			want: &classification{Retryable: true, Summary: "No such route: this API has no route GET /api/v1/contracts/x (HTTP 404" + hint + ")",
				Detail: "this API has no route GET /api/v1/contracts/x"}},
		{name: "a bare 404 (a proxy, a wrong URL) is not the API's word, and is retried", status: 404,
			want: &classification{Retryable: true, Summary: "HTTP 404 without the contract API's problem document" + hint}},
		{name: "a 404 whose problem is of another type is not a missing contract", status: 404,
			body: problem("404", "internal", "Oops.", ""),
			want: &classification{Retryable: true, Summary: "Oops (HTTP 404" + hint + ")"}},
		{name: "a not-found with another status is not the API's not-found", status: 400,
			body: notFound("/v1/contracts/x"),
			want: &classification{Summary: "Not found: no contract x (HTTP 400)", Detail: "no contract x"}},
		{name: "an account with buckets is told apart", status: 409,
			body: problem("409", "contract-has-buckets", "Contract has buckets.", "2 buckets."),
			want: &classification{HasBuckets: true, Summary: "Contract has buckets: 2 buckets (HTTP 409)", Detail: "2 buckets."}},
		{name: "the last key of a principal is told apart", status: 409,
			body: problem("409", "last-key", "Last key.", "key K is the only key of principal p."),
			want: &classification{LastKey: true, Summary: "Last key: key K is the only key of principal p (HTTP 409)", Detail: "key K is the only key of principal p."}},
		{name: "a principal deleted since its idempotency key was used is told apart, and not retried", status: 410,
			body: problem("410", "principal-deleted", "Principal deleted.", "principal p was deleted."),
			want: &classification{PrincipalDeleted: true, Summary: "Principal deleted: principal p was deleted (HTTP 410)", Detail: "principal p was deleted."}},
		{name: "a key revoked since its idempotency key was used is told apart, and not retried", status: 410,
			body: problem("410", "key-revoked", "Key revoked.", "key K was revoked."),
			want: &classification{KeyRevoked: true, Summary: "Key revoked: key K was revoked (HTTP 410)", Detail: "key K was revoked."}},
		{name: "what the provider cannot do is told apart, and not retried although it is a 5xx", status: 501,
			body: problem("501", "not-supported", "Not supported by this provider.", "versitygw accounts hold one key pair."),
			want: &classification{NotSupported: true, Summary: "Not supported by this provider: versitygw accounts hold one key pair (HTTP 501)",
				Detail: "versitygw accounts hold one key pair."}},
		{name: "a bare 501 (a proxy) is not the API's word, and is retried", status: 501,
			want: &classification{Retryable: true, Summary: "HTTP 501"}},
		{name: "an outage is retried after Retry-After", status: 503, header: http.Header{"Retry-After": {"5"}},
			want: &classification{Retryable: true, RetryAfter: 5 * time.Second, Summary: "HTTP 503"}},
		{name: "throttling is retried", status: 429, want: &classification{Retryable: true, Summary: "HTTP 429"}},
		{name: "a rejected token is the operator's to fix, so it is retried", status: 401,
			want: &classification{Retryable: true, Summary: "HTTP 401"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: tt.header}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			err := check("reading contract x", "/v1/contracts/x", resp, tt.body)
			if (err != nil) != (tt.want != nil) {
				t.Fatalf("error = %v, want error %v", err, tt.want != nil)
			}
			if err == nil {
				return
			}
			if diff := cmp.Diff(tt.want, classify(t, err)); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
		})
	}
	resp := &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}}
	if err := check("creating the contract", "", resp, notFound("/v1/contracts")); errors.Is(err, ErrNotFound) {
		t.Errorf("a not-found for a call about nothing that can be gone is ErrNotFound: %v", err)
	}
}

// classification is what a caller can learn from an error.
type classification struct {
	Retryable, NotFound, HasBuckets, LastKey, PrincipalDeleted, KeyRevoked, NotSupported bool
	RetryAfter                                                                           time.Duration
	Summary, Detail                                                                      string
}

func classify(t *testing.T, err error) *classification {
	t.Helper()
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %T is not an *Error", err)
	}
	return &classification{Retryable: e.Retryable(), NotFound: errors.Is(err, ErrNotFound),
		HasBuckets: errors.Is(err, ErrHasBuckets), LastKey: errors.Is(err, ErrLastKey),
		PrincipalDeleted: errors.Is(err, ErrPrincipalDeleted), KeyRevoked: errors.Is(err, ErrKeyRevoked),
		NotSupported: errors.Is(err, ErrNotSupported), RetryAfter: e.RetryAfter(), Summary: e.Summary(), Detail: e.Detail()}
}

// A fake's errors are the ones the client makes of the same answers, so a reconciler tested
// with a fake meets what it meets in production. The title is the one thing a fake leaves out.
func TestFakesBuildTheErrorsTheClientReturns(t *testing.T) {
	const op = "revoking key K of contract c1"
	answer := func(status int, retryAfter string, body string) error {
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		if retryAfter != "" {
			resp.Header.Set("Retry-After", retryAfter)
		}
		return check(op, "/v1/contracts/c1/keys/K", resp, []byte(body))
	}
	refusal := func(status int, typ contractapi.ProblemType) error {
		return answer(status, "", `{"type":"`+string(typ)+`","status":`+strconv.Itoa(status)+`,"detail":"why.","instance":"/v1/contracts/c1/keys/K"}`)
	}
	tests := []struct {
		name       string
		fake, real error
	}{
		{"an outage with Retry-After", NewError(op, 503).WithRetryAfter(5 * time.Second), answer(503, "5", "")},
		{"a bare refusal", NewError(op, 409), answer(409, "", "")},
		{"a bare 404", NewError(op, 404), answer(404, "", "")},
		{"no answer", NewError(op, 0), &Error{Op: op, Cause: nil}},
		{"the API's not-found", NewRefusal(op, ErrNotFound, "why."), refusal(404, contractapi.ProblemNotFound)},
		{"an account with buckets", NewRefusal(op, ErrHasBuckets, "why."), refusal(409, contractapi.ProblemContractHasBuckets)},
		{"the last key", NewRefusal(op, ErrLastKey, "why."), refusal(409, contractapi.ProblemLastKey)},
		{"a deleted principal", NewRefusal(op, ErrPrincipalDeleted, "why."), refusal(410, contractapi.ProblemPrincipalDeleted)},
		{"a revoked key", NewRefusal(op, ErrKeyRevoked, "why."), refusal(410, contractapi.ProblemKeyRevoked)},
		{"not supported", NewRefusal(op, ErrNotSupported, "why."), refusal(501, contractapi.ProblemNotSupported)},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(classify(t, tt.real), classify(t, tt.fake)); diff != "" {
			t.Errorf("%s: the fake's error differs from the client's (-client +fake):\n%s", tt.name, diff)
		}
	}
	if e := NewRefusal(op, ErrNotSupported, ""); e.Detail() != "" || e.Summary() != "HTTP 501" {
		t.Errorf("a refusal without detail: Detail %q, Summary %q; want none and HTTP 501", e.Detail(), e.Summary())
	}
	defer func() {
		if recover() == nil {
			t.Error("NewRefusal with a reason that is not the API's did not panic")
		}
	}()
	_ = NewRefusal(op, errors.New("something else"), "")
}

func TestAnUnansweredCallIsRetried(t *testing.T) {
	e := &Error{Op: "reading contract x", Cause: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	if !e.Retryable() {
		t.Error("a call without an answer must be retried")
	}
	if errors.Is(e, ErrNotFound) {
		t.Error("a call without an answer must never read as a missing contract")
	}
	if got, want := e.Error(), "reading contract x: dial tcp 127.0.0.1:1: connect: connection refused"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestOnlyARefusedRequestProvesNothingWasBought(t *testing.T) {
	problem := func(status int, typ contractapi.ProblemType) error {
		return &Error{Op: "creating the contract", status: status, problem: &contractapi.Problem{Type: typ, Status: status}}
	}
	tests := []struct {
		name          string
		err           error
		nothingStored bool
	}{
		{"an invalid request", problem(400, contractapi.ProblemInvalidRequest), true},
		{"an unknown plan", problem(422, contractapi.ProblemUnknownPlan), true},
		{"an unsupported region", problem(422, contractapi.ProblemUnsupportedRegion), true},
		{"a key used before with another request", problem(422, contractapi.ProblemIdempotencyKeyReuse), false},
		{"a refusal without the API's problem", NewError("creating the contract", 400), false},
		{"a success without a readable contract (a gateway in the way)", &Error{Op: "creating the contract", status: 201,
			Cause: errors.New("HTTP 201 without a contract in the body")}, false},
		{"no answer", &Error{Op: "creating the contract", Cause: errors.New("EOF")}, false},
	}
	for _, tt := range tests {
		if got := NothingStored(tt.err); got != tt.nothingStored {
			t.Errorf("%s: NothingStored = %v, want %v", tt.name, got, tt.nothingStored)
		}
	}
	if e := (&Error{status: 201, Cause: errors.New("no body")}); !e.Retryable() {
		t.Error("a success without a readable contract must be asked again")
	}
}
