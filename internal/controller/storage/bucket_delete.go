package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Delete waits until nothing uses the Bucket, then deletes the bucket (bucketReclaimPolicy
// Delete) or leaves it (Retain). A creation whose end was never recorded (a lost answer, a
// failed tag, a crash) is settled first, so the bucket is deleted or kept like any other,
// never leaked.
func (k bucketKind) Delete(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket]) bucketOutcome {
	users, err := k.listUsers(ctx, b)
	if err != nil {
		return bucketOutcome{Err: err}
	}
	found := bucketFound{users: users}
	if users.inUse() {
		return found.end(nil, 0, nil) // the users' watch wakes this Bucket when they let go
	}
	if observing(b) {
		return k.leaveObserved(ctx, b, p, found)
	}
	if b.Status.BucketName == "" {
		if out, done := k.settleCreation(ctx, b, p, &found); done {
			return out
		}
	}
	switch {
	case b.Status.BucketName == "":
	case b.Spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete:
		if out, done := k.deleteBucket(ctx, b, p, found); done {
			return out
		}
	default:
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketRetained", "Delete",
			"Left bucket %s in place (bucketReclaimPolicy Retain)", b.Status.BucketName)
	}
	// After the bucket, whose notifications publish to them; a retained bucket keeps its
	// notification configuration, which then reaches no one.
	if out, done := k.deleteTopics(ctx, b, found); done {
		return out
	}
	return found.end(nil, 0, p.Release(ctx))
}

// settleCreation settles, during deletion, a bucket this resource may have made but never
// recorded as made. With a record of the creation (status.creatingBucket): if the bucket exists
// and is this resource's (tagged for it, or untagged), it is tagged and recorded, so deletion
// deletes or keeps it; the record is dropped only when the server shows that nothing this
// resource may touch was made. Without one, only a server that keeps the tags given at
// creation can have made it (createBucket records no intent there): spec.bucketName is this
// resource's if it carries its UID. Anything it cannot tell yet blocks the deletion and says why;
// a Contract that never had an account made nothing.
func (k bucketKind) settleCreation(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	found *bucketFound) (bucketOutcome, bool) {
	// The record, when there is one, names spec.bucketName: it cannot change.
	name, recorded := b.Spec.BucketName, b.Status.CreatingBucket != ""
	contract := &storagev1alpha1.Contract{}
	err := k.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	switch {
	case apierrors.IsNotFound(err) && recorded:
		// Nothing is left to look with (a Contract waits for its Buckets, so it was forced).
		k.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "BucketMayRemain", "Delete",
			"Bucket %s may have been created; Contract %s is gone, so it cannot be checked or deleted", name, b.Spec.ContractName)
		return k.forgetCreation(ctx, b, p, *found)
	case apierrors.IsNotFound(err):
		return bucketOutcome{}, false
	case err != nil:
		return found.end(nil, 0, fmt.Errorf("reading Contract %q: %w", b.Spec.ContractName, err)), true
	case contract.Status.State == string(contractapi.Cancelled):
		return k.forgetCreation(ctx, b, p, *found) // the account went with its buckets
	case !recorded && (contract.Status.Endpoint == "" || contract.Status.SecretName == ""):
		return bucketOutcome{}, false // no account was ever there to make it in
	}
	acct, out, done := k.connect(ctx, b, *found)
	if done {
		if out.Err == nil {
			out.Found.holdsUp = fmt.Sprintf("Bucket %s may have been created and cannot be checked yet", name)
			out.After = engine.WaitingRetry(k.ResyncPeriod)
		}
		return out, true
	}
	switch err := acct.store.HeadBucket(ctx, name); {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return k.forgetCreation(ctx, b, p, *found) // never made
	case errors.Is(err, objectstore.ErrAccessDenied):
		// A HEAD has no body: only the account's own list tells "not ours" from "ours, denied".
		names, listErr := acct.store.BucketNames(ctx)
		if listErr != nil {
			return k.creationUnsettled(b, *found, listErr), true
		}
		if !slices.Contains(names, name) {
			return k.forgetCreation(ctx, b, p, *found)
		}
	case err != nil && !recorded && !objectstore.IsTransient(err):
		// A name this server refuses to look at is not one it let this resource create.
		return bucketOutcome{}, false
	case err != nil:
		return k.creationUnsettled(b, *found, err), true
	}
	if !recorded {
		return k.madeUnrecorded(ctx, b, p, acct.store, *found)
	}
	out, done = k.claim(ctx, b, p, acct.store, found, true)
	switch {
	case errors.Is(out.Err, errTaggedForAnother):
		return k.forgetCreation(ctx, b, p, *found) // someone else's: left alone
	case done:
		return k.creationUnsettled(b, *found, out.Err), true
	}
	return out, false
}

