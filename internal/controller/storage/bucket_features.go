package storage

import (
	"context"
	"errors"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// errObjectLockNotEnabled: the spec asks for object lock and the bucket was created without it.
var errObjectLockNotEnabled = errors.New("the bucket has no object lock")

// syncFeatures brings versioning, object lock, lifecycle and CORS to the spec and records them
// in status as observed. Each is read only while the spec sets it (or, for lifecycle and CORS,
// while status shows rules the spec has dropped), so a Bucket that uses none costs no extra
// call. A feature the server does not implement, or an object lock the bucket lacks, is recorded
// in the pass and the others are still applied; any other failure ends the pass.
func (r *BucketReconciler) syncFeatures(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass, store objectstore.Store, applied bool) error {
	steps := []struct {
		field, reason string
		sync          func() error
	}{
		{"versioning", storagev1alpha1.ReasonVersioningUnsupported, func() error {
			v, err := r.syncVersioning(ctx, b, store, applied)
			if err == nil {
				b.Status.Versioning = v
			}
			return err
		}},
		{"objectLock", storagev1alpha1.ReasonObjectLockUnsupported, func() error {
			l, err := r.syncObjectLock(ctx, b, store, applied)
			if err == nil {
				b.Status.ObjectLock = l
			}
			return err
		}},
		{"lifecycle", storagev1alpha1.ReasonLifecycleUnsupported, func() error {
			l, err := r.syncLifecycle(ctx, b, store, applied, p.generatedRules)
			if err == nil {
				b.Status.Lifecycle = l
			}
			return err
		}},
		{"cors", storagev1alpha1.ReasonCORSUnsupported, func() error {
			c, err := r.syncCORS(ctx, b, store, applied)
			if err == nil {
				b.Status.CORS = c
			}
			return err
		}},
	}
	for _, s := range steps {
		err := s.sync()
		switch {
		case err == nil:
		case errors.Is(err, errObjectLockNotEnabled):
			p.lockMissing = true
			b.Status.ObjectLock = nil
		case objectstore.IsNotImplemented(err):
			p.unsupported = append(p.unsupported, unsupportedFeature{field: s.field, reason: s.reason, err: err})
		default:
			return err
		}
	}
	return nil
}

// versioningInSync reports whether a bucket's observed versioning state is what the spec asks
// for. A bucket never versioned ("") already is what Suspended asks: nothing new is versioned.
func versioningInSync(desired, observed string) bool {
	return desired == observed || (desired == string(storagev1alpha1.VersioningSuspended) && observed == "")
}

// syncVersioning sets the bucket's versioning when the spec names a state and the bucket is in
// another, and returns the state as observed ("" when the spec names none: it is not read).
func (r *BucketReconciler) syncVersioning(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool) (string, error) {
	name, desired := b.Spec.BucketName, string(b.Spec.Versioning)
	if desired == "" {
		return "", nil
	}
	observed, err := store.Versioning(ctx, name)
	if err != nil || versioningInSync(desired, observed) {
		return observed, err
	}
	if err := store.PutVersioning(ctx, name, desired); err != nil {
		return "", err
	}
	r.recordWrite(b, applied, "Versioning", "Set the versioning of bucket %s to %s", name, desired)
	return store.Versioning(ctx, name)
}

// syncObjectLock gives a bucket made with object lock the spec's default retention, and returns
// the lock as observed. Object lock itself cannot be added to a bucket: a bucket without it is
// reported (errObjectLockNotEnabled), never changed.
func (r *BucketReconciler) syncObjectLock(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool) (*storagev1alpha1.ObjectLock, error) {
	name, desired := b.Spec.BucketName, specObjectLock(b.Spec.ObjectLock)
	if !desired.Enabled {
		return nil, nil
	}
	observed, err := store.ObjectLock(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case !observed.Enabled:
		return nil, errObjectLockNotEnabled
	case observed == desired:
		return toStatusObjectLock(observed), nil
	}
	if err := store.PutObjectLock(ctx, name, desired); err != nil {
		return nil, err
	}
	if desired.Mode == "" {
		r.recordWrite(b, applied, "ObjectLock", "Removed the default retention of bucket %s, which its spec does not have", name)
	} else {
		r.recordWrite(b, applied, "ObjectLock", "Set the default retention of bucket %s to %s for %d days", name, desired.Mode, desired.Days)
	}
	if observed, err = store.ObjectLock(ctx, name); err != nil {
		return nil, err
	}
	return toStatusObjectLock(observed), nil
}

// syncLifecycle writes the spec's lifecycle rules, with those generated for the Bucket's users
// (see BucketUsers.LifecycleRules), when the bucket's differ, deletes the rules no one asks for
// any more, and returns the rules as observed.
func (r *BucketReconciler) syncLifecycle(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool,
	generated []storagev1alpha1.LifecycleRule) (*storagev1alpha1.BucketLifecycle, error) {
	name, desired := b.Spec.BucketName, specLifecycle(effectiveLifecycle(b.Spec.Lifecycle, generated))
	// The generated rules change without the Bucket's generation: what was applied counts only
	// while status shows them as they are now.
	applied = applied && generatedRecorded(generated, b.Status.Lifecycle)
	if desired == nil {
		if b.Status.Lifecycle == nil {
			return nil, nil // never managed: the bucket's rules are left as they are
		}
		if err := store.DeleteLifecycle(ctx, name); err != nil {
			return b.Status.Lifecycle, err
		}
		r.recordWrite(b, applied, "Lifecycle", "Deleted the lifecycle rules of bucket %s, which its spec no longer has", name)
		return nil, nil
	}
	observed, err := store.Lifecycle(ctx, name)
	if err != nil {
		return nil, err
	}
	if objectstore.LifecyclesEqual(desired, observed) ||
		(applied && objectstore.LifecyclesEqual(specLifecycle(b.Status.Lifecycle), observed)) {
		return toStatusLifecycle(observed), nil
	}
	if err := store.PutLifecycle(ctx, name, desired); err != nil {
		return nil, err
	}
	r.recordWrite(b, applied, "Lifecycle", "Set the lifecycle rules of bucket %s to its spec (%s)", name, plural(len(desired), "rule"))
	if observed, err = store.Lifecycle(ctx, name); err != nil {
		return nil, err
	}
	return toStatusLifecycle(observed), nil
}

// syncCORS writes the spec's CORS rules when the bucket's differ, deletes the rules a spec no
// longer has, and returns the rules as observed.
func (r *BucketReconciler) syncCORS(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool) (*storagev1alpha1.BucketCORS, error) {
	name, desired := b.Spec.BucketName, specCORS(b.Spec.CORS)
	if desired == nil {
		if b.Status.CORS == nil {
			return nil, nil // never managed: the bucket's rules are left as they are
		}
		if err := store.DeleteCORS(ctx, name); err != nil {
			return b.Status.CORS, err
		}
		r.recordWrite(b, applied, "CORS", "Deleted the CORS rules of bucket %s, which its spec no longer has", name)
		return nil, nil
	}
	observed, err := store.CORS(ctx, name)
	if err != nil {
		return nil, err
	}
	if objectstore.CORSEqual(desired, observed) || (applied && objectstore.CORSEqual(specCORS(b.Status.CORS), observed)) {
		return toStatusCORS(observed), nil
	}
	if err := store.PutCORS(ctx, name, desired); err != nil {
		return nil, err
	}
	r.recordWrite(b, applied, "CORS", "Set the CORS rules of bucket %s to its spec (%s)", name, plural(len(desired), "rule"))
	if observed, err = store.CORS(ctx, name); err != nil {
		return nil, err
	}
	return toStatusCORS(observed), nil
}
