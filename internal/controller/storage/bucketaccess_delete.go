package storage

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// Delete deletes the principal with all its keys (or, with authentication ServiceAccount, the
// role), then the Secret. Credentials made for
// another resource (an Application's link) go after it: deleting a namespace deletes both at
// once, and the workload must not lose its key first. A principal whose answer was lost is
// learnt first, by asking again with the same idempotency key.
func (k accessKind) Delete(ctx context.Context, a *storagev1alpha1.BucketAccess, p *engine.Pass[*storagev1alpha1.BucketAccess]) accessOutcome {
	found := accessFound{}
	switch owner, err := k.liveController(ctx, a); {
	case err != nil:
		return found.end(nil, 0, err)
	case owner != "":
		// The owner's watch (Owners) wakes this BucketAccess when its owner goes; for an owner
		// of a kind not watched, look again now and then.
		return found.end(waitingForUser{owner}, engine.WaitingRetry(k.ResyncPeriod), nil)
	}
	if a.Keyless() {
		if out, done := k.deleteRole(ctx, a, found); done {
			return out
		}
	}
	if a.Status.PrincipalID == "" && a.Status.PrincipalRequested && !a.Keyless() {
		got, _, err := k.Principals.CreatePrincipal(ctx, a.Status.ContractID, string(a.UID))
		switch {
		case err == nil:
			a.Status.PrincipalID = got.ID
		case errors.Is(err, contractclient.ErrPrincipalDeleted), errors.Is(err, contractclient.ErrNotFound), contractclient.NothingStored(err):
			// Deleted already, the account is gone, or the request was refused: nothing to revoke.
		default:
			return k.principalFailed(found, err)
		}
	}
	if a.Status.PrincipalID != "" {
		err := k.Principals.DeletePrincipal(ctx, a.Status.ContractID, a.Status.PrincipalID)
		if err != nil && !errors.Is(err, contractclient.ErrNotFound) {
			return k.principalFailed(found, err)
		}
		k.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "PrincipalDeleted", "Delete",
			"Deleted principal %s and revoked all its keys", a.Status.PrincipalID)
		a.Status.PrincipalID, a.Status.PolicyPrincipal, a.Status.AccessKeyID, a.Status.RetiringKeys = "", nil, "", nil
	}
	a.Status.PrincipalRequested = false
	secret, err := k.secrets().Read(ctx, a, a.SecretNameOrDefault())
	if err != nil && !errors.Is(err, credentials.ErrSecretConflict) {
		return found.end(nil, 0, err)
	}
	if secret != nil {
		if err := k.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
			return found.end(nil, 0, fmt.Errorf("deleting Secret %q: %w", secret.Name, err))
		}
	}
	k.forgetChecks(a.UID)
	return found.end(accessDeleting{}, 0, p.Release(ctx))
}

// liveController names the BucketAccess's controlling owner ("Application web") while it exists,
// is not being deleted and has not released it, as the API server says; "" when there is none.
func (k accessKind) liveController(ctx context.Context, a *storagev1alpha1.BucketAccess) (string, error) {
	ref := metav1.GetControllerOf(a)
	if ref == nil {
		return "", nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", nil
	}
	owner := &metav1.PartialObjectMetadata{}
	owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
	err = k.apiReader().Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: ref.Name}, owner)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading %s %q: %w", ref.Kind, ref.Name, err)
	case owner.UID != ref.UID:
		return "", nil // a new object of the same name: not the one these credentials served
	case owner.DeletionTimestamp != nil:
		// Going too; and a foreground deletion of it waits for this BucketAccess to go first.
		return "", nil
	case a.Annotations[storagev1alpha1.ReleasedAnnotation] == string(ref.UID):
		return "", nil // the owner dropped it (an Application's link removed): nothing uses the key
	}
	return ref.Kind + " " + ref.Name, nil
}
