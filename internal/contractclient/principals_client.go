package contractclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

var _ Principals = (*Client)(nil)

// CreatePrincipal implements Principals.
func (c *Client) CreatePrincipal(ctx context.Context, contractID, idempotencyKey string) (Principal, bool, error) {
	op := fmt.Sprintf("creating a principal in contract %s", contractID)
	resp, err := c.gen.CreatePrincipalWithResponse(ctx, contractID, &contractapi.CreatePrincipalParams{IdempotencyKey: idempotencyKey}, sendTenant)
	if err != nil {
		return Principal{}, false, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "principals"), resp.HTTPResponse, resp.Body); err != nil {
		return Principal{}, false, err
	}
	got := cmp.Or(resp.JSON201, resp.JSON200)
	if got == nil {
		return Principal{}, false, noBody(op, resp.StatusCode(), "a principal")
	}
	p, creds := fromPrincipalWithCredentials(got)
	p.Credentials = &creds
	return p, resp.JSON201 != nil, nil
}

// GetPrincipal implements Principals.
func (c *Client) GetPrincipal(ctx context.Context, contractID, principalID string) (Principal, error) {
	op := fmt.Sprintf("reading principal %s of contract %s", principalID, contractID)
	resp, err := c.gen.GetPrincipalWithResponse(ctx, contractID, principalID, sendTenant)
	if err != nil {
		return Principal{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "principals", principalID), resp.HTTPResponse, resp.Body); err != nil {
		return Principal{}, err
	}
	got := resp.JSON200
	if got == nil {
		return Principal{}, noBody(op, resp.StatusCode(), "a principal")
	}
	return Principal{ID: got.Id, PolicyPrincipal: got.PolicyPrincipal, AccessKeyIDs: got.AccessKeyIds}, nil
}

// DeletePrincipal implements Principals. The API's own not-found means there is nothing left
// to delete.
func (c *Client) DeletePrincipal(ctx context.Context, contractID, principalID string) error {
	op := fmt.Sprintf("deleting principal %s of contract %s", principalID, contractID)
	resp, err := c.gen.DeletePrincipalWithResponse(ctx, contractID, principalID, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return gone(check(op, contractPath(contractID, "principals", principalID), resp.HTTPResponse, resp.Body))
}

// AddPrincipalKey implements Principals.
func (c *Client) AddPrincipalKey(ctx context.Context, contractID, principalID, idempotencyKey string) (Principal, Credentials, error) {
	op := fmt.Sprintf("adding a key to principal %s of contract %s", principalID, contractID)
	resp, err := c.gen.AddPrincipalKeyWithResponse(ctx, contractID, principalID, &contractapi.AddPrincipalKeyParams{IdempotencyKey: idempotencyKey}, sendTenant)
	if err != nil {
		return Principal{}, Credentials{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "principals", principalID, "keys"), resp.HTTPResponse, resp.Body); err != nil {
		return Principal{}, Credentials{}, err
	}
	got := cmp.Or(resp.JSON201, resp.JSON200)
	if got == nil {
		return Principal{}, Credentials{}, noBody(op, resp.StatusCode(), "a key pair")
	}
	p, creds := fromPrincipalWithCredentials(got)
	return p, creds, nil
}

// RemovePrincipalKey implements Principals. The API's own not-found means the key, its
// principal or its contract is gone, and the key with it.
func (c *Client) RemovePrincipalKey(ctx context.Context, contractID, principalID, accessKeyID string) error {
	op := fmt.Sprintf("revoking key %s of principal %s of contract %s", accessKeyID, principalID, contractID)
	resp, err := c.gen.RemovePrincipalKeyWithResponse(ctx, contractID, principalID, accessKeyID, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return gone(check(op, contractPath(contractID, "principals", principalID, "keys", accessKeyID), resp.HTTPResponse, resp.Body))
}

// gone turns ErrNotFound into success, for calls whose aim is that something not exist.
func gone(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

func noBody(op string, status int, what string) error {
	return &Error{Op: op, status: status, Cause: fmt.Errorf("HTTP %d without %s in the body", status, what)}
}

func fromPrincipalWithCredentials(got *contractapi.PrincipalWithCredentials) (Principal, Credentials) {
	return Principal{ID: got.Id, PolicyPrincipal: got.PolicyPrincipal, AccessKeyIDs: got.AccessKeyIds},
		Credentials{AccessKeyID: got.Credentials.AccessKeyId, SecretAccessKey: got.Credentials.SecretAccessKey}
}
