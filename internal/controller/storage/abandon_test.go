package storage

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// With the provider gone for good, deletion could wait forever; a cluster admin's annotation
// lets each resource go without a call to it, and an event says what stays behind there.

func annotateAbandon(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+storagev1alpha1.AbandonAnnotation+`":"true"}}}`))
	if err := c.Patch(context.Background(), obj, patch); err != nil {
		t.Fatal(err)
	}
}

func lastEvent(t *testing.T, rec events.EventRecorder) string {
	t.Helper()
	fake := rec.(*events.FakeRecorder)
	var last string
	for {
		select {
		case e := <-fake.Events:
			last = e
		default:
			return last
		}
	}
}

func TestAContractAbandonedWhileItsAPIIsGoneGoesAndKeepsItsKeys(t *testing.T) {
	c := activeContract("acc")
	c.Status.PurchaseRequested = true
	cluster := fakeCluster(t, c, contractSecret("acc"))
	api := &fakeapi.API{}
	for _, op := range []fakeapi.Op{fakeapi.OpGet, fakeapi.OpCancel, fakeapi.OpBuy} {
		api.Fail(op, fakeapi.Failure{Err: &contractclient.Error{Op: "any", Cause: errLost}}, fakeapi.Failure{Err: &contractclient.Error{Op: "any", Cause: errLost}})
	}
	r := contractReconciler(cluster, api)
	deleting(t, cluster, c)
	if err := reconcileOnce(t, r, c); err == nil {
		t.Fatal("a deletion whose contract API is gone went ahead without the annotation")
	}
	annotateAbandon(t, cluster, c)
	if err := reconcileOnce(t, r, c); err != nil {
		t.Fatalf("abandoning: %v", err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(c), c); err == nil {
		t.Fatalf("the Contract is still there: finalizers %v", c.Finalizers)
	}
	secret := &corev1.Secret{}
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc-credentials"}, secret); err != nil {
		t.Fatalf("the contract's keys are gone with the Contract: %v", err)
	}
	if len(secret.OwnerReferences) != 0 || len(secret.Finalizers) != 0 {
		t.Errorf("the Secret must outlive the abandoned Contract: owners %v, finalizers %v", secret.OwnerReferences, secret.Finalizers)
	}
	if ev := lastEvent(t, r.Recorder); !strings.Contains(ev, "Warning Abandoned") || !strings.Contains(ev, "contract c1 stays at the provider, its keys in Secret acc-credentials") {
		t.Errorf("event %q, want a warning that names what stays at the provider", ev)
	}
	if api.Calls(fakeapi.OpCancel) != 1 {
		t.Errorf("%d Cancel calls; the abandoning pass must not call the provider", api.Calls(fakeapi.OpCancel))
	}
}

func TestABucketAbandonedGoesWithoutTouchingItsBucket(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	b.Status.BucketName = "ns-data"
	cluster := fakeCluster(t, b) // its Contract is gone: nothing to delete the bucket with
	store := &fakes3.Store{Owner: "me"}
	r := bucketReconciler(cluster, store)
	deleting(t, cluster, b)
	annotateAbandon(t, cluster, b)
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatalf("abandoning: %v", err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
		t.Fatalf("the Bucket is still there: finalizers %v", b.Finalizers)
	}
	if calls := store.Calls(); len(calls) > 0 {
		t.Errorf("S3 calls %v; the abandoning pass must not call the server", calls)
	}
	if ev := lastEvent(t, r.Recorder); !strings.Contains(ev, "bucket ns-data stays in the account of Contract acc") {
		t.Errorf("event %q, want it to name the bucket left", ev)
	}
}

func TestABucketAccessAbandonedNamesThePrincipalAndKeysLeft(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	a.Status = storagev1alpha1.BucketAccessStatus{PrincipalID: "p1", ContractID: "c1", PrincipalRequested: true,
		KeyStatus: storagev1alpha1.KeyStatus{AccessKeyID: "AKp1a", RetiringKeys: []storagev1alpha1.RetiringKey{{AccessKeyID: "AKp1b"}}}}
	if err := cluster.Status().Update(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	deleting(t, cluster, a)
	annotateAbandon(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatalf("abandoning: %v", err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err == nil {
		t.Fatalf("the BucketAccess is still there: finalizers %v", a.Finalizers)
	}
	if n := api.Calls(fakeapi.OpDeletePrincipal); n != 0 {
		t.Errorf("%d DeletePrincipal calls; the abandoning pass must not call the provider", n)
	}
	if ev := lastEvent(t, r.Recorder); !strings.Contains(ev, "principal p1 of contract c1 stays, with key AKp1a; keys AKp1b also still work") {
		t.Errorf("event %q, want it to name the principal and every key left working", ev)
	}
}
