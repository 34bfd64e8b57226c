package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// accessCluster is an API server with an active Contract (contract c1 of api), its made Bucket
// and a BucketAccess for it, already holding the finalizer.
func accessCluster(t *testing.T, api *fakeapi.API, intercept ...interceptor.Funcs) (client.Client, *storagev1alpha1.BucketAccess, *BucketAccessReconciler) {
	t.Helper()
	if _, _, err := api.Buy(context.Background(), "uid-acc", contractclient.Request{Plan: "standard"}); err != nil {
		t.Fatal(err)
	}
	b := newTestBucket("data", "data-bucket", storagev1alpha1.ReclaimPolicyRetain)
	b.Status.BucketName = "data-bucket"
	a := &storagev1alpha1.BucketAccess{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reader", UID: types.UID("uid-reader"), Finalizers: []string{Finalizer}},
		Spec:       storagev1alpha1.BucketAccessSpec{Bucket: "data", Access: storagev1alpha1.AccessReadOnly},
	}
	builder := fakeclient.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(activeContract("acc"), b, a).
		WithStatusSubresource(&storagev1alpha1.Contract{}, &storagev1alpha1.Bucket{}, &storagev1alpha1.BucketAccess{})
	for _, f := range intercept {
		builder = builder.WithInterceptorFuncs(f)
	}
	cluster := builder.Build()
	r := &BucketAccessReconciler{Client: cluster, Principals: api, Recorder: events.NewFakeRecorder(100), ResyncPeriod: time.Hour,
		// Nothing answers here: a check of the key fails, which these tests do not need.
		Stores: func(a objectstore.Account) objectstore.Store {
			return objectstore.New(objectstore.Config{Endpoint: "http://127.0.0.1:1", Region: a.Region, AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, MaxAttempts: 1,
				HTTPClient: objectstore.NewHTTPClient(time.Second, 1, nil)})
		}}
	return cluster, a, r
}

func lost(op string) fakeapi.Failure {
	return fakeapi.Failure{Err: &contractclient.Error{Op: op, Cause: errLost}, AfterActing: true}
}

