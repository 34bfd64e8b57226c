// Package contractclient is the operator's view of the provider's contract API: calls (Buy,
// Get, Cancel, AddKey and RemoveKey; principals in Principals) that return what the reconcilers
// need and typed errors, built on the client oapi-codegen generates from openapi/contract.yaml.
// HTTP status codes stop here.
package contractclient

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// API is what the Contract controller calls. *Client implements it over HTTP; fake.API in memory.
type API interface {
	// Buy buys the contract for idempotencyKey, or returns the one already bought for it, with
	// its first key pair; created says whether this call bought it.
	Buy(ctx context.Context, idempotencyKey string, req Request) (c Contract, created bool, err error)
	// Get reads a contract. A contract the provider does not know is ErrNotFound.
	Get(ctx context.Context, id string) (Contract, error)
	// Cancel cancels a contract, never forcing: an account that still owns buckets is
	// ErrHasBuckets, one the provider does not know ErrNotFound.
	Cancel(ctx context.Context, id string) error
	// AddKey issues another key pair for the contract's account for idempotencyKey, or returns
	// the one already issued for it, for rotation. A provider whose accounts hold one key pair
	// answers ErrNotSupported; a key pair revoked since it was issued is ErrKeyRevoked.
	AddKey(ctx context.Context, id, idempotencyKey string) (Credentials, error)
	// RemoveKey revokes one key pair of the contract's account. The last one cannot be revoked
	// (ErrLastKey); one already gone is not an error.
	RemoveKey(ctx context.Context, id, accessKeyID string) error
}

// Request is what a purchase asks for.
type Request struct {
	Plan, Region, DisplayName string
	// Namespace and Name of the resource asking, for the provider's records.
	Namespace, Name string
}

// Contract is a contract as the provider reports it.
type Contract struct {
	ID, State, Endpoint, Region, Plan string
	// PolicyForm is how bucket policies name things on the endpoint; nil for the AWS forms.
	PolicyForm *PolicyForm
	// AccessKeyIDs are the account's key pairs that work now, oldest first.
	AccessKeyIDs []string
	// OneKeyOnly: the provider says the account holds one key pair only, so its keys cannot
	// rotate. False also when the provider does not say; AddKey then answers.
	OneKeyOnly bool
	// OneKeyOnlyReason is the provider's reason for OneKeyOnly, for people; "" when it gave none.
	OneKeyOnlyReason string
	// QuotaBytes is the plan's storage quota; 0 when it has none.
	QuotaBytes int64
	// Credentials are set only by Buy: the API returns the secret nowhere else.
	Credentials *Credentials
	// WebsiteEndpoint is where the provider serves a bucket's static website, with {bucket}
	// for its name; "" when it does not say.
	WebsiteEndpoint string
}

// PolicyForm is how bucket policies on a contract's endpoint name things, so the operator
// writes and checks policies the provider understands.
type PolicyForm struct {
	// ResourcePrefix is what a policy's Resource starts with before <bucket> or <bucket>/<key>,
	// for example "arn:aws:s3:::".
	ResourcePrefix string
	// OwnerPrincipal is the Principal element that names the contract's account in a policy,
	// for example {"AWS": "arn:aws:iam:::user/contract-7h2kq9x4"}.
	OwnerPrincipal map[string]string
	// OwnerNeedsAllow: once a bucket has a policy, the account keeps access only if the policy
	// allows OwnerPrincipal (the provider judges the owner by the policy alone).
	OwnerNeedsAllow bool
}

// SingleKey reports whether the provider says the account holds one key pair only, and why
// ("" when it did not say why).
func (c Contract) SingleKey() (bool, string) {
	if !c.OneKeyOnly {
		return false, ""
	}
	return true, c.OneKeyOnlyReason
}

// HasKey reports whether the provider lists accessKeyID among the account's working keys.
func (c Contract) HasKey(accessKeyID string) bool {
	return slices.Contains(c.AccessKeyIDs, accessKeyID)
}

// Credentials is an S3 key pair. Its secret is never logged nor put in an error.
type Credentials struct{ AccessKeyID, SecretAccessKey string }

// Cancelled reports whether the provider says the account is gone.
func (c Contract) Cancelled() bool { return c.State == string(contractapi.Cancelled) }

// Client is API over HTTP.
type Client struct {
	gen contractapi.ClientWithResponsesInterface
}

// New wraps a generated client.
func New(gen contractapi.ClientWithResponsesInterface) *Client { return &Client{gen: gen} }

var _ API = (*Client)(nil)

