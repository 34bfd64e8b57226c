package storage

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// featureBucket is a Bucket asking for every feature, over a Ready Contract.
func featureBucket() *storagev1alpha1.Bucket {
	b := newTestBucket("feat", "ns-feat", storagev1alpha1.ReclaimPolicyRetain)
	b.Finalizers = []string{Finalizer}
	b.Spec.Versioning = storagev1alpha1.VersioningEnabled
	b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
		{ID: "backups", Prefix: "backups/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)}},
	}}
	b.Spec.CORS = &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{
		{AllowedOrigins: []string{"https://app.example.com"}, AllowedMethods: []storagev1alpha1.CORSMethod{"GET", "PUT"}},
	}}
	b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{
		Mode: storagev1alpha1.RetentionGovernance, Days: 30}}
	return b
}

// writes lists the calls that change something.
func writes(calls []string) []string {
	var out []string
	for _, c := range calls {
		if objectstore.IsMutating(c) {
			out = append(out, c)
		}
	}
	return out
}

// passes reconciles b n times, returning the last result and error.
func passes(t *testing.T, r *BucketReconciler, b *storagev1alpha1.Bucket, n int) (ctrl.Result, error) {
	t.Helper()
	var res ctrl.Result
	var err error
	for range n {
		res, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	}
	return res, err
}

func bucketReadyOf(t *testing.T, c client.Client, b *storagev1alpha1.Bucket) metav1.Condition {
	t.Helper()
	return readyOf(t, c, b, func() []metav1.Condition { return b.Status.Conditions })
}

func TestEveryFeatureIsAppliedObservedAndThenLeftAlone(t *testing.T) {
	b := featureBucket()
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "AK"}
	r := bucketReconciler(cluster, store)

	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatalf("reconciling: %v", err)
	}
	if ready := bucketReadyOf(t, cluster, b); ready.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	got := store.Bucket("ns-feat")
	want := objectstore.ObjectLock{Enabled: true, Mode: "GOVERNANCE", Days: 30}
	if got.ObjectLock != want || got.Versioning != "Enabled" {
		t.Errorf("server has lock %+v and versioning %q, want %+v and Enabled", got.ObjectLock, got.Versioning, want)
	}
	if !objectstore.LifecyclesEqual(got.Lifecycle, bucketsettings.SpecLifecycle(b.Spec.Lifecycle.Rules)) || !objectstore.CORSEqual(got.CORS, bucketsettings.SpecCORS(b.Spec.CORS)) {
		t.Errorf("server has lifecycle %+v and CORS %+v", got.Lifecycle, got.CORS)
	}
	if b.Status.Versioning != "Enabled" || b.Status.ObjectLock == nil || b.Status.Lifecycle == nil || b.Status.CORS == nil {
		t.Errorf("status does not show what was observed: %+v", b.Status)
	}

	before, version := len(store.Calls()), b.ResourceVersion
	if _, err := passes(t, r, b, 3); err != nil {
		t.Fatalf("resyncing: %v", err)
	}
	if w := writes(store.Calls()[before:]); len(w) != 0 {
		t.Errorf("resyncs of an unchanged Bucket wrote %v", w)
	}
	if bucketReadyOf(t, cluster, b); b.ResourceVersion != version {
		t.Errorf("resyncs of an unchanged Bucket wrote its status")
	}
}

func TestDriftInEveryFeatureIsRestoredWithAnEvent(t *testing.T) {
	b := featureBucket()
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "AK"}
	r := bucketReconciler(cluster, store)
	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatal(err)
	}
	recorder := events.NewFakeRecorder(100)
	r.Recorder = recorder

	ctx := context.Background()
	_ = store.PutVersioning(ctx, "ns-feat", "Suspended")
	_ = store.PutLifecycle(ctx, "ns-feat", nil)
	_ = store.PutCORS(ctx, "ns-feat", []objectstore.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"DELETE"}}})
	_ = store.PutObjectLock(ctx, "ns-feat", objectstore.ObjectLock{Enabled: true, Mode: "GOVERNANCE", Days: 1})
	if _, err := passes(t, r, b, 1); err != nil {
		t.Fatal(err)
	}
	got := store.Bucket("ns-feat")
	if got.Versioning != "Enabled" || got.ObjectLock.Days != 30 || len(got.Lifecycle) != 1 || !objectstore.CORSEqual(got.CORS, bucketsettings.SpecCORS(b.Spec.CORS)) {
		t.Errorf("drift not restored: %+v", got)
	}
	close(recorder.Events)
	var reasons []string
	for e := range recorder.Events {
		reasons = append(reasons, strings.Fields(e)[1])
	}
	for _, want := range []string{"VersioningDriftCorrected", "LifecycleDriftCorrected", "CORSDriftCorrected", "ObjectLockDriftCorrected"} {
		if !slices.Contains(reasons, want) {
			t.Errorf("events %v lack %s", reasons, want)
		}
	}
}

