package bucketsettings

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/smithy-go"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// secured is the fixture's Bucket with encryption, a public access block and access logging,
// and its ACL private (a public one is refused under the block).
func secured(t *testing.T) (*Input, *fakes3.Store) {
	t.Helper()
	in, store := fixture(t)
	if _, err := store.CreateBucket(context.Background(), "logs", objectstore.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := &in.Bucket.Spec
	spec.CannedACL = storagev1alpha1.CannedACLPrivate
	spec.Encryption = &storagev1alpha1.BucketEncryption{Algorithm: storagev1alpha1.EncryptionSSEKMS, KMSKeyID: "key-1", BucketKeyEnabled: true}
	spec.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicAcls: true, BlockPublicPolicy: true}
	spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "logs", TargetPrefix: "b/"}
	return in, store
}

func TestEncryptionBlockAndLoggingAreAppliedObservedAndThenOnlyRead(t *testing.T) {
	in, store := secured(t)
	before := len(store.Calls())
	if failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed; len(failed) > 0 {
		t.Fatalf("Sync failed: %+v", failed)
	}
	for _, w := range []string{"PutEncryption", "PutPublicAccessBlock", "PutLogging"} {
		if !slices.Contains(writes(store.Calls()[before:]), w) {
			t.Errorf("writes %v lack %s", writes(store.Calls()[before:]), w)
		}
	}
	got := store.Bucket("b")
	if got.Encryption != (objectstore.Encryption{Algorithm: objectstore.SSEKMS, KMSKeyID: "key-1", BucketKeyEnabled: true}) ||
		got.PublicAccessBlock != (objectstore.PublicAccessBlock{BlockPublicAcls: true, BlockPublicPolicy: true}) ||
		got.Logging != (objectstore.Logging{TargetBucket: "logs", TargetPrefix: "b/"}) {
		t.Errorf("the server has %+v", got)
	}
	st := in.Bucket.Status
	if st.Encryption == nil || st.Encryption.Algorithm != storagev1alpha1.EncryptionSSEKMS || st.PublicAccessBlock == nil ||
		!st.PublicAccessBlock.BlockPublicAcls || st.Logging == nil || st.Logging.TargetBucket != "logs" {
		t.Errorf("status does not show what was observed: encryption %+v, block %+v, logging %+v", st.Encryption, st.PublicAccessBlock, st.Logging)
	}

	in.Applied = true
	before = len(store.Calls())
	Sync(context.Background(), in, func(string, string, string) {}, All)
	if w := writes(store.Calls()[before:]); len(w) > 0 {
		t.Errorf("a bucket in sync was written: %v", w)
	}
}

func TestAKMSKeyTheServerNamesByItsARNIsTheKeyTheSpecNames(t *testing.T) {
	in, _ := secured(t)
	arn := objectstore.Encryption{Algorithm: objectstore.SSEKMS, KMSKeyID: "arn:aws:kms:us-east-1:111122223333:key/key-1", BucketKeyEnabled: true}
	if !(Encryption{}).Equal(specEncryption(in.Bucket.Spec.Encryption), arn) {
		t.Error("key-1 and its ARN compare different")
	}
	other := arn
	other.KMSKeyID = "arn:aws:kms:us-east-1:111122223333:key/key-10"
	if (Encryption{}).Equal(specEncryption(in.Bucket.Spec.Encryption), other) {
		t.Error("key-1 and the ARN of key-10 compare equal")
	}
}

func TestDriftInEncryptionBlockAndLoggingIsRestoredWithOneWarningEach(t *testing.T) {
	in, store := secured(t)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	in.Applied = true
	ctx := context.Background()
	_ = store.DeleteEncryption(ctx, "b")
	_ = store.DeletePublicAccessBlock(ctx, "b")
	_ = store.PutLogging(ctx, "b", objectstore.Logging{})
	ev := &events{}
	Sync(ctx, in, ev.emit, All)
	want := []string{"Warning EncryptionDriftCorrected", "Warning LoggingDriftCorrected", "Warning PublicAccessBlockDriftCorrected"}
	slices.Sort(ev.got)
	if !slices.Equal(ev.got, want) {
		t.Errorf("events %v, want %v", ev.got, want)
	}
	if got := store.Bucket("b"); got.Encryption.Algorithm != objectstore.SSEKMS || !got.PublicAccessBlock.BlockPublicAcls || got.Logging.TargetBucket != "logs" {
		t.Errorf("drift not restored: %+v", got)
	}
}

