package bucketsettings

import (
	"context"
	"fmt"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// PublicAccessBlock is the bucket's public access block, read while the spec sets it; when the
// spec drops it, the bucket's block is deleted. It is a gate: it decides whether a public ACL or
// policy may be written, so it is brought to the spec before them.
type PublicAccessBlock struct{}

func (PublicAccessBlock) Info() Info {
	return Info{Field: "publicAccessBlock", Title: "public access blocks", Event: "PublicAccessBlock",
		Unsupported: storagev1alpha1.ReasonPublicAccessBlockUnsupported}
}

func (PublicAccessBlock) gate() {}

func (PublicAccessBlock) Wanted(in *Input) bool {
	return in.Bucket.Spec.PublicAccessBlock != nil
}

func (PublicAccessBlock) Observe(ctx context.Context, in *Input) (objectstore.PublicAccessBlock, error) {
	return in.Store.PublicAccessBlock(ctx, in.Name())
}

func (PublicAccessBlock) Desired(in *Input, _ objectstore.PublicAccessBlock) objectstore.PublicAccessBlock {
	return specBlock(in.Bucket.Spec.PublicAccessBlock)
}

func specBlock(b *storagev1alpha1.PublicAccessBlock) objectstore.PublicAccessBlock {
	if b == nil {
		return objectstore.PublicAccessBlock{}
	}
	return objectstore.PublicAccessBlock(*b)
}

func (PublicAccessBlock) Equal(a, b objectstore.PublicAccessBlock) bool { return a == b }

func (PublicAccessBlock) Write(ctx context.Context, in *Input, b objectstore.PublicAccessBlock) error {
	return in.Store.PutPublicAccessBlock(ctx, in.Name(), b)
}

func (PublicAccessBlock) Describe(in *Input, b objectstore.PublicAccessBlock) string {
	return fmt.Sprintf("Set the public access block of bucket %s to %+v", in.Name(), b)
}

func (PublicAccessBlock) Remove(ctx context.Context, in *Input) error {
	return in.Store.DeletePublicAccessBlock(ctx, in.Name())
}

func (PublicAccessBlock) Removed(in *Input) string {
	return fmt.Sprintf("Deleted the public access block of bucket %s, which its spec no longer has", in.Name())
}

func (PublicAccessBlock) Recorded(in *Input) (objectstore.PublicAccessBlock, bool) {
	return specBlock(in.Bucket.Status.PublicAccessBlock), in.Bucket.Status.PublicAccessBlock != nil
}

func (PublicAccessBlock) Record(_ *Input, st *storagev1alpha1.BucketStatus, b objectstore.PublicAccessBlock, ok bool) {
	st.PublicAccessBlock = nil
	if ok {
		block := storagev1alpha1.PublicAccessBlock(b)
		st.PublicAccessBlock = &block
	}
}
