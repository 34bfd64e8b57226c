package bucketsettings

import (
	"context"
	"fmt"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// OwnershipControls is the bucket's object ownership, read while the spec names one. A spec
// that stops naming it leaves the bucket's as it is, as versioning does: removing the controls
// would turn ACLs back on behind the spec's back, and Ceph RGW 16.2 takes the DELETE that
// removes them for a DeleteBucket. It is a gate: under BucketOwnerEnforced S3 refuses ACLs, so
// it is brought to the spec before the ACL.
type OwnershipControls struct{}

func (OwnershipControls) Info() Info {
	return Info{Field: "ownershipControls", Title: "ownership controls", Event: "OwnershipControls",
		Unsupported: storagev1alpha1.ReasonOwnershipControlsUnsupported}
}

func (OwnershipControls) gate() {}

func (OwnershipControls) Wanted(in *Input) bool { return in.Bucket.Spec.OwnershipControls != "" }

func (OwnershipControls) Observe(ctx context.Context, in *Input) (string, error) {
	return in.Store.OwnershipControls(ctx, in.Name())
}

func (OwnershipControls) Desired(in *Input, _ string) string {
	return string(in.Bucket.Spec.OwnershipControls)
}

// Equal takes a bucket without ownership controls ("") for ObjectWriter: ACLs apply and the
// uploader owns what it uploads in both, on AWS and on a server that knows no controls.
func (OwnershipControls) Equal(a, b string) bool { return writerIfNone(a) == writerIfNone(b) }

func writerIfNone(ownership string) string {
	if ownership == "" {
		return string(storagev1alpha1.ObjectOwnershipObjectWriter)
	}
	return ownership
}

// Write makes the bucket's ACL private before it turns ACLs off: AWS refuses
// BucketOwnerEnforced over an ACL that grants anyone but the owner, and versitygw takes it but
// keeps that ACL and then refuses every ACL write. Admission holds the spec's ACL to private
// under BucketOwnerEnforced, so this writes nothing the ACL would not.
func (OwnershipControls) Write(ctx context.Context, in *Input, ownership string) error {
	if ownership == string(storagev1alpha1.ObjectOwnershipBucketOwnerEnforced) {
		acl, err := in.Store.ACL(ctx, in.Name())
		if err != nil {
			return err
		}
		if private := objectstore.DesiredACL(acl.Owner, string(storagev1alpha1.CannedACLPrivate), nil); !acl.Equal(private) {
			if err := in.Store.PutACL(ctx, in.Name(), private); err != nil {
				return err
			}
		}
	}
	return in.Store.PutOwnershipControls(ctx, in.Name(), ownership)
}

func (OwnershipControls) Describe(in *Input, ownership string) string {
	return fmt.Sprintf("Set the object ownership of bucket %s to %s", in.Name(), ownership)
}

// Unsupported: a server without ownership controls may answer their PUT with 400
// InvalidArgument rather than 501 (Ceph RGW 16.2 does).
func (OwnershipControls) Unsupported(err error) bool {
	return objectstore.ErrorCode(err) == "InvalidArgument"
}

func (OwnershipControls) Recorded(in *Input) (string, bool) {
	return in.Bucket.Status.OwnershipControls, in.Bucket.Status.OwnershipControls != ""
}

func (OwnershipControls) Record(_ *Input, st *storagev1alpha1.BucketStatus, ownership string, _ bool) {
	st.OwnershipControls = ownership
}