// Buy implements API.
func (c *Client) Buy(ctx context.Context, idempotencyKey string, req Request) (Contract, bool, error) {
	const op = "creating the contract"
	body := contractapi.ContractRequest{
		Plan:        req.Plan,
		Region:      optional(req.Region),
		DisplayName: optional(req.DisplayName),
		Requester:   &contractapi.Requester{Namespace: optional(req.Namespace), Name: optional(req.Name)},
	}
	resp, err := c.gen.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: idempotencyKey}, body, sendTenant)
	if err != nil {
		return Contract{}, false, &Error{Op: op, Cause: err}
	}
	if err := check(op, "", resp.HTTPResponse, resp.Body); err != nil {
		return Contract{}, false, err
	}
	got := cmp.Or(resp.JSON201, resp.JSON200)
	if got == nil {
		return Contract{}, false, noBody(op, resp.StatusCode(), "a contract")
	}
	out := fromContract(contractapi.Contract{Id: got.Id, State: got.State, Endpoint: got.Endpoint, Region: got.Region, Plan: got.Plan,
		AccessKeys: got.AccessKeys, BucketPolicy: got.BucketPolicy, KeyRotation: got.KeyRotation, Website: got.Website,
		QuotaBytes: got.QuotaBytes})
	out.Credentials = &Credentials{AccessKeyID: got.Credentials.AccessKeyId, SecretAccessKey: got.Credentials.SecretAccessKey}
	return out, resp.JSON201 != nil, nil
}

// Get implements API.
func (c *Client) Get(ctx context.Context, id string) (Contract, error) {
	op := fmt.Sprintf("reading contract %s", id)
	resp, err := c.gen.GetContractWithResponse(ctx, id, sendTenant)
	if err != nil {
		return Contract{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(id), resp.HTTPResponse, resp.Body); err != nil {
		return Contract{}, err
	}
	got := resp.JSON200
	if got == nil {
		return Contract{}, noBody(op, resp.StatusCode(), "a contract")
	}
	return fromContract(*got), nil
}

// fromContract is the Contract the API describes, without credentials.
func fromContract(got contractapi.Contract) Contract {
	c := Contract{ID: got.Id, State: string(got.State), Endpoint: got.Endpoint, Region: got.Region, Plan: got.Plan,
		AccessKeyIDs: keyIDs(got.AccessKeys)}
	if got.QuotaBytes != nil {
		c.QuotaBytes = *got.QuotaBytes
	}
	if f := got.BucketPolicy; f != nil {
		c.PolicyForm = &PolicyForm{ResourcePrefix: f.ResourcePrefix, OwnerPrincipal: f.OwnerPrincipal, OwnerNeedsAllow: f.OwnerNeedsAllow}
	}
	if got.Website != nil {
		c.WebsiteEndpoint = got.Website.Endpoint
	}
	if k := got.KeyRotation; k != nil && !k.Supported {
		c.OneKeyOnly = true
		if k.Detail != nil {
			c.OneKeyOnlyReason = *k.Detail
		}
	}
	return c
}

func keyIDs(keys []contractapi.AccessKey) []string {
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, k.AccessKeyId)
	}
	return ids
}

// Cancel implements API.
func (c *Client) Cancel(ctx context.Context, id string) error {
	op := fmt.Sprintf("cancelling contract %s", id)
	resp, err := c.gen.CancelContractWithResponse(ctx, id, &contractapi.CancelContractParams{}, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return check(op, contractPath(id), resp.HTTPResponse, resp.Body)
}

// AddKey implements API.
func (c *Client) AddKey(ctx context.Context, id, idempotencyKey string) (Credentials, error) {
	op := fmt.Sprintf("adding a key to contract %s", id)
	resp, err := c.gen.AddKeyWithResponse(ctx, id, &contractapi.AddKeyParams{IdempotencyKey: idempotencyKey}, sendTenant)
	if err != nil {
		return Credentials{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(id, "keys"), resp.HTTPResponse, resp.Body); err != nil {
		return Credentials{}, err
	}
	got := cmp.Or(resp.JSON201, resp.JSON200)
	if got == nil {
		return Credentials{}, noBody(op, resp.StatusCode(), "a key pair")
	}
	return Credentials{AccessKeyID: got.AccessKeyId, SecretAccessKey: got.SecretAccessKey}, nil
}

// RemoveKey implements API. The API's own not-found means the key, or its contract, is gone.
func (c *Client) RemoveKey(ctx context.Context, id, accessKeyID string) error {
	op := fmt.Sprintf("revoking key %s of contract %s", accessKeyID, id)
	resp, err := c.gen.RemoveKeyWithResponse(ctx, id, accessKeyID, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return gone(check(op, contractPath(id, "keys", accessKeyID), resp.HTTPResponse, resp.Body))
}

// contractPath is the API path of a contract or of something in it, as the server routes it
// and names it in a not-found's instance: contractPath("c1", "keys", "AK1") is
// "/v1/contracts/c1/keys/AK1". Nothing is cleaned away, so an odd id never matches another path.
func contractPath(id string, more ...string) string {
	return "/v1/contracts/" + strings.Join(append([]string{id}, more...), "/")
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
