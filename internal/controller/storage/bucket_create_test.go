package storage

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// On a server that keeps the owner's tags given at creation and refuses to create a bucket the
// account has (versitygw, AWS outside us-east-1), CreateBucket itself says whether the bucket is
// new: no HeadBucket first.
func TestANewBucketIsCreatedWithNoLookFirstWhereCreateBucketTells(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me", TagsOnCreate: true}
	r := bucketReconciler(cluster, store)

	_ = reconcileOnce(t, r, b)
	if ready := bucketReadyOf(t, cluster, b); ready.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	if calls := store.Calls(); slices.Contains(calls, "HeadBucket") || !slices.Contains(calls, "CreateBucket") {
		t.Errorf("calls %v: want CreateBucket and no HeadBucket", calls)
	}
	if tags := store.Bucket("ns-data").Tags; tags[OwnerUIDTag] != string(b.UID) {
		t.Errorf("the bucket was made without its owner's tags: %v", tags)
	}
}

// Without a look first, the record of a creation is written before CreateBucket even when the
// bucket is already there. An untagged bucket found that way was made outside the operator: it
// is left alone, and the record is cleared at once, so that the Bucket's deletion never takes
// the bucket for a creation of its own and deletes it.
func TestAnUntaggedBucketThatWasThereIsNeitherTakenNorDeleted(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me", TagsOnCreate: true}
	if _, err := store.CreateBucket(context.Background(), "ns-data", objectstore.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := bucketReconciler(cluster, store)

	_ = reconcileOnce(t, r, b)
	if ready := bucketReadyOf(t, cluster, b); ready.Reason != storagev1alpha1.ReasonBucketAlreadyExists {
		t.Errorf("Ready = %s %s, want %s", ready.Status, ready.Reason, storagev1alpha1.ReasonBucketAlreadyExists)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	if b.Status.CreatingBucket != "" || b.Status.BucketName != "" {
		t.Errorf("status records creating %q and made %q, want neither", b.Status.CreatingBucket, b.Status.BucketName)
	}

	deleting(t, cluster, b)
	_ = reconcileOnce(t, r, b)
	if store.Bucket("ns-data") == nil {
		t.Fatal("deleting the Bucket deleted a bucket made outside the operator")
	}
	if tags := store.Bucket("ns-data").Tags; len(tags) != 0 {
		t.Errorf("the bucket was tagged for the Bucket: %v", tags)
	}
}
