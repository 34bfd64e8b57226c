package credentials

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// Settle runs before a resource whose key stays at the provider (a Contract kept by its reclaim
// policy) goes: it finishes a rotation under way, so the Secret that stays holds the newest
// key, and revokes the keys that rotation replaced once their overlap has passed, so no
// replaced key outlives the resource. What the provider refuses for good does not hold the
// deletion up: a warning says what was left. Waiting says the deletion waits for an overlap.
func (k *Keys) Settle(ctx context.Context) (res Result, waiting bool) {
	if k.Status.PendingKey == nil && len(k.Status.RetiringKeys) == 0 {
		return Result{}, false
	}
	if k.Status.PendingKey != nil {
		res := k.finish(ctx)
		switch f := res.Found; {
		case f.State == Current, f.State == Unsupported, f.State == Rotating:
			// In the Secret, or nothing was made.
		case f.State == NotWorking, f.State == APIFailed && !f.APIErr.Retryable():
			if err := k.abandon(ctx); err != nil {
				return Result{Err: err}, false
			}
		default:
			return res, false
		}
	}
	res = k.revokeRetired(ctx)
	if f := res.Found; f.State == APIFailed && !f.APIErr.Retryable() {
		k.Emit(corev1.EventTypeWarning, "KeyNotRevoked", fmt.Sprintf("Key %s stays at the provider: %s", f.Revoking, f.APIErr.Summary()))
		if err := k.dropRetiring(ctx, f.Revoking); err != nil {
			return Result{Err: err}, false
		}
		return Result{After: time.Second}, false
	}
	if res.Err != nil || res.Found.State == APIFailed {
		return res, false
	}
	return res, len(k.Status.RetiringKeys) > 0
}

// abandon gives up a rotation that cannot finish, at deletion: the key made for it, if the
// provider answered, was never handed out, and is revoked.
func (k *Keys) abandon(ctx context.Context) error {
	made := k.Status.PendingKey.AccessKeyID
	if made != "" && made != k.InSecret.AccessKeyID {
		if err := k.Issuer.Revoke(ctx, made); err != nil {
			if apiErr, _, _ := engine.APIFailure(err); apiErr == nil || apiErr.Retryable() {
				return fmt.Errorf("revoking the unused key %s: %w", made, err)
			}
		}
	}
	k.Emit(corev1.EventTypeWarning, "KeyRotationAbandoned", fmt.Sprintf(
		"The rotation under way cannot finish; Secret %s keeps key %s", k.SecretName, k.Status.AccessKeyID))
	return k.Record(ctx, func(s *storagev1alpha1.KeyStatus) { s.PendingKey = nil })
}
