package bucketsettings

import (
	"context"
	"fmt"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// ObjectLock is the bucket's object lock and its default retention, read while the spec has
// one. S3 turns object lock on only when a bucket is created (objectstore.CreateOptions), so
// here it is only checked (ErrObjectLockNotEnabled), never added; the default retention is
// kept as the spec says.
type ObjectLock struct{}

func (ObjectLock) Info() Info {
	return Info{Field: "objectLock", Title: "object lock", Event: "ObjectLock", Unsupported: storagev1alpha1.ReasonObjectLockUnsupported}
}

func (ObjectLock) Wanted(in *Input) bool { return in.Bucket.Spec.ObjectLock != nil }

func (ObjectLock) Observe(ctx context.Context, in *Input) (objectstore.ObjectLock, error) {
	return in.Store.ObjectLock(ctx, in.Name())
}

func (ObjectLock) Check(observed objectstore.ObjectLock) error {
	if !observed.Enabled {
		return ErrObjectLockNotEnabled
	}
	return nil
}

func (ObjectLock) Desired(in *Input, _ objectstore.ObjectLock) objectstore.ObjectLock {
	return SpecObjectLock(in.Bucket.Spec.ObjectLock)
}

func (ObjectLock) Equal(a, b objectstore.ObjectLock) bool { return a == b }

func (ObjectLock) Write(ctx context.Context, in *Input, lock objectstore.ObjectLock) error {
	return in.Store.PutObjectLock(ctx, in.Name(), lock)
}

func (ObjectLock) Describe(in *Input, lock objectstore.ObjectLock) string {
	if lock.Mode == "" {
		return fmt.Sprintf("Removed the default retention of bucket %s, which its spec does not have", in.Name())
	}
	return fmt.Sprintf("Set the default retention of bucket %s to %s for %d days", in.Name(), lock.Mode, lock.Days)
}

func (ObjectLock) Recorded(in *Input) (objectstore.ObjectLock, bool) {
	st := in.Bucket.Status.ObjectLock
	if st == nil {
		return objectstore.ObjectLock{}, false
	}
	return SpecObjectLock(st), true
}

func (ObjectLock) Record(_ *Input, st *storagev1alpha1.BucketStatus, lock objectstore.ObjectLock, _ bool) {
	st.ObjectLock = nil
	if lock.Enabled {
		st.ObjectLock = &storagev1alpha1.ObjectLock{}
		if lock.Mode != "" {
			st.ObjectLock.DefaultRetention = &storagev1alpha1.DefaultRetention{Mode: storagev1alpha1.RetentionMode(lock.Mode), Days: lock.Days}
		}
	}
}

// SpecObjectLock is the object lock a spec (or status) describes; Enabled is false for none.
func SpecObjectLock(l *storagev1alpha1.ObjectLock) objectstore.ObjectLock {
	if l == nil {
		return objectstore.ObjectLock{}
	}
	out := objectstore.ObjectLock{Enabled: true}
	if d := l.DefaultRetention; d != nil {
		out.Mode, out.Days = string(d.Mode), d.Days
	}
	return out
}
