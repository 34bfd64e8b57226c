package contractserver

import (
	"net/http"
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
