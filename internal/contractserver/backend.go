package contractserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// Credentials is an S3 key pair.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

// Plan is what a contract buys. QuotaBytes 0 means no quota.
type Plan struct {
	Name       string
	QuotaBytes int64
}

// ErrAccountHasBuckets is returned by DeleteAccount when the account still owns buckets and the
// deletion was not forced.
var ErrAccountHasBuckets = errors.New("account still owns buckets")

// ErrNotSupported is returned for an operation the S3 service behind the backend cannot do.
var ErrNotSupported = errors.New("not supported by this backend")

// Backend makes contracts real on an S3 service: one account per contract, whose keys work on
// Endpoint. Every method is idempotent, because the server retries after crashes: creating an
// account that already exists with the same credentials succeeds, deleting one that is gone
// succeeds.
//
// The methods of Backend and of its optional capabilities name a contract by its account
// (contractID in their signatures): the contract id, or the name AccountNamer gave the account
// when the contract was made.
type Backend interface {
	// Kind names the backend, "versitygw" or "rgw".
	Kind() string
	// Endpoint is the S3 endpoint URL clients use, and Region the region they sign for.
	Endpoint() string
	Region() string

	// CreateAccount makes the account for contractID with its first key pair, which the server
	// generated and recorded before calling.
	CreateAccount(ctx context.Context, contractID string, creds Credentials, plan Plan) error
	// DeleteAccount removes the account. Unless force is set it fails with ErrAccountHasBuckets
	// while the account owns buckets; with force it deletes the buckets and their objects first.
	DeleteAccount(ctx context.Context, contractID string, force bool) error
	// AddKey gives the account another key pair, for rotation.
	AddKey(ctx context.Context, contractID string, creds Credentials) error
	// RemoveKey revokes one key pair of the account.
	RemoveKey(ctx context.Context, contractID, accessKeyID string) error
}

// AccountNamer is implemented by a backend that keeps each new contract's account where the
// contract id alone does not say (RGW: a tenant of the contract's own). The server records the
// name with the contract, before the account is made, and names the contract by it in every
// backend call; a contract recorded before the backend named accounts keeps its id.
type AccountNamer interface {
	AccountName(contractID string) string
}

// WebsiteForms is implemented by a backend that serves some accounts' websites elsewhere than
// the server's website endpoint says (RGW: a bucket in a tenant is reached by path, not by
// host name). WebsiteEndpoint is where the account's buckets are served, given the server's.
type WebsiteForms interface {
	WebsiteEndpoint(account, endpoint string) string
}

// QuotaSupport is implemented by a backend that can say whether it enforces plan quotas. New
// refuses plans with a quota when SupportsQuotas is false, so a limit is never silently
// ignored. A backend that does not implement it is taken to enforce quotas.
type QuotaSupport interface {
	SupportsQuotas() bool
}

// KeySupport is implemented by a backend that can say whether its accounts hold more than one
// key pair; detail says why not, for people. A backend that does not implement it is taken to
// hold several, and says otherwise only when AddKey answers ErrNotSupported.
type KeySupport interface {
	SupportsKeys() (ok bool, detail string)
}

// PolicyForms is implemented by a backend whose bucket policies differ from AWS's in how they
// name things or treat the owner; a backend without it is taken to work as AWS does.
type PolicyForms interface {
	// BucketPolicyForm says how policies name the account of contractID (whose first key is
	// firstAccessKeyID) and whether the owner must be allowed explicitly.
	BucketPolicyForm(contractID, firstAccessKeyID string) contractapi.BucketPolicyForm
}

// awsResourcePrefix is how AWS, and the servers that follow it, name buckets in policies.
const awsResourcePrefix = "arn:aws:s3:::"

// PrincipalBackend is implemented by a backend that can make principals: identities inside a
// contract's account with key pairs of their own, which can do nothing until a bucket policy
// names them. A backend without it answers the principal calls 501 not-supported. Like
// Backend's, every method is idempotent; the server passes only keys it recorded for the
// principal, so a backend never touches a key of another.
type PrincipalBackend interface {
	// CreatePrincipal makes principalID in the account of contractID with its first key pair.
	CreatePrincipal(ctx context.Context, contractID, principalID string, creds Credentials) error
	// DeletePrincipal removes the principal with its keys: accessKeyIDs are every key the server
	// recorded for it that may exist, including ones it may not have finished making.
	DeletePrincipal(ctx context.Context, contractID, principalID string, accessKeyIDs []string) error
	// AddPrincipalKey gives the principal another key pair.
	AddPrincipalKey(ctx context.Context, contractID, principalID string, creds Credentials) error
	// RemovePrincipalKey revokes one key pair of the principal.
	RemovePrincipalKey(ctx context.Context, contractID, principalID, accessKeyID string) error
	// PolicyPrincipal is the Principal element that names the principal in a bucket policy,
	// given its keys in effect, oldest first.
	PolicyPrincipal(contractID, principalID string, accessKeyIDs []string) map[string]any
}

// capability is the backend as an optional capability B (principals, topics), or the 501
// not-supported a caller gets from a backend without it: "the <kind> backend of this server
// <lacks>".
func capability[B any](s *Server, lacks string) (B, error) {
	b, ok := s.backend.(B)
	if !ok {
		return b, newProblem(contractapi.ProblemNotSupported, http.StatusNotImplemented, "the %s backend of this server %s", s.backend.Kind(), lacks)
	}
	return b, nil
}

// inAccount starts a call that changes what lives in a contract's account (its principals, its
// topics): the backend's capability B (the 501 without it), then the contract's lock, held until
// the caller runs unlock, and the contract's record as read says (activeContract for a call
// that makes something, visible for one that removes it).
func inAccount[B any](s *Server, id, lacks string, read func(string) (*record, error)) (b B, rec *record, unlock func(), err error) {
	if b, err = capability[B](s, lacks); err != nil {
		return b, nil, nil, err
	}
	unlock = s.locks.Lock("contract/" + id)
	if rec, err = read(id); err != nil {
		unlock()
		return b, nil, nil, err
	}
	return b, rec, unlock, nil
}
