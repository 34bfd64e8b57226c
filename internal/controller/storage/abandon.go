package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
)

// What each kind leaves at the provider when a cluster admin tells it to let go without
// touching the provider (storagev1alpha1.AbandonAnnotation; engine.Abandoner). The provider is
// never called: the point is that it cannot be reached, or is gone for good.

// Abandon lets a Contract go: the contract, if one was bought, stays, its keys in the Secret,
// which outlives the Contract, as under reclaimPolicy Retain.
func (k contractKind) Abandon(ctx context.Context, c *storagev1alpha1.Contract) (string, error) {
	secret, err := k.secrets().Read(ctx, c, c.SecretNameOrDefault())
	if err != nil && !errors.Is(err, credentials.ErrSecretConflict) {
		return "", err
	}
	if secret != nil {
		if err := k.releaseSecret(ctx, c, secret, true); err != nil {
			return "", err
		}
	}
	k.observed.Delete(c.UID)
	id := c.Status.ContractID
	switch {
	case id != "" && secret != nil:
		return fmt.Sprintf("contract %s stays at the provider, its keys in Secret %s%s", id, secret.Name, stillWorking(c.Status.KeyStatus)), nil
	case id != "":
		return fmt.Sprintf("contract %s stays at the provider; no Secret of this Contract holds its keys%s", id, stillWorking(c.Status.KeyStatus)), nil
	case c.Status.PurchaseRequested:
		return fmt.Sprintf("a contract may have been bought (the purchase's answer was lost): ask the provider for the one of idempotency key %s", c.UID), nil
	}
	return "nothing was bought", nil
}

// Abandon lets a Bucket go: its bucket, if one was made, stays in the Contract's account.
func (k bucketKind) Abandon(_ context.Context, b *storagev1alpha1.Bucket) (string, error) {
	switch {
	case b.Status.BucketName != "":
		return fmt.Sprintf("bucket %s stays in the account of Contract %s", b.Status.BucketName, b.Spec.ContractName), nil
	case b.Status.CreatingBucket != "":
		return fmt.Sprintf("bucket %s may have been made in the account of Contract %s (its creation was never recorded as finished)",
			b.Status.CreatingBucket, b.Spec.ContractName), nil
	}
	return "no bucket was made", nil
}

// Abandon lets a BucketAccess go: its principal, if one was made, stays with its keys (or, with
// authentication ServiceAccount, its role, still assumed); the Secret goes with the
// BucketAccess, which owns it.
func (k accessKind) Abandon(_ context.Context, a *storagev1alpha1.BucketAccess) (string, error) {
	k.forgetChecks(a.UID)
	switch {
	case a.Keyless() && a.Status.RoleARN != "":
		return fmt.Sprintf("role %s stays, and the tokens of ServiceAccount %s still assume it: delete role %s of contract %s at the provider",
			a.Status.RoleARN, a.Spec.ServiceAccountName, roleName(a), a.Status.ContractID), nil
	case a.Keyless() && a.Status.PrincipalRequested:
		return fmt.Sprintf("role %s may have been made in contract %s (its answer was lost): delete it at the provider",
			roleName(a), a.Status.ContractID), nil
	case a.Keyless():
		return "no role was made", nil
	case a.Status.PrincipalID != "":
		return fmt.Sprintf("principal %s of contract %s stays, with key %s%s: revoke it at the provider",
			a.Status.PrincipalID, a.Status.ContractID, a.Status.AccessKeyID, stillWorking(a.Status.KeyStatus)), nil
	case a.Status.PrincipalRequested:
		return fmt.Sprintf("a principal may have been made in contract %s (its answer was lost): its idempotency key is %s",
			a.Status.ContractID, a.UID), nil
	}
	return "no principal was made", nil
}

// stillWorking names, for an Abandoned event, the keys a rotation replaced or was issuing,
// which nothing will revoke now.
func stillWorking(st storagev1alpha1.KeyStatus) string {
	var keys []string
	for _, k := range st.RetiringKeys {
		keys = append(keys, k.AccessKeyID)
	}
	if p := st.PendingKey; p != nil && p.AccessKeyID != "" {
		keys = append(keys, p.AccessKeyID)
	}
	if len(keys) == 0 {
		return ""
	}
	return "; keys " + strings.Join(keys, ", ") + " also still work"
}
