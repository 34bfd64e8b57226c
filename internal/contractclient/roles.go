package contractclient

import (
	"cmp"
	"context"
	"fmt"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// Roles is what keyless access calls: the OpenID Connect issuer a contract's account trusts,
// and roles a ServiceAccount's token of that issuer assumes. Both puts are idempotent; deleting
// a role that is gone succeeds. A provider without STS answers every call ErrNotSupported.
type Roles interface {
	// PutOIDCProvider makes the account trust issuer for audiences; thumbprints are the SHA-1
	// fingerprints of the certificates in the issuer's JWKS.
	PutOIDCProvider(ctx context.Context, contractID string, p OIDCProvider) error
	// PutRole makes role name trusting a token whose sub is subject, allowed grants, or changes
	// it, and returns its ARN.
	PutRole(ctx context.Context, contractID, name, subject string, grants []RoleGrant) (arn string, err error)
	// DeleteRole deletes a role; one already gone is not an error.
	DeleteRole(ctx context.Context, contractID, name string) error
}

// OIDCProvider is the issuer an account trusts.
type OIDCProvider struct {
	IssuerURL   string
	Audiences   []string
	Thumbprints []string
}

// RoleGrant is a role's access to one bucket of the account: ReadOnly, ReadWrite or
// WriteOnly, under Prefix.
type RoleGrant struct {
	Bucket, Access, Prefix string
}

var _ Roles = (*Client)(nil)

// PutOIDCProvider implements Roles.
func (c *Client) PutOIDCProvider(ctx context.Context, contractID string, p OIDCProvider) error {
	op := fmt.Sprintf("making contract %s trust issuer %s", contractID, p.IssuerURL)
	resp, err := c.gen.PutOIDCProviderWithResponse(ctx, contractID, contractapi.OIDCProviderRequest{
		IssuerUrl: p.IssuerURL, Audiences: p.Audiences, Thumbprints: p.Thumbprints}, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return check(op, contractPath(contractID, "oidc-provider"), resp.HTTPResponse, resp.Body)
}

// PutRole implements Roles.
func (c *Client) PutRole(ctx context.Context, contractID, name, subject string, grants []RoleGrant) (string, error) {
	op := fmt.Sprintf("making role %s of contract %s", name, contractID)
	req := contractapi.RoleRequest{Subject: subject, Grants: make([]contractapi.RoleGrant, 0, len(grants))}
	for _, g := range grants {
		rg := contractapi.RoleGrant{Bucket: g.Bucket, Access: contractapi.RoleGrantAccess(g.Access)}
		if g.Prefix != "" {
			rg.Prefix = &g.Prefix
		}
		req.Grants = append(req.Grants, rg)
	}
	resp, err := c.gen.PutRoleWithResponse(ctx, contractID, name, req, sendTenant)
	if err != nil {
		return "", &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "roles", name), resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	got := cmp.Or(resp.JSON201, resp.JSON200)
	if got == nil {
		return "", noBody(op, resp.StatusCode(), "a role")
	}
	return got.Arn, nil
}

// DeleteRole implements Roles. The API's own not-found (no such contract) means there is
// nothing left to delete.
func (c *Client) DeleteRole(ctx context.Context, contractID, name string) error {
	op := fmt.Sprintf("deleting role %s of contract %s", name, contractID)
	resp, err := c.gen.DeleteRoleWithResponse(ctx, contractID, name, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return gone(check(op, contractPath(contractID, "roles", name), resp.HTTPResponse, resp.Body))
}
