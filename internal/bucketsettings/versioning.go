package bucketsettings

import (
	"context"
	"fmt"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Versioning is the bucket's versioning state: Enabled or Suspended, read while the spec names
// one. A spec that stops naming it leaves the bucket as the server has it: versions already kept
// stay either way.
type Versioning struct{}

func (Versioning) Info() Info {
	return Info{Field: "versioning", Title: "bucket versioning", Event: "Versioning", Unsupported: storagev1alpha1.ReasonVersioningUnsupported}
}

func (Versioning) Wanted(in *Input) bool { return in.Bucket.Spec.Versioning != "" }

func (Versioning) Observe(ctx context.Context, in *Input) (string, error) {
	return in.Store.Versioning(ctx, in.Name())
}

func (Versioning) Desired(in *Input, _ string) string { return string(in.Bucket.Spec.Versioning) }

// Equal takes a bucket never versioned ("") for Suspended: nothing new is versioned in either.
func (Versioning) Equal(a, b string) bool { return suspendedIfNever(a) == suspendedIfNever(b) }

func suspendedIfNever(state string) string {
	if state == "" {
		return string(storagev1alpha1.VersioningSuspended)
	}
	return state
}

func (Versioning) Write(ctx context.Context, in *Input, state string) error {
	return in.Store.PutVersioning(ctx, in.Name(), state)
}

func (Versioning) Describe(in *Input, state string) string {
	return fmt.Sprintf("Set the versioning of bucket %s to %s", in.Name(), state)
}

func (Versioning) Recorded(in *Input) (string, bool) {
	return in.Bucket.Status.Versioning, in.Bucket.Status.Versioning != ""
}

func (Versioning) Record(_ *Input, st *storagev1alpha1.BucketStatus, state string, _ bool) {
	st.Versioning = state
}
