package storage

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// accountKeys are a contract's account keys at the provider, as the credential lifecycle sees
// them. first is the first key pair, when this pass's purchase answered it.
type accountKeys struct {
	kind     contractKind
	contract *storagev1alpha1.Contract
	first    *contractclient.Credentials
}

var _ credentials.Issuer = accountKeys{}

// First replays the purchase, which answers the first key pair again.
func (a accountKeys) First(ctx context.Context) (contractclient.Credentials, error) {
	if a.first != nil {
		return *a.first, nil
	}
	got, _, err := a.kind.API.Buy(ctx, string(a.contract.UID), purchaseRequest(a.contract))
	return replayedKey(got.Credentials, err, "purchase")
}

// replayedKey is the first key pair a replayed creation (what) answered.
func replayedKey(key *contractclient.Credentials, err error, what string) (contractclient.Credentials, error) {
	switch {
	case err != nil:
		return contractclient.Credentials{}, err
	case key == nil:
		return contractclient.Credentials{}, fmt.Errorf("the contract API answered the %s without its key pair", what)
	}
	return *key, nil
}

func (a accountKeys) Add(ctx context.Context, idempotencyKey string) (contractclient.Credentials, error) {
	return a.kind.API.AddKey(ctx, a.contract.Status.ContractID, idempotencyKey)
}

func (a accountKeys) Revoke(ctx context.Context, accessKeyID string) error {
	return a.kind.API.RemoveKey(ctx, a.contract.Status.ContractID, accessKeyID)
}

// Verify lists the account's buckets with the key: one call that changes nothing, and that
// every key of the account may make.
func (a accountKeys) Verify(ctx context.Context, key contractclient.Credentials) (credentials.Verdict, error) {
	_, err := a.kind.Stores(accountOf(a.contract, key)).BucketNames(ctx)
	switch {
	case err == nil:
		return credentials.Verdict{Works: true}, nil
	case objectstore.IsTransient(err):
		return credentials.Verdict{}, err
	}
	// A server may take a moment before a key it just made works everywhere.
	return credentials.Verdict{Reason: storagev1alpha1.ReasonNewKeyRefused, Retry: tuning.NewKeyRetry,
		Why: fmt.Sprintf("The S3 endpoint refused new key %s when it was tried (%s)", key.AccessKeyID, objectstore.Describe(err))}, nil
}

// keys is the Contract's key through this pass, whose Secret is secret (nil: none yet). first
// is the first key pair when the pass's purchase answered it.
func (k contractKind) keys(c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract], secret *corev1.Secret,
	single string, first *contractclient.Credentials) (*credentials.Keys, *heldSecret) {
	held := k.heldSecret(c, secret)
	keys := keysOf(p, c, accountKeys{kind: k, contract: c, first: first}, held,
		credentials.Shared{Refusals: &k.refusals, ResyncPeriod: k.ResyncPeriod, Now: k.Now.Time(), Recorder: k.Recorder})
	keys.SingleKey = single
	return keys, held
}

// heldSecret is the Contract's Secret, secret as read (nil: none yet).
func (k contractKind) heldSecret(c *storagev1alpha1.Contract, secret *corev1.Secret) *heldSecret {
	name := c.SecretNameOrDefault()
	return &heldSecret{secrets: k.secrets(), owner: c, secret: secret, name: name, render: func(key *contractclient.Credentials) (credentials.Secret, error) {
		rendered, err := credentials.Render(c.SecretFormats(), credentials.Connection{Endpoint: c.Status.Endpoint, Region: c.Status.Region}, key)
		return credentials.Secret{
			Labels:   map[string]string{storagev1alpha1.ContractLabel: c.Name},
			Rendered: rendered,
			// The Secret outlives a namespace deletion's first sweep until this Contract lets it
			// go, so its Buckets can still reach S3 to delete themselves.
			Finalizer: Finalizer,
			What:      "the contract's credentials",
		}, err
	}}
}

// keysOf keeps the Secret's connection details in line with the contract, and runs the key's
// lifecycle: the first key into the Secret, a new one when due or lost, replaced ones revoked.
func (k contractKind) keysOf(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract],
	secret *corev1.Secret, got contractclient.Contract, after time.Duration, found contractFound) contractOutcome {
	single, why := got.SingleKey()
	if single && why == "" {
		why = "the provider's accounts hold one key pair"
	} else if !single {
		why = ""
	}
	keys, held := k.keys(c, p, secret, why, got.Credentials)
	if secret != nil {
		if err := held.write(ctx, nil); err != nil {
			return k.secretFailed(found, c, err)
		}
	}
	res := keys.Reconcile(ctx)
	found.keys = res.Found
	if secretNotWritten(res.Err) {
		return k.secretFailed(found, c, res.Err)
	}
	var ready contractFinding = available{got}
	switch {
	case c.Status.AccessKeyID == "":
		ready = nil // the first key did not reach the Secret: Ready says what it said
	case !holdsKey(held, c.Status.AccessKeyID):
		ready = keyReplacing{c.SecretNameOrDefault(), c.Status.AccessKeyID}
	}
	return found.end(ready, engine.Sooner(after, res.After), res.Err)
}
