package contractserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// An unauthenticated flood meets the rate limiter first: past the burst it gets 429, so it costs
// no token compare, and it never reaches the backend.
func TestRateLimitComesBeforeAuthentication(t *testing.T) {
	backend := &fakeBackend{}
	ts := startServer(t, Config{Backend: backend, RequestsPerSecond: 0.1, Burst: 2})
	anonymous := newClient(t, ts.http.URL, "wrong-token")
	statuses := map[int]int{}
	for range 20 {
		resp, err := anonymous.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: "flood"}, contractapi.ContractRequest{Plan: "standard"})
		if err != nil {
			t.Fatalf("CreateContract: %v", err)
		}
		statuses[resp.StatusCode()]++
	}
	if statuses[http.StatusUnauthorized] != 2 || statuses[http.StatusTooManyRequests] != 18 {
		t.Errorf("20 unauthenticated requests with a burst of 2 got %v, want 2 answered 401 and 18 answered 429", statuses)
	}
	if n := backend.callCount(); n != 0 {
		t.Errorf("the backend was called %d times, want 0", n)
	}
}

// A body past the limit is answered 413 with a problem document, and reaches nothing behind it.
func TestRequestBodyLimit(t *testing.T) {
	backend := &fakeBackend{}
	ts := startServer(t, Config{Backend: backend, MaxRequestBytes: 200})
	create := func(displayName string) *contractapi.CreateContractResponse {
		t.Helper()
		resp, err := ts.client.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: "uid-" + itoa(len(displayName))},
			contractapi.ContractRequest{Plan: "standard", DisplayName: &displayName})
		if err != nil {
			t.Fatalf("CreateContract: %v", err)
		}
		return resp
	}
	if resp := create("small"); resp.JSON201 == nil {
		t.Fatalf("a small request: %s %s, want 201", resp.Status(), resp.Body)
	}
	calls := backend.callCount()
	resp := create(strings.Repeat("x", 200))
	wantProblem(t, "a body over the limit", resp.HTTPResponse, resp.ApplicationproblemJSON413, http.StatusRequestEntityTooLarge, contractapi.ProblemInvalidRequest)
	if p := resp.ApplicationproblemJSON413; p != nil && (p.Detail == nil || !strings.Contains(*p.Detail, "200 bytes")) {
		t.Errorf("413 detail %v, want it to name the limit", p.Detail)
	}
	if n := backend.callCount(); n != calls {
		t.Errorf("the backend was called %d times for the refused request", n-calls)
	}
}

func TestDefaultRequestBodyLimit(t *testing.T) {
	ts := startServer(t, Config{Backend: &fakeBackend{}})
	body := `{"plan":"standard","displayName":"` + strings.Repeat("x", DefaultMaxRequestBytes) + `"}`
	resp, err := ts.client.CreateContractWithBodyWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: "uid-big"}, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("CreateContract: %v", err)
	}
	wantProblem(t, "a 64 KiB display name", resp.HTTPResponse, resp.ApplicationproblemJSON413, http.StatusRequestEntityTooLarge, contractapi.ProblemInvalidRequest)
}
