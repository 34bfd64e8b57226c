package contractserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// TestRolesWithoutSTS: a backend without STS (versitygw) answers every role call 501, so the
// operator can say AuthenticationUnsupported, and is never called for one.
func TestRolesWithoutSTS(t *testing.T) {
	plain := &fakeBackend{}
	ts := startServer(t, Config{Backend: plain, OIDCIssuers: allow(t, "https://oidc.example")})
	contract := createContract(t, ts.client, "uid-no-sts", contractapi.ContractRequest{Plan: "standard"})
	calls := plain.callCount()
	ctx := t.Context()

	p, err := ts.client.PutOIDCProviderWithResponse(ctx, contract.Id, contractapi.OIDCProviderRequest{
		IssuerUrl: "https://oidc.example", Audiences: []string{"osm"}, Thumbprints: []string{strings.Repeat("a", 40)}})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "putOIDCProvider", p.HTTPResponse, p.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	if d := p.ApplicationproblemJSON501.Detail; d == nil || !strings.Contains(*d, "has no STS") {
		t.Errorf("detail %v does not say the backend has no STS", d)
	}
	r, err := ts.client.PutRoleWithResponse(ctx, contract.Id, "reader", contractapi.RoleRequest{
		Subject: "system:serviceaccount:ns:sa", Grants: []contractapi.RoleGrant{{Bucket: "photos", Access: contractapi.ReadOnly}}})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "putRole", r.HTTPResponse, r.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	d, err := ts.client.DeleteRoleWithResponse(ctx, contract.Id, "reader")
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "deleteRole", d.HTTPResponse, d.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	if plain.callCount() != calls {
		t.Error("a backend without STS was called for a role")
	}
}

