package contractserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// A flood without the token cannot starve the clients that hold it: authentication comes
// first, failed requests share a small budget of their own (429 past it), and each
// authenticated client is limited on its own budget. Nothing of the flood reaches the backend.
func TestAFloodWithoutTheTokenDoesNotStarveTheClient(t *testing.T) {
	backend := &fakeBackend{}
	ts := startServer(t, Config{Backend: backend, RequestsPerSecond: 0.1, Burst: 2})
	anonymous := newClient(t, ts.http.URL, "wrong-token")
	get := func(c contractapi.ClientWithResponsesInterface) *contractapi.GetContractResponse {
		t.Helper()
		resp, err := c.GetContractWithResponse(t.Context(), "none")
		if err != nil {
			t.Fatalf("GetContract: %v", err)
		}
		return resp
	}
	statuses := map[int]int{}
	for range 3 * failedAuthBurst {
		resp := get(anonymous)
		statuses[resp.StatusCode()]++
		if p := resp.ApplicationproblemJSON429; p != nil && !strings.Contains(ptrValue(p.Detail), "bearer token") {
			t.Errorf("429 to a wrong token says %q, want it to say the token is the trouble", ptrValue(p.Detail))
		}
	}
	// The failures' budget may refill by one while the loop runs.
	if n := statuses[http.StatusUnauthorized]; n < failedAuthBurst || n > failedAuthBurst+1 || n+statuses[http.StatusTooManyRequests] != 3*failedAuthBurst {
		t.Errorf("%d requests with a wrong token got %v, want %d answered 401 and the rest 429", 3*failedAuthBurst, statuses, failedAuthBurst)
	}

	for i := range 2 {
		if resp := get(ts.client); resp.StatusCode() != http.StatusNotFound {
			t.Fatalf("request %d of the client with the token after the flood: %s, want the 404 of an unknown contract (its own burst of 2)", i+1, resp.Status())
		}
	}
	resp := get(ts.client)
	wantProblem(t, "the client's third request", resp.HTTPResponse, resp.ApplicationproblemJSON429, http.StatusTooManyRequests, contractapi.ProblemRateLimited)
	if ra := resp.HTTPResponse.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("429 without a Retry-After: %q", ra)
	}
	if n := backend.callCount(); n != 0 {
		t.Errorf("the backend was called %d times, want 0", n)
	}
}

// Each client has a budget of its own, and a client gone long enough to have its whole burst
// back is forgotten, which changes nothing for it.
func TestEachClientHasItsOwnBudget(t *testing.T) {
	l := newLimiters(1, 2)
	now := time.Now()
	delay := func(key string, at time.Time) time.Duration { return take(at, l.get(key, at)) }
	for i, want := range []time.Duration{0, 0, time.Second} {
		if got := delay("a", now); got != want {
			t.Errorf("request %d of a: delay %s, want %s", i+1, got, want)
		}
	}
	if got := delay("b", now); got != 0 {
		t.Errorf("b after a spent its budget: delay %s, want 0", got)
	}
	later := now.Add(2 * time.Second)
	if got := delay("c", later); got != 0 || len(l.byKey) != 1 {
		t.Errorf("c two seconds later: delay %s and %d clients remembered, want 0 and only c (a and b have their burst back)", got, len(l.byKey))
	}
	for i := range 2 {
		if got := delay("a", later); got != 0 {
			t.Errorf("request %d of a after two idle seconds: delay %s, want its whole burst back", i+1, got)
		}
	}
}

// A request refused by one of its budgets takes nothing from the other: a tenant past its
// budget does not spend its client's, which the other tenants share.
func TestARefusedRequestTakesFromNoBudget(t *testing.T) {
	clients, tenants := newLimiters(1, 3), newLimiters(1, 1)
	now := time.Now()
	client, a := clients.get("operator", now), tenants.get("a", now)
	if d := take(now, client, a); d != 0 {
		t.Fatalf("tenant a's first request: delay %s, want 0", d)
	}
	for range 5 {
		if d := take(now, client, a); d != time.Second {
			t.Fatalf("tenant a past its burst: delay %s, want a second", d)
		}
	}
	for _, tenant := range []string{"b", "c"} {
		if d := take(now, client, tenants.get(tenant, now)); d != 0 {
			t.Errorf("tenant %s after a's refused requests: delay %s, want 0 (the client's burst of 3 has 2 left)", tenant, d)
		}
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

// A client that sends its headers and then trickles its body holds nothing past drainTimeout
// when it is refused before the handler: the refusal reads the body for drainTimeout at most,
// answers, and the connection is closed, over a real listener on 127.0.0.1.
func TestASlowBodyIsCutOffWhenRefused(t *testing.T) {
	ts := startServer(t, Config{Backend: &fakeBackend{}, RequestsPerSecond: 0.001, Burst: 1})
	returned := make(chan time.Time, 8)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.srv.Handler().ServeHTTP(w, r)
		select {
		case returned <- time.Now():
		default:
		}
	}))
	t.Cleanup(hs.Close)
	// The client with the token spends its one request, so its next one is refused too.
	if resp, err := ts.client.GetContractWithResponse(t.Context(), "none"); err != nil || resp.StatusCode() != http.StatusNotFound {
		t.Fatalf("spending the budget: %v %v", resp, err)
	}

	for _, tc := range []struct {
		name, token string
		status      int
	}{
		{"a wrong token", "wrong-token", http.StatusUnauthorized},
		{"a client past its budget", testToken, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", hs.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			start := time.Now()
			_, err = fmt.Fprintf(conn, "POST /v1/contracts HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nIdempotency-Key: slow\r\n"+
				"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{", hs.Listener.Addr(), tc.token)
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			go func() { // one byte every 50 ms: 60,000 bytes would take 50 minutes
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()

			bound := drainTimeout + time.Second
			if err := conn.SetReadDeadline(start.Add(bound + time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer %s after the request began, while its body trickles: %v", time.Since(start).Round(time.Millisecond), err)
			}
			if resp.StatusCode != tc.status || !resp.Close {
				t.Errorf("answer %s, close %v; want %d and the connection closed", resp.Status, resp.Close, tc.status)
			}
			select {
			case at := <-returned:
				if d := at.Sub(start); d > bound {
					t.Errorf("the handler returned after %s, want at most %s", d, bound)
				}
			case <-time.After(bound):
				t.Fatalf("the handler still runs %s after the request began", bound)
			}
			if _, err := io.Copy(io.Discard, br); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("the server kept the connection open past %s", bound+time.Second)
				}
			}
		})
	}
}