func TestAFeatureTheServerLacksIsReportedAndTheRestApplied(t *testing.T) {
	b := featureBucket()
	b.Spec.ObjectLock = nil
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "AK"}
	store.Fail("Lifecycle", fakes3.Failure{Err: fakes3.NotImplemented}, fakes3.Failure{Err: fakes3.NotImplemented})
	r := bucketReconciler(cluster, store)

	res, err := passes(t, r, b, 2)
	if err != nil || res.RequeueAfter != r.ResyncPeriod {
		t.Errorf("a pass ended with %+v, %v; want a look again after the resync period (%v) and no error", res, err, r.ResyncPeriod)
	}
	ready := bucketReadyOf(t, cluster, b)
	if ready.Status != metav1.ConditionFalse || ready.Reason != storagev1alpha1.ReasonLifecycleUnsupported ||
		!strings.Contains(ready.Message, "spec.lifecycle: NotImplemented") {
		t.Errorf("Ready = %s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	got := store.Bucket("ns-feat")
	if got.Versioning != "Enabled" || len(got.CORS) != 1 {
		t.Errorf("the features the server has were not applied: %+v", got)
	}
	if slices.Contains(store.Calls(), "PutLifecycle") {
		t.Errorf("lifecycle was written to a server that does not read it: %v", store.Calls())
	}
	if b.Status.Lifecycle != nil {
		t.Errorf("status shows lifecycle %+v the server never answered", b.Status.Lifecycle)
	}

	// The server gains the feature: the next look applies it.
	if _, err := passes(t, r, b, 1); err != nil {
		t.Fatal(err)
	}
	if ready := bucketReadyOf(t, cluster, b); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %s %s: %s once the server implements lifecycle", ready.Status, ready.Reason, ready.Message)
	}
}

func TestAnAdoptedBucketWithoutObjectLockIsReportedNotChanged(t *testing.T) {
	b := featureBucket()
	b.Status.BucketName = "ns-feat"
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "AK"}
	if _, err := store.CreateBucket(context.Background(), "ns-feat", objectstore.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := bucketReconciler(cluster, store)

	if _, err := passes(t, r, b, 1); err != nil {
		t.Fatal(err)
	}
	if ready := bucketReadyOf(t, cluster, b); ready.Reason != storagev1alpha1.ReasonObjectLockNotEnabled {
		t.Errorf("Ready = %s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	if slices.Contains(store.Calls(), "PutObjectLock") {
		t.Errorf("object lock was put on a bucket created without it: %v", store.Calls())
	}
	if got := store.Bucket("ns-feat"); got.Versioning != "Enabled" || len(got.Lifecycle) != 1 {
		t.Errorf("the rest of the spec was not applied: %+v", got)
	}
}

func TestRulesDroppedFromTheSpecAreDeletedAndUnmanagedOnesLeftAlone(t *testing.T) {
	b := featureBucket()
	b.Spec.ObjectLock = nil
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "AK"}
	r := bucketReconciler(cluster, store)
	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatal(err)
	}

	bucketReadyOf(t, cluster, b)
	b.Spec.Lifecycle, b.Spec.Versioning = nil, ""
	if err := cluster.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatal(err)
	}
	got := store.Bucket("ns-feat")
	if got.Lifecycle != nil {
		t.Errorf("lifecycle rules the spec dropped are still there: %+v", got.Lifecycle)
	}
	if got.Versioning != "Enabled" {
		t.Errorf("versioning the spec no longer names was changed to %q; it is left as the server has it", got.Versioning)
	}
	if bucketReadyOf(t, cluster, b); b.Status.Lifecycle != nil || b.Status.Versioning != "" {
		t.Errorf("status still shows lifecycle %+v, versioning %q", b.Status.Lifecycle, b.Status.Versioning)
	}

	// Rules made outside the operator, with nothing in the spec, are not its business.
	_ = store.PutLifecycle(context.Background(), "ns-feat", []objectstore.LifecycleRule{{ID: "theirs", Enabled: true, ExpirationDays: 1}})
	before := len(store.Calls())
	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatal(err)
	}
	if calls := store.Calls()[before:]; slices.Contains(calls, "Lifecycle") || slices.Contains(calls, "DeleteLifecycle") {
		t.Errorf("a Bucket without lifecycle in its spec touched the bucket's rules: %v", calls)
	}
}

// The rules an Application asks for (its backup retention) are applied with the spec's, follow
// their source when it changes though the Bucket's generation does not, and go with it.
func TestGeneratedLifecycleRulesFollowTheirSource(t *testing.T) {
	b := newTestBucket("backups", "ns-backups", storagev1alpha1.ReclaimPolicyRetain)
	b.Finalizers = []string{Finalizer}
	b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
		{ID: "tmp", Prefix: "tmp/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](1)}},
	}}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "AK"}
	r := bucketReconciler(cluster, store)
	retention := int32(14)
	users := []string{"web"}
	r.Users = []BucketUsers{{Kind: "Application",
		List: func(context.Context, client.Reader, string, string) ([]string, error) { return users, nil },
		LifecycleRules: func(context.Context, client.Reader, string, string) ([]storagev1alpha1.LifecycleRule, error) {
			if retention == 0 {
				return nil, nil
			}
			return []storagev1alpha1.LifecycleRule{{ID: "osm-backup-web", Prefix: "web/",
				Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To(retention)}}}, nil
		}}}
	serverRules := func() map[string]int32 {
		out := map[string]int32{}
		for _, rule := range store.Bucket("ns-backups").Lifecycle {
			out[rule.ID] = rule.ExpirationDays
		}
		return out
	}

	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := serverRules(), map[string]int32{"tmp": 1, "osm-backup-web": 14}; !maps.Equal(got, want) {
		t.Errorf("server rules = %v, want %v", got, want)
	}

	retention = 30 // the Application's spec changed; the Bucket's did not
	if _, err := passes(t, r, b, 1); err != nil {
		t.Fatal(err)
	}
	if got := serverRules()["osm-backup-web"]; got != 30 {
		t.Errorf("after the retention changed, the server's rule expires after %d days, want 30", got)
	}

	retention = 0 // retention removed
	if _, err := passes(t, r, b, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := serverRules(), map[string]int32{"tmp": 1}; !maps.Equal(got, want) {
		t.Errorf("after the retention went, server rules = %v, want %v", got, want)
	}
	before := len(store.Calls())
	if _, err := passes(t, r, b, 2); err != nil {
		t.Fatal(err)
	}
	if w := writes(store.Calls()[before:]); len(w) != 0 {
		t.Errorf("resyncs wrote %v", w)
	}
}
