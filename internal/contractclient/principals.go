package contractclient

import "context"

// Principals is what the BucketAccess controller calls: identities inside a contract's account
// that hold key pairs of their own and get their rights only from bucket policies, so a
// workload can be given one bucket, read-only, and its keys rotated without touching the
// account's. Every call that creates something takes an idempotency key: a retry after a lost
// answer gets the same principal or key pair back, never a second one.
type Principals interface {
	// CreatePrincipal makes a principal in the account of contractID for idempotencyKey, or
	// returns the one already made for it, with its first key pair; created says whether this
	// call made it.
	CreatePrincipal(ctx context.Context, contractID, idempotencyKey string) (p Principal, created bool, err error)
	// GetPrincipal reads a principal, without secrets. One the provider does not know is
	// ErrNotFound.
	GetPrincipal(ctx context.Context, contractID, principalID string) (Principal, error)
	// DeletePrincipal deletes a principal with all its keys. One already gone is not an error.
	DeletePrincipal(ctx context.Context, contractID, principalID string) error
	// AddPrincipalKey issues another key pair for idempotencyKey (or returns the one already
	// issued for it), for rotation, and returns the principal as it now is.
	AddPrincipalKey(ctx context.Context, contractID, principalID, idempotencyKey string) (Principal, Credentials, error)
	// RemovePrincipalKey revokes one key pair. The last one cannot be removed (ErrLastKey); one
	// already gone is not an error.
	RemovePrincipalKey(ctx context.Context, contractID, principalID, accessKeyID string) error
}

// Principal is a principal as the provider reports it.
type Principal struct {
	ID string
	// PolicyPrincipal is the Principal element that names it in a bucket policy on the
	// contract's endpoint, for example {"AWS": "arn:aws:iam:::user/p-1"}. It may change when
	// keys are added or removed (a server that names users by their access key), so it is read
	// again after every change.
	PolicyPrincipal map[string]any
	// AccessKeyIDs are its key pairs in effect, oldest first.
	AccessKeyIDs []string
	// Credentials are set only by CreatePrincipal: the API returns the secret nowhere else.
	Credentials *Credentials
}
