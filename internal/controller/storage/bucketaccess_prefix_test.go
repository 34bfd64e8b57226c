package storage

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// A server that does not enforce the policy's prefix condition lets a key limited to a prefix
// list the whole bucket: that key is never written to the Secret, and the BucketAccess says so.
// Once the key is found limited to its prefix, it is handed out.
func TestAKeyThatReachesOutsideItsPrefixIsNotHandedOut(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	a.Spec.Prefix = "web/"
	if err := cluster.Update(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	server := &fakes3.Store{Buckets: map[string]*fakes3.Bucket{"data-bucket": {}},
		Access: &objectstore.AccessCheck{List: true, Read: true, Outside: &objectstore.AccessCheck{List: true}}}
	r.Stores = func(objectstore.Account) objectstore.Store { return server }

	secret := corev1.Secret{}
	_ = reconcileOnce(t, r, a)
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != storagev1alpha1.ReasonPrefixUnsupported ||
		!strings.Contains(ready.Message, `can also list outside prefix "web/"`) {
		t.Fatalf("Ready = %+v, want False PrefixUnsupported saying the key can list outside web/", ready)
	}
	verified := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition)
	if verified == nil || verified.Reason != storagev1alpha1.ReasonPrefixUnsupported {
		t.Errorf("AccessVerified = %+v, want PrefixUnsupported", verified)
	}
	err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "reader-credentials"}, &secret)
	if !apierrors.IsNotFound(err) || a.Status.AccessKeyID != "" {
		t.Fatalf("the key went out (Secret: %v, status key %q)", err, a.Status.AccessKeyID)
	}

	// The server enforces it now (upgraded): the same key, checked again, goes into the Secret.
	server.Access = &objectstore.AccessCheck{List: true, Read: true, Outside: &objectstore.AccessCheck{}}
	r.checked.Delete(a.UID)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if ready := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition); ready.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v once the prefix holds", ready)
	}
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "reader-credentials"}, &secret); err != nil ||
		string(secret.Data["BUCKET_PREFIX"]) != "web/" || string(secret.Data["AWS_ACCESS_KEY_ID"]) != a.Status.AccessKeyID {
		t.Fatalf("the Secret after the key was found limited: %v, %v", err, secret.Data)
	}
}
