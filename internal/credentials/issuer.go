package credentials

import (
	"context"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// Issuer is where a resource's keys come from.
type Issuer interface {
	// First returns the resource's first key pair: the one its creation made (a purchase, a
	// principal), asked for again with the same idempotency key, so a replay answers the same.
	First(ctx context.Context) (contractclient.Credentials, error)
	// Add issues another key pair for idempotencyKey, or returns the one issued for it before.
	// contractclient.ErrNotSupported: the provider holds one key pair per account.
	// contractclient.ErrKeyRevoked: the key made for it was revoked since.
	Add(ctx context.Context, idempotencyKey string) (contractclient.Credentials, error)
	// Revoke revokes a key pair; one already gone is not an error.
	Revoke(ctx context.Context, accessKeyID string) error
	// Verify tries a key pair with itself, changing nothing. An error says the try could not be
	// made (the endpoint did not answer); a Verdict that does not Work says what it found.
	Verify(ctx context.Context, key contractclient.Credentials) (Verdict, error)
}

// Verdict is what trying a key with itself found.
type Verdict struct {
	// Works: the key does what it is for.
	Works bool
	// When it does not: the KeyRotation reason (storagev1alpha1.ReasonNewKeyRefused,
	// ReasonNewKeyPending), what the try found, and how soon to try again.
	Reason string
	Why    string
	Retry  time.Duration
}
