package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// versionsOf are n keys of two versions each, every fourth with a delete marker on top, in the
// order S3 lists them: by key, newest first.
func versionsOf(n int) []objectstore.ObjectVersion {
	var out []objectstore.ObjectVersion
	for i := range n {
		key := fmt.Sprintf("k%04d", i)
		if i%4 == 0 {
			out = append(out, objectstore.ObjectVersion{Key: key, VersionID: "v3", DeleteMarker: true})
		}
		out = append(out, objectstore.ObjectVersion{Key: key, VersionID: "v2"}, objectstore.ObjectVersion{Key: key, VersionID: "v1"})
	}
	return out
}

func TestAnEmptyingThatStopsGoesOnFromItsRecordedMarkerListingNothingTwice(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Spec.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true, MaxObjects: 5000}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me"}
	r := bucketReconciler(cluster, store)
	r.EmptyBatchesPerPass = 1
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	all := versionsOf(1200) // 2,700: three batches
	held := all[4]          // in the first batch
	store.Buckets["ns-data"].Versions = append([]objectstore.ObjectVersion(nil), all...)
	store.Buckets["ns-data"].Versioning = "Enabled"
	store.Buckets["ns-data"].Holds = map[objectstore.ObjectVersion]objectstore.Hold{held: {LegalHold: true}}
	deleting(t, cluster, b)

	// The first pass counts, then deletes one batch (its budget) and records where it stopped.
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	e := b.Status.Emptying
	// The batch ended inside k0444 (all[999] is its first version): it resumes after k0443,
	// the last key it held whole.
	if e == nil || e.Counted != 2700 || e.KeyMarker != "k0443" || e.VersionIDMarker != "" ||
		e.RemovedVersions+e.RemovedDeleteMarkers != 999 || e.Locked != 1 {
		t.Fatalf("after one batch status.emptying = %+v; want 2700 counted, 999 removed, 1 locked, resuming after k0443", e)
	}

	// The second pass deletes its batch but stops before recording it (a crash).
	store.Fail("DeleteVersions", fakes3.Failure{Err: errLost, AfterActing: true})
	if err := reconcileOnce(t, r, b); err == nil {
		t.Fatal("the pass whose answer was lost succeeded")
	}
	// The third resumes from the recorded marker and ends the round on the held version.
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	if got := store.Bucket("ns-data").Versions; len(got) != 1 || got[0] != held {
		t.Fatalf("after the first round the bucket holds %v; want only the held version", got)
	}
	// Once the hold is lifted, the next round deletes it, and the bucket.
	delete(store.Buckets["ns-data"].Holds, held)
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	if store.Bucket("ns-data") != nil {
		t.Fatalf("bucket ns-data is still there, holding %d versions", len(store.Bucket("ns-data").Versions))
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
		t.Errorf("the Bucket is still there: %v", b.Status.Conditions)
	}

	// Each version was listed twice: once counted, once deleted; none again after the stop.
	// The held one was listed once more, by the second round.
	seen := map[objectstore.ObjectVersion]int{}
	for _, v := range store.Listed() {
		seen[v]++
	}
	for _, v := range all {
		if want := map[bool]int{false: 2, true: 3}[v == held]; seen[v] != want {
			t.Errorf("%v was listed %d times; want %d", v, seen[v], want)
		}
	}
	// The event counts what the server confirmed: the batch whose answer was lost is not in it.
	if got := eventsWith(r, "BucketEmptied"); len(got) != 1 || !strings.Contains(got[0],
		"Removed 1511 object versions and 189 delete markers from bucket ns-data") {
		t.Errorf("BucketEmptied events %q; want one counting what the server confirmed deleted", got)
	}
}

func TestAnEmptyingLeavesWhatObjectLockKeepsAndSaysWhat(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Spec.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me"}
	r := bucketReconciler(cluster, store)
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	all := versionsOf(10)
	held := all[4]
	store.Buckets["ns-data"].Versions = append([]objectstore.ObjectVersion(nil), all...)
	store.Buckets["ns-data"].Versioning = "Enabled"
	store.Buckets["ns-data"].Holds = map[objectstore.ObjectVersion]objectstore.Hold{held: {LegalHold: true}}
	deleting(t, cluster, b)

	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonDeleting {
		t.Errorf("Ready = %s: %s; want Deleting", ready.Reason, ready.Message)
	}
	blocked := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
	if blocked == nil || blocked.Reason != storagev1alpha1.ReasonObjectsLocked || !strings.Contains(blocked.Message,
		"still holds 1 object version that object lock keeps, such as k0001 version v1 (under legal hold)") {
		t.Errorf("DeletionBlocked = %+v; want ObjectsLocked naming k0001 version v1", blocked)
	}
	if got := store.Bucket("ns-data").Versions; len(got) != 1 || got[0] != held {
		t.Errorf("the bucket holds %v; want only the held version", got)
	}
}

func TestABucketWrittenToWhileEmptiedIsCountedAgainAgainstTheSameCap(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Spec.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true, MaxObjects: 2000}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me"}
	r := bucketReconciler(cluster, store)
	r.EmptyBatchesPerPass = 1
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	store.Buckets["ns-data"].Versions = versionsOf(600) // 1,350: two batches
	store.Buckets["ns-data"].Versioning = "Enabled"
	deleting(t, cluster, b)
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}

	// 700 more are written behind the marker while the second batch runs: 1,350 and 700 are
	// more than the cap of 2,000.
	var written []objectstore.ObjectVersion
	for i := range 700 {
		written = append(written, objectstore.ObjectVersion{Key: fmt.Sprintf("a%04d", i), VersionID: "v1"})
	}
	store.Buckets["ns-data"].Versions = append(written, store.Buckets["ns-data"].Versions...)
	for range 2 {
		if err := reconcileOnce(t, r, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	blocked := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
	if blocked == nil || blocked.Reason != storagev1alpha1.ReasonTooManyObjects || !strings.Contains(blocked.Message,
		"holds more than 2000 object versions and delete markers, the most spec.deletion.maxObjects lets its deletion remove; "+
			"1350 were removed before more were written, and nothing more is") {
		t.Errorf("DeletionBlocked = %+v; want TooManyObjects counting the 1350 removed", blocked)
	}
	if got := len(store.Bucket("ns-data").Versions); got != 700 {
		t.Errorf("the bucket holds %d versions; want the 700 written meanwhile, untouched", got)
	}
}

// eventsWith are the recorded events of reason.
func eventsWith(r *BucketReconciler, reason string) []string {
	rec := r.Recorder.(*events.FakeRecorder)
	var out []string
	for {
		select {
		case e := <-rec.Events:
			if strings.Contains(e, " "+reason+" ") {
				out = append(out, e)
			}
		default:
			return out
		}
	}
}
