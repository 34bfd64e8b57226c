package contractclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
)

// Every call names the tenant of its context in OSM-Tenant, so the provider budgets it with
// the namespace it is for; a call without one sends no header.
func TestEveryCallNamesItsTenant(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get(contractapi.TenantHeader))
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(hs.Close)
	gen, err := contractapi.NewClientWithResponses(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := contractclient.New(gen)
	calls := map[string]func(ctx context.Context) error{
		"Buy": func(ctx context.Context) error {
			_, _, err := c.Buy(ctx, "uid", contractclient.Request{Plan: "p"})
			return err
		},
		"Get":                func(ctx context.Context) error { _, err := c.Get(ctx, "c1"); return err },
		"Cancel":             func(ctx context.Context) error { return c.Cancel(ctx, "c1") },
		"AddKey":             func(ctx context.Context) error { _, err := c.AddKey(ctx, "c1", "k"); return err },
		"RemoveKey":          func(ctx context.Context) error { return c.RemoveKey(ctx, "c1", "AK") },
		"CreatePrincipal":    func(ctx context.Context) error { _, _, err := c.CreatePrincipal(ctx, "c1", "k"); return err },
		"GetPrincipal":       func(ctx context.Context) error { _, err := c.GetPrincipal(ctx, "c1", "p1"); return err },
		"DeletePrincipal":    func(ctx context.Context) error { return c.DeletePrincipal(ctx, "c1", "p1") },
		"AddPrincipalKey":    func(ctx context.Context) error { _, _, err := c.AddPrincipalKey(ctx, "c1", "p1", "k"); return err },
		"RemovePrincipalKey": func(ctx context.Context) error { return c.RemovePrincipalKey(ctx, "c1", "p1", "AK") },
		"PutTopic": func(ctx context.Context) error {
			_, err := c.PutTopic(ctx, "c1", "t", "http://127.0.0.1:1")
			return err
		},
		"ListTopics":  func(ctx context.Context) error { _, err := c.ListTopics(ctx, "c1"); return err },
		"DeleteTopic": func(ctx context.Context) error { return c.DeleteTopic(ctx, "c1", "t") },
		"BucketUsage": func(ctx context.Context) error { _, err := c.BucketUsage(ctx, "c1"); return err },
		"PutOIDCProvider": func(ctx context.Context) error {
			return c.PutOIDCProvider(ctx, "c1", contractclient.OIDCProvider{IssuerURL: "https://oidc.example"})
		},
		"PutRole": func(ctx context.Context) error {
			_, err := c.PutRole(ctx, "c1", "r", "system:serviceaccount:ns:sa", []contractclient.RoleGrant{{Bucket: "b", Access: "ReadOnly"}})
			return err
		},
		"DeleteRole": func(ctx context.Context) error { return c.DeleteRole(ctx, "c1", "r") },
		"SetBucketQuota": func(ctx context.Context) error {
			_, err := c.SetBucketQuota(ctx, "c1", "b", contractclient.Quota{MaxObjects: 1})
			return err
		},
	}
	for name, call := range calls {
		for _, tenant := range []string{"team-a", ""} {
			mu.Lock()
			seen = nil
			mu.Unlock()
			ctx := t.Context()
			if tenant != "" {
				ctx = contractclient.WithTenant(ctx, tenant)
			}
			if err := call(ctx); err == nil {
				t.Fatalf("%s: no error from a server answering 503", name)
			}
			mu.Lock()
			if len(seen) != 1 || seen[0][len(seen[0])-len(tenant)-1:] != " "+tenant {
				t.Errorf("%s with tenant %q: the server saw %q, want one request naming it", name, tenant, seen)
			}
			mu.Unlock()
		}
	}
}

// The reference server's answers to a tenant past its budgets reach a reconciler as what to do:
// past its rate, wait what Retry-After says; past what its contract may hold, a refusal that
// names the limit, looked at again after the resync period.
func TestATenantPastItsBudgetWaitsAsTheServerSays(t *testing.T) {
	c := startContractAPI(t, func(cfg *contractserver.Config) {
		cfg.TenantRequestsPerSecond, cfg.TenantBurst = 0.2, 3
		cfg.Limits.Principals = 1
	})
	ctx := contractclient.WithTenant(t.Context(), "team-a")
	contract, _, err := c.Buy(ctx, "uid-budget", contractclient.Request{Plan: "standard"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreatePrincipal(ctx, contract.ID, "uid-first"); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.CreatePrincipal(ctx, contract.ID, "uid-second")
	if v := contractclient.Classify(err); v.Action != contractclient.Terminal || v.Err == nil || !strings.Contains(v.Err.Summary(), "Limit exceeded") {
		t.Errorf("a principal past the contract's limit: %+v (%v), want a terminal refusal saying the limit", v, err)
	}
	_, err = c.Get(ctx, contract.ID)
	v := contractclient.Classify(err)
	if v.Action != contractclient.Requeue || v.After < time.Second || v.After > 5*time.Second {
		t.Errorf("a call past the tenant's rate: %+v (%v), want a requeue after the server's Retry-After (1 to 5 s)", v, err)
	}
	if _, err := c.Get(contractclient.WithTenant(t.Context(), "team-b"), contract.ID); err != nil {
		t.Errorf("another tenant's call: %v, want it answered", err)
	}
}