// TestRoleValidation: what a caller writes is checked before anything is recorded or asked.
func TestRoleValidation(t *testing.T) {
	prefix := func(s string) *string { return &s }
	grant := contractapi.RoleGrant{Bucket: "photos", Access: contractapi.ReadOnly}
	for name, tc := range map[string]struct {
		role string
		req  contractapi.RoleRequest
	}{
		"a subject that is no ServiceAccount's": {"r", contractapi.RoleRequest{Subject: "system:admin", Grants: []contractapi.RoleGrant{grant}}},
		"a subject with a wildcard":             {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:*", Grants: []contractapi.RoleGrant{grant}}},
		"another namespace's colon":             {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa:x", Grants: []contractapi.RoleGrant{grant}}},
		"no grant":                              {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa"}},
		"a bucket of another tenant":            {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa", Grants: []contractapi.RoleGrant{{Bucket: "t:photos", Access: contractapi.ReadOnly}}}},
		"a wildcard bucket":                     {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa", Grants: []contractapi.RoleGrant{{Bucket: "*", Access: contractapi.ReadOnly}}}},
		"an unknown access":                     {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa", Grants: []contractapi.RoleGrant{{Bucket: "photos", Access: "Admin"}}}},
		"a wildcard prefix":                     {"r", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa", Grants: []contractapi.RoleGrant{{Bucket: "photos", Access: contractapi.ReadOnly, Prefix: prefix("*")}}}},
		"a role name with a slash":              {"a/b", contractapi.RoleRequest{Subject: "system:serviceaccount:ns:sa", Grants: []contractapi.RoleGrant{grant}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := validateRole(tc.role, &tc.req); err == nil {
				t.Errorf("validateRole accepted %+v", tc.req)
			}
		})
	}
	if _, err := validateRole("photos-reader", &contractapi.RoleRequest{Subject: "system:serviceaccount:shop:photos",
		Grants: []contractapi.RoleGrant{grant, {Bucket: "backups", Access: contractapi.WriteOnly, Prefix: prefix("db/")}}}); err != nil {
		t.Errorf("validateRole refused a valid role: %v", err)
	}
	for name, body := range map[string]contractapi.OIDCProviderRequest{
		"an issuer with a query":  {IssuerUrl: "https://oidc.example/?x=1", Audiences: []string{"a"}, Thumbprints: []string{strings.Repeat("a", 40)}},
		"an issuer with a user":   {IssuerUrl: "https://u:p@oidc.example", Audiences: []string{"a"}, Thumbprints: []string{strings.Repeat("a", 40)}},
		"an issuer not over http": {IssuerUrl: "file:///etc/passwd", Audiences: []string{"a"}, Thumbprints: []string{strings.Repeat("a", 40)}},
		"no audience":             {IssuerUrl: "https://oidc.example", Thumbprints: []string{strings.Repeat("a", 40)}},
		"an audience with spaces": {IssuerUrl: "https://oidc.example", Audiences: []string{"a b"}, Thumbprints: []string{strings.Repeat("a", 40)}},
		"a short thumbprint":      {IssuerUrl: "https://oidc.example", Audiences: []string{"a"}, Thumbprints: []string{"abc"}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := validateOIDCProvider(&body); err == nil {
				t.Errorf("validateOIDCProvider accepted %+v", body)
			}
		})
	}
}

// TestRoleRecords: the server's records of providers and roles, on a backend that keeps what
// it was asked for: a role is bounded, finished after a failed attempt, answered without the
// backend once made, and goes with a cancel; a new issuer replaces the old at the backend.
func TestRoleRecords(t *testing.T) {
	backend := &rolesBackend{}
	ts := startServer(t, Config{Backend: backend, Limits: Limits{Roles: 1}, OIDCIssuers: allow(t, "https://one.example", "https://two.example")})
	ctx := t.Context()
	c := createContract(t, ts.client, "uid-roles", contractapi.ContractRequest{Plan: "standard"})
	thumb := []string{strings.Repeat("a", 40)}
	putProvider := func(issuer string, want int) {
		t.Helper()
		resp, err := ts.client.PutOIDCProviderWithResponse(ctx, c.Id, contractapi.OIDCProviderRequest{IssuerUrl: issuer, Audiences: []string{"osm"}, Thumbprints: thumb})
		if err != nil || resp.StatusCode() != want {
			t.Fatalf("putOIDCProvider %s: %v %s, want %d: %s", issuer, err, resp.Status(), want, resp.Body)
		}
	}
	role := func(sa string) contractapi.RoleRequest {
		return contractapi.RoleRequest{Subject: "system:serviceaccount:ns:" + sa, Grants: []contractapi.RoleGrant{{Bucket: "photos", Access: contractapi.ReadOnly}}}
	}
	putRole := func(name, sa string) *contractapi.PutRoleResponse {
		t.Helper()
		resp, err := ts.client.PutRoleWithResponse(ctx, c.Id, name, role(sa))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	putProvider("https://one.example", http.StatusCreated)
	backend.failRole = errors.New("backend down")
	if resp := putRole("reader", "sa"); resp.StatusCode() != http.StatusServiceUnavailable {
		t.Fatalf("putRole with the backend failing: %s, want 503: %s", resp.Status(), resp.Body)
	}
	// The failed attempt left a pending record, which the repeat finishes (200, as a topic's).
	if resp := putRole("reader", "sa"); resp.StatusCode() != http.StatusOK {
		t.Fatalf("putRole again: %s, want 200: %s", resp.Status(), resp.Body)
	}
	if _, hasRole := backend.has(c.Id, "", "reader"); !hasRole {
		t.Fatal("the repeated putRole did not make the role at the backend")
	}
	calls := backend.callCount()
	if resp := putRole("reader", "sa"); resp.StatusCode() != http.StatusOK || backend.callCount() != calls {
		t.Errorf("putRole as it is: %s with %d backend calls, want 200 and none", resp.Status(), backend.callCount()-calls)
	}
	if resp := putRole("writer", "sa"); resp.StatusCode() != http.StatusUnprocessableEntity {
		t.Errorf("a second role past the bound of one: %s, want 422", resp.Status())
	}

	putProvider("https://two.example", http.StatusOK)
	if one, _ := backend.has(c.Id, "https://one.example", ""); one {
		t.Error("the provider of the issuer replaced is still at the backend")
	}
	if two, _ := backend.has(c.Id, "https://two.example", ""); !two {
		t.Error("the new issuer's provider is not at the backend")
	}
	if resp := putRole("reader", "sa"); resp.StatusCode() != http.StatusOK {
		t.Errorf("putRole after the issuer changed: %s, want 200", resp.Status())
	}
	backend.mu.Lock()
	trusted := backend.roles[c.Id+"/reader"].Provider.IssuerURL
	backend.mu.Unlock()
	if trusted != "https://two.example" {
		t.Errorf("after the issuer changed the role trusts %q, want it made again for https://two.example", trusted)
	}

	force := true
	if resp, err := ts.client.CancelContractWithResponse(ctx, c.Id, &contractapi.CancelContractParams{Force: &force}); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("cancel: %v %v", err, resp)
	}
	if provider, hasRole := backend.has(c.Id, "https://two.example", "reader"); provider || hasRole {
		t.Errorf("after the cancel the backend holds provider %v, role %v; want neither", provider, hasRole)
	}
}
