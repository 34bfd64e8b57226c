package fake

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// Role operations, for Fail and Calls.
const (
	OpPutOIDCProvider Op = "PutOIDCProvider"
	OpPutRole         Op = "PutRole"
	OpDeleteRole      Op = "DeleteRole"
)

var _ contractclient.Roles = (*API)(nil)

// Role is a role as the fake keeps it.
type Role struct {
	Subject string
	Grants  []contractclient.RoleGrant
}

// notSupported is the fake's answer to a role call when NoSTS is set, as versitygw's is.
func notSupported(op string) error {
	return contractclient.NewRefusal(op, contractclient.ErrNotSupported, "this provider has no STS")
}

// PutOIDCProvider implements contractclient.Roles.
func (a *API) PutOIDCProvider(_ context.Context, contractID string, p contractclient.OIDCProvider) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	op := "making contract " + contractID + " trust issuer " + p.IssuerURL
	f, failing := a.next(OpPutOIDCProvider)
	if failing && !f.AfterActing {
		return f.Err
	}
	if err := a.rolesRefused(op, contractID); err != nil {
		return err
	}
	if a.providers == nil {
		a.providers = map[string]contractclient.OIDCProvider{}
	}
	a.providers[contractID] = contractclient.OIDCProvider{IssuerURL: p.IssuerURL,
		Audiences: slices.Clone(p.Audiences), Thumbprints: slices.Clone(p.Thumbprints)}
	if failing {
		return f.Err
	}
	return nil
}

// PutRole implements contractclient.Roles. A role needs the contract's provider first, as
// RGW's trust policy names it.
func (a *API) PutRole(_ context.Context, contractID, name, subject string, grants []contractclient.RoleGrant) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	op := "making role " + name + " of contract " + contractID
	f, failing := a.next(OpPutRole)
	if failing && !f.AfterActing {
		return "", f.Err
	}
	if err := a.rolesRefused(op, contractID); err != nil {
		return "", err
	}
	if _, ok := a.providers[contractID]; !ok {
		return "", contractclient.NewError(op, http.StatusConflict) // the server: put its oidc-provider first
	}
	if a.roles == nil {
		a.roles = map[string]Role{}
	}
	a.roles[contractID+"/"+name] = Role{Subject: subject, Grants: slices.Clone(grants)}
	if failing {
		return "", f.Err
	}
	return RoleARN(contractID, name), nil
}

// DeleteRole implements contractclient.Roles; a role that is gone is not an error.
func (a *API) DeleteRole(_ context.Context, contractID, name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpDeleteRole)
	if failing && !f.AfterActing {
		return f.Err
	}
	if err := a.rolesRefused("deleting role "+name+" of contract "+contractID, contractID); err != nil {
		return err
	}
	delete(a.roles, contractID+"/"+name)
	if failing {
		return f.Err
	}
	return nil
}

// rolesRefused is the answer to a role call the provider cannot serve: no STS (NoSTS), or no
// such contract.
func (a *API) rolesRefused(op, contractID string) error {
	if a.NoSTS {
		return notSupported(op)
	}
	if c, ok := a.contracts[contractID]; !ok || c.Cancelled() {
		return contractclient.NewRefusal(op, contractclient.ErrNotFound, "no contract "+contractID)
	}
	return nil
}

// RoleARN is the ARN the fake names a role by, as RGW does with the contract as tenant.
func RoleARN(contractID, name string) string { return "arn:aws:iam::" + contractID + ":role/" + name }

// Roles returns a copy of the contract's roles, by name.
func (a *API) Roles(contractID string) map[string]Role {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]Role{}
	for k, r := range a.roles {
		if c, name, _ := strings.Cut(k, "/"); c == contractID {
			out[name] = Role{Subject: r.Subject, Grants: slices.Clone(r.Grants)}
		}
	}
	return out
}

// OIDCProvider returns the issuer the contract's account trusts, and whether it trusts one.
func (a *API) OIDCProvider(contractID string) (contractclient.OIDCProvider, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.providers[contractID]
	return p, ok
}