// madeUnrecorded records the bucket of spec.bucketName as made when it carries this resource's
// UID, which only its own creation gives it; any other bucket of that name is left alone.
func (k bucketKind) madeUnrecorded(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found bucketFound) (bucketOutcome, bool) {
	tags, err := store.BucketTags(ctx, b.Spec.BucketName)
	if err != nil {
		return k.creationUnsettled(b, found, err), true
	}
	if tags[OwnerUIDTag] == string(b.UID) {
		recordMade(b, p, b.Spec.BucketName)
	}
	return bucketOutcome{}, false
}

// creationUnsettled keeps a deletion waiting while whether its bucket was made cannot be told:
// retried with backoff when the server may answer later, blocked with the reason otherwise.
func (k bucketKind) creationUnsettled(b *storagev1alpha1.Bucket, found bucketFound, err error) bucketOutcome {
	out := k.s3Failed(b, found, err)
	if !errors.Is(out.Err, reconcile.TerminalError(nil)) {
		return out
	}
	out.Found.holdsUp = fmt.Sprintf("Bucket %s may have been created for this resource and cannot be checked", b.Spec.BucketName)
	out.After, out.Err = engine.WaitingRetry(k.ResyncPeriod), nil
	return out
}

// forgetCreation clears the record of a creation that made nothing this resource may touch.
func (k bucketKind) forgetCreation(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket], found bucketFound) (bucketOutcome, bool) {
	if b.Status.CreatingBucket == "" {
		return bucketOutcome{}, false
	}
	if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.CreatingBucket = "" }); err != nil {
		return found.end(nil, 0, fmt.Errorf("clearing the record of creating bucket: %w", err)), true
	}
	return bucketOutcome{}, false
}

// deleteBucket deletes an empty bucket; done says the pass ends with out, because it is not
// gone yet. A bucket with objects is emptied only when spec.deletion.emptyOnDelete says so;
// otherwise deletion waits, and DeletionBlocked says why and what to do.
func (k bucketKind) deleteBucket(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	found bucketFound) (bucketOutcome, bool) {
	name := b.Status.BucketName
	contract := &storagev1alpha1.Contract{}
	err := k.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	if err == nil && contract.Status.State == string(contractapi.Cancelled) {
		// A cancelled account has no buckets left: there is nothing to delete, and no working
		// key to delete it with.
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketGone", "Delete",
			"Bucket %s went with cancelled contract %s", name, contract.Status.ContractID)
		return bucketOutcome{}, false
	}
	acct, out, done := k.connect(ctx, b, found)
	if done {
		if out.Err == nil {
			out.Found.holdsUp = fmt.Sprintf("Bucket %s cannot be deleted yet", name)
		}
		return out, true
	}
	// Only a bucket tagged for this resource is ever deleted by it.
	tags, err := acct.store.BucketTags(ctx, name)
	switch {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return bucketOutcome{}, false
	case errors.Is(err, objectstore.ErrAccessDenied):
		return k.deletionDenied(found, err), true
	case err != nil:
		return k.s3Failed(b, found, err), true
	case tags[OwnerTag] != ownerTagValue(b):
		k.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "BucketRetained", "Delete",
			"Left bucket %s in place: it is tagged for %q, not for this resource", name, tags[OwnerTag])
		return bucketOutcome{}, false
	}
	logf.FromContext(ctx).V(1).Info("Deleting bucket", "bucket", name)
	return k.deleteTagged(ctx, b, p, acct.store, found)
}

// deleteTagged deletes a bucket known to be this resource's.
func (k bucketKind) deleteTagged(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found bucketFound) (bucketOutcome, bool) {
	name := b.Status.BucketName
	err := store.DeleteBucket(ctx, name)
	switch {
	case err == nil, errors.Is(err, objectstore.ErrNoSuchBucket):
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketDeleted", "Delete", "Deleted bucket %s (bucketReclaimPolicy Delete)", name)
		return bucketOutcome{}, false
	case errors.Is(err, objectstore.ErrBucketNotEmpty) && b.Spec.Deletion.Empties():
		return k.empty(ctx, b, p, store, found)
	case errors.Is(err, objectstore.ErrBucketNotEmpty):
		n, more, countErr := store.CountObjects(ctx, name, 1000)
		if countErr != nil {
			return k.s3Failed(b, found, countErr), true
		}
		objects := plural(n, "object")
		if more {
			objects = "more than " + objects
		}
		return found.end(notEmpty{objects}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	case errors.Is(err, objectstore.ErrAccessDenied):
		return k.deletionDenied(found, err), true
	}
	return k.s3Failed(b, found, err), true
}

// deletionDenied blocks a deletion the bucket's policy denies its own account.
func (k bucketKind) deletionDenied(found bucketFound, err error) bucketOutcome {
	return found.end(deletionDenied{err}, engine.WaitingRetry(k.ResyncPeriod), nil)
}
