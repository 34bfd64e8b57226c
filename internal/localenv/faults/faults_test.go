package faults

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestS3OperationNamesRequestsAsTheSDKDoes(t *testing.T) {
	tests := []struct{ method, target, want string }{
		{"GET", "/", "ListBuckets"},
		{"HEAD", "/b", "HeadBucket"},
		{"PUT", "/b", "CreateBucket"},
		{"DELETE", "/b", "DeleteBucket"},
		{"PUT", "/b?tagging", "PutBucketTagging"},
		{"GET", "/b?acl", "GetBucketAcl"},
		{"DELETE", "/b?policy", "DeleteBucketPolicy"},
		{"GET", "/b?list-type=2&max-keys=1", "ListObjectsV2"},
		{"PUT", "/b/some/key", "PutObject"},
	}
	for _, tt := range tests {
		if got := S3Operation(httptest.NewRequest(tt.method, tt.target, nil)); got != tt.want {
			t.Errorf("S3Operation(%s %s) = %q, want %q", tt.method, tt.target, got, tt.want)
		}
	}
	for target, want := range map[string]string{
		"/v1/contracts":                           "DELETE /v1/contracts",
		"/v1/contracts/abc/keys/AK1":              "DELETE /v1/contracts/{id}/keys/{accessKeyId}",
		"/v1/contracts/abc/principals/p1":         "DELETE /v1/contracts/{id}/principals/{principalId}",
		"/v1/contracts/abc/principals/p1/keys/AK": "DELETE /v1/contracts/{id}/principals/{principalId}/keys/{accessKeyId}",
	} {
		if got := ContractAPIOperation(httptest.NewRequest("DELETE", target, nil)); got != want {
			t.Errorf("ContractAPIOperation(%s) = %q, want %q", target, got, want)
		}
	}
}

// TestADroppedAnswerWasActedOn pins the fault that leaks: the server did the work, the client
// saw no answer.
func TestADroppedAnswerWasActedOn(t *testing.T) {
	var acted atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		acted.Add(1)
		_, _ = io.WriteString(w, "done")
	}))
	defer target.Close()
	inj := &Injector{Rate: 1, Kinds: []Kind{DropAnswer}, Match: func(op string) bool { return op == "CreateBucket" }, Operation: S3Operation}
	inj.Enable(true)
	p, err := NewProxy(target.URL, inj)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	req, _ := http.NewRequest(http.MethodPut, p.URL+"/b", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("CreateBucket got an answer (%s); want none", resp.Status)
	}
	if acted.Load() != 1 {
		t.Errorf("the server acted %d times, want 1", acted.Load())
	}
	resp, err := http.Get(p.URL + "/b?acl")
	if err != nil {
		t.Fatalf("an operation that does not match failed: %v", err)
	}
	_ = resp.Body.Close()
	if got := inj.Injected(); got["CreateBucket drop-answer"] != 1 || len(got) != 1 {
		t.Errorf("Injected() = %v", got)
	}
}

func TestNothingIsInjectedUntilEnabled(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer target.Close()
	inj := &Injector{Rate: 1, Kinds: []Kind{ServerError}}
	p, err := NewProxy(target.URL, inj)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, err := http.Get(p.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d before Enable, want 200", resp.StatusCode)
	}
}

// TestARefusalIsNotForwarded pins the refusals: the server never sees the request, and the
// client reads an S3 error code it will not retry at once.
func TestARefusalIsNotForwarded(t *testing.T) {
	var acted atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { acted.Add(1) }))
	defer target.Close()
	for _, tt := range []struct {
		kind   Kind
		status int
		code   string
	}{{Forbidden, http.StatusForbidden, "<Code>AccessDenied</Code>"}, {BadRequest, http.StatusBadRequest, "<Code>InvalidRequest</Code>"}} {
		inj := &Injector{Rate: 1}
		inj.SetKinds(tt.kind)
		inj.Enable(true)
		p, err := NewProxy(target.URL, inj)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(p.URL + "/b?acl")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		p.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.code) {
			t.Errorf("%s: answered %d %s, want %d with %s", tt.kind, resp.StatusCode, body, tt.status, tt.code)
		}
	}
	if acted.Load() != 0 {
		t.Errorf("the server saw %d refused requests, want none", acted.Load())
	}
}
