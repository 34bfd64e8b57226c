package contractclient_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// A role's ARN reaches the caller, and a provider without STS is ErrNotSupported for every
// call, which the operator reports as unsupported rather than retrying.
func TestRolesTurnTheAnswerIntoDomainTypes(t *testing.T) {
	grants := []contractclient.RoleGrant{{Bucket: "photos", Access: "ReadOnly", Prefix: "db/"}}
	c := cannedAPI(t, http.StatusCreated, "application/json",
		`{"name":"r","arn":"arn:aws:iam::t1:role/r","subject":"system:serviceaccount:ns:sa"}`)
	arn, err := c.PutRole(t.Context(), "c1", "r", "system:serviceaccount:ns:sa", grants)
	if err != nil || arn != "arn:aws:iam::t1:role/r" {
		t.Errorf("PutRole: %q, %v; want the ARN answered", arn, err)
	}

	c = cannedAPI(t, http.StatusNotImplemented, "application/problem+json",
		`{"type":"https://osm.dev/problems/not-supported","title":"Not supported by this provider","status":501,"detail":"the versitygw backend of this server has no STS"}`)
	if err := c.PutOIDCProvider(t.Context(), "c1", contractclient.OIDCProvider{IssuerURL: "https://oidc.example"}); !errors.Is(err, contractclient.ErrNotSupported) {
		t.Errorf("PutOIDCProvider without STS: %v, want ErrNotSupported", err)
	}
	if _, err := c.PutRole(t.Context(), "c1", "r", "system:serviceaccount:ns:sa", grants); !errors.Is(err, contractclient.ErrNotSupported) {
		t.Errorf("PutRole without STS: %v, want ErrNotSupported", err)
	}
	if err := c.DeleteRole(t.Context(), "c1", "r"); !errors.Is(err, contractclient.ErrNotSupported) {
		t.Errorf("DeleteRole without STS: %v, want ErrNotSupported", err)
	}
}
