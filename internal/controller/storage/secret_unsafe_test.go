package storage

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// A region that would break out of its line in an INI file: it adds an rclone remote's endpoint
// and a profile's key of the writer's choosing.
const breakingRegion = "us-east-1\n[osm]\nendpoint = http://evil.test\n[default]\naws_access_key_id = AKEVIL"

// A provider that answers a region an INI format cannot hold as it is: the Contract's Secret is
// not written at all (not in part), Ready says UnsafeValue without the value, the pass asks to
// be looked at again later rather than failing (no crash loop), and once spec.formats no longer
// asks for an INI file the next pass writes the Secret.
func TestARegionThatWouldBreakOutOfAnINIFileWritesNoContractSecret(t *testing.T) {
	c := activeContract("acc")
	c.Status = storagev1alpha1.ContractStatus{}
	c.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatRclone}
	cluster := fakeCluster(t, c)
	r := contractReconciler(cluster, &fakeapi.API{Endpoint: "http://s3.test", Region: breakingRegion})

	for range 2 {
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		if err != nil || res.RequeueAfter == 0 {
			t.Fatalf("pass: %+v, %v; want no error and a look again later", res, err)
		}
	}
	checkUnsafeValue(t, readyOf(t, cluster, c, func() []metav1.Condition { return c.Status.Conditions }), "rclone", "region")
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc-credentials"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Secret: %v, want none written", err)
	}

	c.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv}
	if err := cluster.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(t, r, c); err != nil {
		t.Fatal(err)
	}
	if ready := readyOf(t, cluster, c, func() []metav1.Condition { return c.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonAvailable {
		t.Errorf("with env only: Ready = %s: %s, want %s", ready.Reason, ready.Message, storagev1alpha1.ReasonAvailable)
	}
	var secret corev1.Secret
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc-credentials"}, &secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]) != "AKc1" || secret.Data["rclone.conf"] != nil {
		t.Errorf("with env only, the Secret holds %v", secret.Data)
	}
}

// The same for a BucketAccess, whose Secret takes the region of its Contract: no Secret, and
// Ready says UnsafeValue.
func TestARegionThatWouldBreakOutOfAnINIFileWritesNoBucketAccessSecret(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api)
	r.Stores = func(acct objectstore.Account) objectstore.Store {
		return &principalStore{Store: &fakes3.Store{}, api: api, key: contractclient.Credentials{AccessKeyID: acct.AccessKeyID, SecretAccessKey: acct.SecretAccessKey}}
	}
	contract := &storagev1alpha1.Contract{}
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc"}, contract); err != nil {
		t.Fatal(err)
	}
	contract.Status.Region = breakingRegion
	if err := cluster.Status().Update(context.Background(), contract); err != nil {
		t.Fatal(err)
	}
	a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatS3cfg}
	if err := cluster.Update(context.Background(), a); err != nil {
		t.Fatal(err)
	}

	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(a)})
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("pass: %+v, %v; want no error and a look again later", res, err)
	}
	checkUnsafeValue(t, readyOf(t, cluster, a, func() []metav1.Condition { return a.Status.Conditions }), "s3cfg", "bucket_location")
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: a.SecretNameOrDefault()}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Secret: %v, want none written", err)
	}
}

// checkUnsafeValue checks that ready says UnsafeValue, naming the format and the key, and
// holding nothing of the value.
func checkUnsafeValue(t *testing.T, ready metav1.Condition, format, key string) {
	t.Helper()
	if ready.Status != metav1.ConditionFalse || ready.Reason != storagev1alpha1.ReasonUnsafeValue {
		t.Fatalf("Ready = %s %s: %s, want False %s", ready.Status, ready.Reason, ready.Message, storagev1alpha1.ReasonUnsafeValue)
	}
	if !strings.Contains(ready.Message, "the "+format+" format") || !strings.Contains(ready.Message, key) {
		t.Errorf("Ready's message %q does not name the %s format and its key %s", ready.Message, format, key)
	}
	if strings.Contains(ready.Message, "evil") || strings.Contains(ready.Message, "AKEVIL") {
		t.Errorf("Ready's message holds the value: %q", ready.Message)
	}
}