func TestDroppingEncryptionBlockAndLoggingRemovesThem(t *testing.T) {
	in, store := secured(t)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	in.Bucket.Spec.Encryption, in.Bucket.Spec.PublicAccessBlock, in.Bucket.Spec.Logging = nil, nil, nil
	Sync(context.Background(), in, func(string, string, string) {}, All)
	got := store.Bucket("b")
	if got.Encryption.Algorithm != objectstore.SSES3 || got.PublicAccessBlock != (objectstore.PublicAccessBlock{}) || got.Logging != (objectstore.Logging{}) {
		t.Errorf("after the spec dropped them the server has encryption %+v (want AWS's default, SSE-S3), block %+v, logging %+v",
			got.Encryption, got.PublicAccessBlock, got.Logging)
	}
	if st := in.Bucket.Status; st.Encryption != nil || st.PublicAccessBlock != nil || st.Logging != nil {
		t.Errorf("status still shows dropped settings: %+v %+v %+v", st.Encryption, st.PublicAccessBlock, st.Logging)
	}
}

// The block decides whether a public ACL may be written, so it goes first: lifting it and
// making the bucket public in one change works in one pass, whatever order the rest runs in.
func TestThePublicAccessBlockIsChangedBeforeTheACLItJudges(t *testing.T) {
	for range 20 {
		in, store := secured(t)
		Sync(context.Background(), in, func(string, string, string) {}, All)
		in.Bucket.Spec.PublicAccessBlock = nil
		in.Bucket.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
		if failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed; len(failed) > 0 {
			t.Fatalf("lifting the block and making the bucket public failed: %+v", failed)
		}
		if !objectstore.IsPublicACL(store.Bucket("b").ACL) {
			t.Fatal("the bucket is not public")
		}
	}
}

func TestEncryptionAServerCannotApplyIsUnsupportedAndTheRestApplied(t *testing.T) {
	for name, answer := range map[string]error{
		"versitygw's 501":                 fakes3.NotImplemented,
		"Ceph RGW 16.2's InvalidArgument": &smithy.GenericAPIError{Code: "InvalidArgument"},
	} {
		t.Run(name, func(t *testing.T) {
			in, store := secured(t)
			store.Fail("PutEncryption", fakes3.Failure{Err: answer})
			failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed
			if len(failed) != 1 || !failed[0].Unsupported || failed[0].Info.Unsupported != storagev1alpha1.ReasonEncryptionUnsupported {
				t.Fatalf("failures %+v, want encryption alone, unsupported", failed)
			}
			if got := store.Bucket("b"); !got.PublicAccessBlock.BlockPublicAcls || got.Logging.TargetBucket != "logs" || got.Versioning != "Enabled" {
				t.Errorf("the rest of the spec was not applied: %+v", got)
			}
		})
	}
	// Any other refusal is the spec's problem, not the server's.
	in, store := secured(t)
	store.Fail("PutEncryption", fakes3.Failure{Err: &smithy.GenericAPIError{Code: "AccessDenied"}})
	if failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed; len(failed) != 1 || failed[0].Unsupported {
		t.Errorf("an AccessDenied counted as unsupported: %+v", failed)
	}
}

func TestLogsGoOnlyToABucketOfTheNamespaceOrOfNoOne(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		tags map[string]string
		ok   bool
	}{
		{"a bucket of the namespace's Buckets", map[string]string{storagev1alpha1.BucketOwnerTag: "team-a/logs", storagev1alpha1.BucketOwnerUIDTag: "u-1"}, true},
		{"a bucket the operator never claimed", map[string]string{"team": "a"}, true},
		{"a COSI bucket", map[string]string{storagev1alpha1.COSIBucketTag: "bc-1"}, false},
		{"another namespace's Bucket's", map[string]string{storagev1alpha1.BucketOwnerTag: "team-b/logs"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, store := secured(t)
			in.Bucket.Namespace = "team-a"
			in.Bucket.Spec.Encryption, in.Bucket.Spec.PublicAccessBlock = nil, nil
			if err := store.PutBucketTags(ctx, "logs", c.tags); err != nil {
				t.Fatal(err)
			}
			failed := Sync(ctx, in, func(string, string, string) {}, All).Failed
			logged := store.Bucket("b").Logging != objectstore.Logging{}
			if c.ok && (len(failed) > 0 || !logged) {
				t.Errorf("failed %+v, logging set %v; want logging set", failed, logged)
			}
			if !c.ok && (logged || len(failed) != 1 || !errors.Is(failed[0].Err, ErrLoggingTargetClaimed)) {
				t.Errorf("failed %+v, logging set %v; want ErrLoggingTargetClaimed and no logging", failed, logged)
			}
		})
	}
}
