package bucketsettings

import (
	"context"
	"fmt"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Encryption is the bucket's default encryption, read while the spec sets it; when the spec
// drops it, the bucket's own is deleted and the server's default applies.
type Encryption struct{}

func (Encryption) Info() Info {
	return Info{Field: "encryption", Title: "default encryption", Event: "Encryption", Unsupported: storagev1alpha1.ReasonEncryptionUnsupported}
}

func (Encryption) Wanted(in *Input) bool {
	return in.Bucket.Spec.Encryption != nil
}

func (Encryption) Observe(ctx context.Context, in *Input) (objectstore.Encryption, error) {
	return in.Store.Encryption(ctx, in.Name())
}

func (Encryption) Desired(in *Input, _ objectstore.Encryption) objectstore.Encryption {
	return specEncryption(in.Bucket.Spec.Encryption)
}

// sseAlgorithms maps the API's names to S3's.
var sseAlgorithms = map[storagev1alpha1.EncryptionAlgorithm]string{
	storagev1alpha1.EncryptionSSES3:  objectstore.SSES3,
	storagev1alpha1.EncryptionSSEKMS: objectstore.SSEKMS,
}

func specEncryption(e *storagev1alpha1.BucketEncryption) objectstore.Encryption {
	if e == nil {
		return objectstore.Encryption{}
	}
	return objectstore.Encryption{Algorithm: sseAlgorithms[e.Algorithm], KMSKeyID: e.KMSKeyID, BucketKeyEnabled: e.BucketKeyEnabled}
}

// Equal takes a key named by its id and by its ARN (which AWS may answer) for the same key.
func (Encryption) Equal(a, b objectstore.Encryption) bool {
	keyA, keyB := a.KMSKeyID, b.KMSKeyID
	a.KMSKeyID, b.KMSKeyID = "", ""
	return a == b && (keyA == keyB || strings.HasSuffix(keyA, "/"+keyB) || strings.HasSuffix(keyB, "/"+keyA))
}

func (Encryption) Write(ctx context.Context, in *Input, enc objectstore.Encryption) error {
	return in.Store.PutEncryption(ctx, in.Name(), enc)
}

func (Encryption) Describe(in *Input, _ objectstore.Encryption) string {
	e := in.Bucket.Spec.Encryption
	what := string(e.Algorithm)
	if e.KMSKeyID != "" {
		what += " with key " + e.KMSKeyID
	}
	return fmt.Sprintf("Set the default encryption of bucket %s to %s", in.Name(), what)
}

func (Encryption) Remove(ctx context.Context, in *Input) error {
	return in.Store.DeleteEncryption(ctx, in.Name())
}

func (Encryption) Removed(in *Input) string {
	return fmt.Sprintf("Deleted the default encryption of bucket %s, which its spec no longer has: the server's default applies", in.Name())
}

// Unsupported: besides a 501, a server without key management for default encryption answers
// a valid configuration with 400 InvalidArgument (Ceph RGW 16.2 does).
func (Encryption) Unsupported(err error) bool {
	return objectstore.ErrorCode(err) == "InvalidArgument"
}

func (Encryption) Recorded(in *Input) (objectstore.Encryption, bool) {
	return specEncryption(in.Bucket.Status.Encryption), in.Bucket.Status.Encryption != nil
}

func (Encryption) Record(_ *Input, st *storagev1alpha1.BucketStatus, enc objectstore.Encryption, _ bool) {
	st.Encryption = nil
	for name, alg := range sseAlgorithms {
		if enc.Algorithm == alg {
			st.Encryption = &storagev1alpha1.BucketEncryption{Algorithm: name, KMSKeyID: enc.KMSKeyID, BucketKeyEnabled: enc.BucketKeyEnabled}
		}
	}
}
