package bucketsettings

import (
	"context"
	"fmt"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Logging is where the bucket's server access logs go, read while the spec sets it; when the
// spec drops it, logging is turned off.
type Logging struct{}

func (Logging) Info() Info {
	return Info{Field: "logging", Title: "server access logging", Event: "Logging", Unsupported: storagev1alpha1.ReasonLoggingUnsupported}
}

func (Logging) Wanted(in *Input) bool {
	return in.Bucket.Spec.Logging != nil
}

func (Logging) Observe(ctx context.Context, in *Input) (objectstore.Logging, error) {
	return in.Store.Logging(ctx, in.Name())
}

func (Logging) Desired(in *Input, _ objectstore.Logging) objectstore.Logging {
	return specLogging(in.Bucket.Spec.Logging)
}

func specLogging(l *storagev1alpha1.BucketLogging) objectstore.Logging {
	if l == nil {
		return objectstore.Logging{}
	}
	return objectstore.Logging{TargetBucket: l.TargetBucket, TargetPrefix: l.TargetPrefix}
}

func (Logging) Equal(a, b objectstore.Logging) bool { return a == b }

// Write checks the target first: logs written with the account's keys must land only in a
// bucket of this namespace's Buckets, or one the operator never claimed (admission checks that a
// Bucket of the namespace names it; the server's tags say whose it really is).
func (Logging) Write(ctx context.Context, in *Input, l objectstore.Logging) error {
	if l.TargetBucket != "" && l.TargetBucket != in.Name() {
		tags, err := in.Store.BucketTags(ctx, l.TargetBucket)
		if err != nil {
			return err
		}
		if other := ClaimOtherThan(tags, inNamespace(in.Bucket.Namespace)); other != "" {
			return fmt.Errorf("%w: bucket %s carries %s", ErrLoggingTargetClaimed, l.TargetBucket, other)
		}
	}
	return in.Store.PutLogging(ctx, in.Name(), l)
}

// inNamespace takes the tags of a Bucket of namespace ns as its own (an owner tag too long to
// name it is a digest, and taken as well: admission checked that ns has a Bucket of that bucket).
func inNamespace(ns string) func(key, value string) bool {
	return func(key, value string) bool {
		return key == storagev1alpha1.BucketOwnerUIDTag ||
			key == storagev1alpha1.BucketOwnerTag && (strings.HasPrefix(value, ns+"/") || strings.HasPrefix(value, "sha256:"))
	}
}

func (Logging) Describe(in *Input, l objectstore.Logging) string {
	return fmt.Sprintf("Sent the access logs of bucket %s to bucket %s under %q", in.Name(), l.TargetBucket, l.TargetPrefix)
}

func (Logging) Remove(ctx context.Context, in *Input) error {
	return in.Store.PutLogging(ctx, in.Name(), objectstore.Logging{})
}

func (Logging) Removed(in *Input) string {
	return fmt.Sprintf("Turned off the access logging of bucket %s, which its spec no longer has", in.Name())
}

func (Logging) Recorded(in *Input) (objectstore.Logging, bool) {
	return specLogging(in.Bucket.Status.Logging), in.Bucket.Status.Logging != nil
}

func (Logging) Record(_ *Input, st *storagev1alpha1.BucketStatus, l objectstore.Logging, _ bool) {
	st.Logging = nil
	if l != (objectstore.Logging{}) {
		st.Logging = &storagev1alpha1.BucketLogging{TargetBucket: l.TargetBucket, TargetPrefix: l.TargetPrefix}
	}
}
