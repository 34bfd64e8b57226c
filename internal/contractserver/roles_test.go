package contractserver

import (
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
