package bucketsettings

import (
	"context"
	"slices"
	"testing"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// A bucket made outside the operator, with settings of its own.
func foreignBucket(t *testing.T) *fakes3.Store {
	t.Helper()
	ctx := context.Background()
	store := &fakes3.Store{Owner: "AK"}
	if _, err := store.CreateBucket(ctx, "theirs", objectstore.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = store.PutVersioning(ctx, "theirs", "Enabled")
	_ = store.PutLifecycle(ctx, "theirs", []objectstore.LifecycleRule{{ID: "old", Enabled: true, ExpirationDays: 30}})
	_ = store.PutBucketTags(ctx, "theirs", map[string]string{"team": "web"})
	_ = store.PutPublicAccessBlock(ctx, "theirs", objectstore.PublicAccessBlock{IgnorePublicAcls: true})
	return store
}

func observed(spec storagev1alpha1.BucketSpec, store objectstore.Store) *Input {
	spec.BucketName, spec.ManagementPolicy = "theirs", storagev1alpha1.ManagementObserve
	return &Input{Bucket: &storagev1alpha1.Bucket{Spec: spec}, Store: store, Observe: true}
}

func TestObservingReadsAndRecordsEverySettingAndWritesNothing(t *testing.T) {
	store := foreignBucket(t)
	in := observed(storagev1alpha1.BucketSpec{}, store)
	before := len(store.Calls())
	res := Sync(context.Background(), in, func(string, string, string) { t.Error("an event while observing") }, All)
	if len(res.Failed) > 0 {
		t.Fatalf("failures: %+v", res.Failed)
	}
	calls := store.Calls()[before:]
	if w := writes(calls); len(w) > 0 {
		t.Errorf("observing wrote %v", w)
	}
	// The quota is the provider's, not S3's: without a provider it is left out.
	if s3Settings := len(All) - 1; len(calls) != s3Settings {
		t.Errorf("calls %v, want one read of each of the %d S3 settings", calls, s3Settings)
	}
	st := in.Bucket.Status
	if st.Versioning != "Enabled" || st.Lifecycle == nil || st.Tags["team"] != "web" || st.ACL == nil ||
		st.PublicAccessBlock == nil || !st.PublicAccessBlock.IgnorePublicAcls || st.Encryption == nil {
		t.Errorf("status does not show what the bucket has: %+v", st)
	}
}

func TestObservingSaysWhatManageWouldChange(t *testing.T) {
	store := foreignBucket(t)
	in := observed(storagev1alpha1.BucketSpec{
		Versioning: storagev1alpha1.VersioningEnabled,                                             // as the bucket has it
		Tags:       map[string]string{"team": "data"},                                             // not as it has them
		Encryption: &storagev1alpha1.BucketEncryption{Algorithm: storagev1alpha1.EncryptionSSES3}, // AWS's default: as it has it
	}, store)
	res := Sync(context.Background(), in, func(string, string, string) {}, All)
	var fields []string
	for _, d := range res.Differ {
		fields = append(fields, d.Field)
	}
	// The ACL is private, as a spec without cannedAcl asks; the spec asks for no lifecycle,
	// so the bucket's own rules are not a difference.
	if want := []string{"tags"}; !slices.Equal(fields, want) {
		t.Errorf("differ %v, want %v", fields, want)
	}
	// A setting the server lacks is no failure unless the spec asks for it.
	store.Fail("Logging", fakes3.Failure{Err: fakes3.NotImplemented})
	if res := Sync(context.Background(), in, func(string, string, string) {}, All); len(res.Failed) > 0 {
		t.Errorf("failures %+v for a setting the spec does not ask for", res.Failed)
	}
	in.Bucket.Spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "logs"}
	store.Fail("Logging", fakes3.Failure{Err: fakes3.NotImplemented})
	if res := Sync(context.Background(), in, func(string, string, string) {}, All); len(res.Failed) != 1 || !res.Failed[0].Unsupported {
		t.Errorf("failures %+v, want logging, unsupported", res.Failed)
	}
}

func TestWhatWasObservedIsForgottenSoManageRemovesNothingOfIt(t *testing.T) {
	store := foreignBucket(t)
	in := observed(storagev1alpha1.BucketSpec{}, store)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	Forget(in, &in.Bucket.Status, All)
	in.Observe, in.Bucket.Spec.ManagementPolicy = false, storagev1alpha1.ManagementManage
	Sync(context.Background(), in, func(string, string, string) {}, All)
	got := store.Bucket("theirs")
	if len(got.Lifecycle) != 1 || got.PublicAccessBlock != (objectstore.PublicAccessBlock{IgnorePublicAcls: true}) {
		t.Errorf("Manage removed what it never wrote: lifecycle %+v, block %+v", got.Lifecycle, got.PublicAccessBlock)
	}
}
