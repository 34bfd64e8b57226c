package contractserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// A path or method the API does not have is no-such-route, never not-found: a client with a
// wrong URL prefix (an ingress that does not strip /api) must not read its contracts as gone.
func TestAnUnknownRouteIsNotANotFound(t *testing.T) {
	ts := startServer(t, Config{Backend: &fakeBackend{}})
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/contracts/c1"},
		{http.MethodDelete, "/api/v1/contracts/c1"},
		{http.MethodDelete, "/api/v1/contracts/c1/keys/AK1"},
		{http.MethodDelete, "/api/v1/contracts/c1/principals/p1"},
		{http.MethodGet, "/v2/contracts/c1"},
		{http.MethodPut, "/v1/contracts/c1"},
		{http.MethodGet, "/"},
	} {
		resp, p := rawRequest(t, ts, req.method, req.path)
		if resp.StatusCode != http.StatusNotFound || p.Type != contractapi.ProblemNoSuchRoute || p.Title == "" {
			t.Errorf("%s %s: %d %s %q, want 404 no-such-route with a title", req.method, req.path, resp.StatusCode, p.Type, p.Title)
		}
		if detail := ptrValue(p.Detail); !strings.Contains(detail, req.method+" "+req.path) || !strings.Contains(detail, "URL") {
			t.Errorf("%s %s: detail %q, want it to name the route and point at the URL", req.method, req.path, detail)
		}
	}
}

// The API's not-found names what was asked for: instance is the request path, with the id.
func TestNotFoundNamesWhatWasAskedFor(t *testing.T) {
	ts := startServer(t, Config{Backend: &fakeBackend{}})
	c := createContract(t, ts.client, "uid-1", contractapi.ContractRequest{Plan: "standard"})
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/v1/contracts/nosuchcontract"},
		{http.MethodDelete, "/v1/contracts/nosuchcontract"},
		{http.MethodDelete, "/v1/contracts/nosuchcontract/keys/AK1"},
		{http.MethodDelete, "/v1/contracts/" + c.Id + "/keys/NOSUCHKEY"},
	} {
		resp, p := rawRequest(t, ts, req.method, req.path)
		if resp.StatusCode != http.StatusNotFound || p.Type != contractapi.ProblemNotFound {
			t.Errorf("%s %s: %d %s, want 404 not-found", req.method, req.path, resp.StatusCode, p.Type)
		}
		if got := ptrValue(p.Instance); got != req.path {
			t.Errorf("%s %s: instance %q, want the path asked for", req.method, req.path, got)
		}
	}
}

// rawRequest sends an authenticated request without a body and reads the problem it answers.
func rawRequest(t *testing.T, ts *testServer, method, path string) (*http.Response, contractapi.Problem) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s %s: %s with Content-Type %q, want a problem document", method, path, resp.Status, ct)
	}
	var p contractapi.Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatalf("%s %s: decoding the problem: %v", method, path, err)
	}
	return resp, p
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