func TestAPrincipalWhoseAnswerWasLostIsDeletedWithItsBucketAccess(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	api.Fail(fakeapi.OpCreatePrincipal, lost("creating a principal"))
	if err := reconcileOnce(t, r, a); err == nil {
		t.Fatal("a lost answer went unnoticed")
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if !a.Status.PrincipalRequested || a.Status.ContractID != "c1" || a.Status.PrincipalID != "" {
		t.Fatalf("status = %+v; want the request recorded, with its contract, and no principal known", a.Status)
	}

	deleting(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	if _, _, err := api.CreatePrincipal(context.Background(), "c1", "uid-reader"); !errors.Is(err, contractclient.ErrPrincipalDeleted) {
		t.Errorf("the principal made for the lost answer was not deleted (asking again: %v)", err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err == nil {
		t.Errorf("the BucketAccess is still there, finalizers %v", a.Finalizers)
	}
}

func TestARotationWhoseAnswerWasLostIsAskedAgainNotIssuedTwice(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	_ = reconcileOnce(t, r, a) // issues the principal; the key check cannot reach S3 here
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if a.Status.PrincipalID == "" {
		t.Fatalf("no principal issued: %+v", a.Status)
	}
	if err := cluster.Patch(context.Background(), a, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"storage.osm.dev/rotate-key":"now"}}}`))); err != nil {
		t.Fatal(err)
	}
	api.Fail(fakeapi.OpAddPrincipalKey, lost("adding a key"))
	for range 3 {
		_ = reconcileOnce(t, r, a)
	}
	p, ok := api.Principal("c1", a.Status.PrincipalID)
	if !ok {
		t.Fatal("the principal is gone")
	}
	if len(p.AccessKeyIDs) != 2 {
		t.Errorf("principal holds keys %v; want the first and exactly one new one", p.AccessKeyIDs)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if a.Status.PendingKey == nil || a.Status.PendingKey.AccessKeyID != p.AccessKeyIDs[1] {
		t.Errorf("pending key = %+v; want the new key recorded until it is checked", a.Status.PendingKey)
	}
	if a.Status.AccessKeyID != p.AccessKeyIDs[0] {
		t.Errorf("the Secret's key changed to %s before the new key was checked", a.Status.AccessKeyID)
	}
}

func TestABucketAccessGoesAfterTheResourceItWasMadeFor(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	ctx := context.Background()
	// Any kind will do as the owner; an Application in the operator, a Bucket here.
	owner := &storagev1alpha1.Bucket{}
	if err := cluster.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "data"}, owner); err != nil {
		t.Fatal(err)
	}
	if err := controllerutil.SetControllerReference(owner, a, cluster.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	_ = reconcileOnce(t, r, a) // issues the principal
	deleting(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatalf("the BucketAccess went while the resource it serves is still there: %v", err)
	}
	if ready := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition); ready == nil ||
		!strings.Contains(ready.Message, "waits until Bucket data") {
		t.Errorf("Ready = %+v; want it to say what the deletion waits for", ready)
	}
	if _, ok := api.Principal("c1", a.Status.PrincipalID); !ok {
		t.Error("the key was revoked while the resource it serves still runs")
	}

	if err := cluster.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(ctx, client.ObjectKeyFromObject(a), a); err == nil {
		t.Errorf("the BucketAccess stays after the resource it served is gone: finalizers %v", a.Finalizers)
	}
}

// A BucketAccess made for another resource, and deleted by hand while that resource lives,
// waits for it without polling it every few seconds: the owner's watch wakes it when it goes.
func TestABucketAccessWaitingForItsOwnerIsWokenByItsOwnersWatch(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	ctx := context.Background()
	owner := &storagev1alpha1.Bucket{}
	if err := cluster.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "data"}, owner); err != nil {
		t.Fatal(err)
	}
	if err := controllerutil.SetControllerReference(owner, a, cluster.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	other := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", Finalizers: []string{Finalizer}},
		Spec: storagev1alpha1.BucketAccessSpec{Bucket: "data", Access: storagev1alpha1.AccessReadOnly}}
	if err := controllerutil.SetControllerReference(owner, other, cluster.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	deleting(t, cluster, a)
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(a)})
	if err != nil || res.RequeueAfter < time.Minute {
		t.Errorf("waiting for its owner: %+v, %v; want no poll sooner than a minute", res, err)
	}
	reqs := r.deletingAccessesOf(ctx, owner)
	if len(reqs) != 1 || reqs[0].Name != "reader" {
		t.Errorf("the owner's watch wakes %v, want the deleting BucketAccess it owns alone", reqs)
	}
}

// A BucketAccess its owner released (an Application that dropped the link) goes at once, its
// key revoked, though the owner lives; a release by another resource changes nothing.
func TestABucketAccessItsOwnerReleasedGoesWhileTheOwnerLives(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	ctx := context.Background()
	owner := &storagev1alpha1.Bucket{} // any kind will do as the owner, as above
	if err := cluster.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "data"}, owner); err != nil {
		t.Fatal(err)
	}
	if err := controllerutil.SetControllerReference(owner, a, cluster.Scheme()); err != nil {
		t.Fatal(err)
	}
	metav1.SetMetaDataAnnotation(&a.ObjectMeta, storagev1alpha1.ReleasedAnnotation, "another-uid")
	if err := cluster.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	_ = reconcileOnce(t, r, a) // issues the principal
	principal := a.Status.PrincipalID
	deleting(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatalf("released by a resource that is not its owner, the BucketAccess went: %v", err)
	}

	metav1.SetMetaDataAnnotation(&a.ObjectMeta, storagev1alpha1.ReleasedAnnotation, string(owner.UID))
	if err := cluster.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(ctx, client.ObjectKeyFromObject(a), a); err == nil {
		t.Errorf("released by its owner, the BucketAccess stays: Ready %+v", meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition))
	}
	if _, ok := api.Principal("c1", principal); ok {
		t.Error("the released BucketAccess's key was not revoked")
	}
}
