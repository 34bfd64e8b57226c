package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// These tests walk the branches real servers do not produce on demand (lost answers, stale
// caches, names no admission let through), with the reconcilers over fakes: the API server is
// controller-runtime's fake client, the contract API and S3 are in memory.

var errLost = errors.New("injected: the answer was lost")

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := storagev1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeCluster is an API server holding objs, with the index the controllers query.
func fakeCluster(t *testing.T, objs ...client.Object) client.Client {
	return fakeClusterBuilder(t, objs...).Build()
}

func fakeClusterBuilder(t *testing.T, objs ...client.Object) *fakeclient.ClientBuilder {
	return fakeclient.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&storagev1alpha1.Contract{}, &storagev1alpha1.Bucket{}).
		WithIndex(&storagev1alpha1.Bucket{}, index.BucketContractField, func(o client.Object) []string {
			return []string{o.(*storagev1alpha1.Bucket).Spec.ContractName}
		}).
		WithIndex(&storagev1alpha1.Bucket{}, index.BucketNameField, func(o client.Object) []string {
			return []string{o.(*storagev1alpha1.Bucket).Spec.BucketName}
		})
}

func contractReconciler(c client.Client, api contractclient.API) *ContractReconciler {
	return &ContractReconciler{Client: c, APIReader: c, API: api, Recorder: events.NewFakeRecorder(100), ResyncPeriod: time.Hour}
}

func bucketReconciler(c client.Client, store *fakes3.Store) *BucketReconciler {
	return &BucketReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(100), ResyncPeriod: time.Hour,
		Stores: func(objectstore.Account) objectstore.Store { return store }}
}

func reconcileOnce(t *testing.T, r interface {
	Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
}, obj client.Object) error {
	t.Helper()
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	return err
}

func readyOf(t *testing.T, c client.Client, obj client.Object, conds func() []metav1.Condition) metav1.Condition {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("reading %s: %v", obj.GetName(), err)
	}
	ready := meta.FindStatusCondition(conds(), storagev1alpha1.ReadyCondition)
	if ready == nil {
		t.Fatalf("%s has no Ready condition", obj.GetName())
	}
	return *ready
}

// deleting marks obj as deleted, as the API server does for an object with finalizers.
func deleting(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Delete(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func activeContract(name string) *storagev1alpha1.Contract {
	return &storagev1alpha1.Contract{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Finalizers: []string{Finalizer}},
		Spec:       storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete},
		Status: storagev1alpha1.ContractStatus{ContractID: "c1", State: "active", Endpoint: "http://s3.test",
			Region: "us-east-1", SecretName: name + "-credentials"},
	}
}

// contractSecret is the Secret the Contract named contract wrote.
func contractSecret(contract string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: contract + "-credentials", Labels: map[string]string{storagev1alpha1.ContractLabel: contract},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: storagev1alpha1.GroupVersion.String(), Kind: "Contract",
				Name: contract, UID: types.UID("uid-" + contract), Controller: ptr.To(true)}}},
		Data: map[string][]byte{storagev1alpha1.SecretKeyAccessKeyID: []byte("AK"), storagev1alpha1.SecretKeySecretAccessKey: []byte("SK")},
	}
}

func newTestBucket(name, bucketName string, policy storagev1alpha1.ReclaimPolicy) *storagev1alpha1.Bucket {
	return &storagev1alpha1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec:       storagev1alpha1.BucketSpec{BucketName: bucketName, ContractName: "acc", BucketReclaimPolicy: policy},
	}
}

func TestAContractNameThatCannotLabelItsSecretBuysNothing(t *testing.T) {
	c := activeContract(strings.Repeat("a", 64))
	c.Status = storagev1alpha1.ContractStatus{}
	cluster := fakeCluster(t, c)
	api := &fakeapi.API{}
	r := contractReconciler(cluster, api)

	for range 3 {
		_ = reconcileOnce(t, r, c)
	}
	if ready := readyOf(t, cluster, c, func() []metav1.Condition { return c.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonInvalidName {
		t.Errorf("Ready = %s: %s, want reason %s", ready.Reason, ready.Message, storagev1alpha1.ReasonInvalidName)
	}
	if n := api.Calls(fakeapi.OpBuy); n != 0 {
		t.Errorf("the contract API was asked to buy %d times, want 0", n)
	}
}

func TestABare404IsNotACancelledContract(t *testing.T) {
	c := activeContract("acc")
	cluster := fakeCluster(t, c, contractSecret("acc"))
	api := &fakeapi.API{}
	api.Fail(fakeapi.OpGet, fakeapi.Failure{Err: contractclient.NewError("reading contract c1", 404)})
	r := contractReconciler(cluster, api)

	_ = reconcileOnce(t, r, c)
	ready := readyOf(t, cluster, c, func() []metav1.Condition { return c.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonContractAPIUnavailable || c.Status.State != "active" {
		t.Errorf("after a bare 404: state %q, Ready %s: %s; want state active, reason %s",
			c.Status.State, ready.Reason, ready.Message, storagev1alpha1.ReasonContractAPIUnavailable)
	}
}

func TestAContractWaitsForABucketItsCacheHasNotSeen(t *testing.T) {
	c := activeContract("acc")
	cache := fakeCluster(t, c, contractSecret("acc"))
	apiServer := fakeCluster(t, c.DeepCopy(), newTestBucket("new", "ns-new", storagev1alpha1.ReclaimPolicyDelete))
	api := &fakeapi.API{}
	r := contractReconciler(cache, api)
	r.APIReader = apiServer
	deleting(t, cache, c)

	_ = reconcileOnce(t, r, c)
	if n := api.Calls(fakeapi.OpCancel); n != 0 {
		t.Errorf("the contract was cancelled (%d calls) while a Bucket the cache had not seen named it", n)
	}
	if err := cache.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatalf("the Contract is gone: %v", err)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, storagev1alpha1.InUseCondition) {
		t.Errorf("InUse = %v, want True", meta.FindStatusCondition(c.Status.Conditions, storagev1alpha1.InUseCondition))
	}
}

// retainedLostPurchase is a Retain Contract whose contract was bought and whose answer was lost.
func retainedLostPurchase(t *testing.T) (*storagev1alpha1.Contract, client.Client, *fakeapi.API, *ContractReconciler) {
	t.Helper()
	c := activeContract("acc")
	c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
	c.Status = storagev1alpha1.ContractStatus{}
	cluster := fakeCluster(t, c)
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	api.Fail(fakeapi.OpBuy, fakeapi.Failure{Err: &contractclient.Error{Op: "creating the contract", Cause: errLost}, AfterActing: true})
	r := contractReconciler(cluster, api)
	_ = reconcileOnce(t, r, c)
	if api.Bought() != 1 {
		t.Fatalf("%d contracts bought, want 1", api.Bought())
	}
	return c, cluster, api, r
}

func TestRetainWithALostPurchaseAnswerKeepsTheKeys(t *testing.T) {
	c, cluster, api, r := retainedLostPurchase(t)
	deleting(t, cluster, c)
	if err := reconcileOnce(t, r, c); err != nil {
		t.Fatalf("deleting: %v", err)
	}

	secret := &corev1.Secret{}
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc-credentials"}, secret); err != nil {
		t.Fatalf("the retained contract's keys are nowhere: %v", err)
	}
	if got := string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]); got != "AKc1" {
		t.Errorf("Secret holds key %q, want the contract's AKc1", got)
	}
	if len(secret.OwnerReferences) != 0 || len(secret.Finalizers) != 0 {
		t.Errorf("the Secret must outlive the Contract: owners %v, finalizers %v", secret.OwnerReferences, secret.Finalizers)
	}
	if got, _ := api.Contract("c1"); got.Cancelled() || api.Bought() != 1 {
		t.Errorf("contract state %q, %d bought; want one, active", got.State, api.Bought())
	}
}

// A purchase whose first request never reached the provider: the deletion's question for its
// answer buys it. No one ever held its keys, so it is cancelled, whatever the reclaim policy,
// and a cancellation that fails is tried again rather than forgotten.
func TestAContractTheDeletionItselfBoughtIsCancelledEvenUnderRetain(t *testing.T) {
	c := activeContract("acc")
	c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
	c.Status = storagev1alpha1.ContractStatus{PurchaseRequested: true}
	cluster := fakeCluster(t, c)
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	api.Fail(fakeapi.OpCancel, fakeapi.Failure{Err: &contractclient.Error{Op: "cancelling contract c1", Cause: errLost}})
	r := contractReconciler(cluster, api)
	deleting(t, cluster, c)

	if err := reconcileOnce(t, r, c); err == nil {
		t.Fatal("the pass whose cancellation failed succeeded")
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil || !c.Status.BoughtAtDeletion || c.Status.ContractID != "c1" {
		t.Fatalf("after the failed cancellation: %v, status %+v; want the contract the deletion bought recorded", err, c.Status)
	}
	if err := reconcileOnce(t, r, c); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
	if got, _ := api.Contract("c1"); !got.Cancelled() || api.Bought() != 1 {
		t.Errorf("contract state %q, %d bought; want the one the deletion bought cancelled", got.State, api.Bought())
	}
	if err := cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc-credentials"}, &corev1.Secret{}); err == nil {
		t.Error("a Secret was written for keys no one ever held")
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(c), c); err == nil {
		t.Errorf("the Contract is still there: finalizers %v", c.Finalizers)
	}
}

func TestNoBucketIsMadeForAContractBeingDeleted(t *testing.T) {
	c := activeContract("acc")
	b := newTestBucket("late", "ns-late", storagev1alpha1.ReclaimPolicyDelete)
	cluster := fakeCluster(t, c, contractSecret("acc"), b)
	deleting(t, cluster, c)
	store := &fakes3.Store{Owner: "me"}

	_ = reconcileOnce(t, bucketReconciler(cluster, store), b)
	if ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonContractDeleting {
		t.Errorf("Ready = %s: %s, want %s", ready.Reason, ready.Message, storagev1alpha1.ReasonContractDeleting)
	}
	if store.Bucket("ns-late") != nil {
		t.Error("a bucket was made in an account that is being cancelled")
	}
}

func TestOfTwoBucketsForOneBucketNameOnlyTheFirstToRecordItTakesIt(t *testing.T) {
	first := newTestBucket("first", "shared", storagev1alpha1.ReclaimPolicyDelete)
	first.Status.CreatingBucket = "shared"
	second := newTestBucket("second", "shared", storagev1alpha1.ReclaimPolicyDelete)
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), first, second)
	store := &fakes3.Store{Owner: "me"}

	_ = reconcileOnce(t, bucketReconciler(cluster, store), second)
	ready := readyOf(t, cluster, second, func() []metav1.Condition { return second.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonBucketNameConflict {
		t.Errorf("Ready = %s: %s, want %s", ready.Reason, ready.Message, storagev1alpha1.ReasonBucketNameConflict)
	}
	if store.Bucket("shared") != nil || second.Status.CreatingBucket != "" {
		t.Errorf("the second Bucket took the name: calls %v, record %q", store.Calls(), second.Status.CreatingBucket)
	}
}

func TestANamesakeInTheCacheIsCheckedAtTheAPIServer(t *testing.T) {
	first := newTestBucket("first", "shared", storagev1alpha1.ReclaimPolicyDelete)
	second := newTestBucket("second", "shared", storagev1alpha1.ReclaimPolicyDelete)
	// The cache has not seen first's record yet; the API server has.
	cache := fakeCluster(t, activeContract("acc"), contractSecret("acc"), first.DeepCopy(), second)
	first.Status.CreatingBucket = "shared"
	api := fakeCluster(t, first)
	store := &fakes3.Store{Owner: "me"}
	r := bucketReconciler(cache, store)
	r.APIReader = api

	_ = reconcileOnce(t, r, second)
	if ready := readyOf(t, cache, second, func() []metav1.Condition { return second.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonBucketNameConflict {
		t.Errorf("Ready = %s: %s, want %s", ready.Reason, ready.Message, storagev1alpha1.ReasonBucketNameConflict)
	}
	if store.Bucket("shared") != nil {
		t.Errorf("the second Bucket took the name: calls %v", store.Calls())
	}
}

func TestABucketWithoutANamesakeCostsNoAPIRead(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	other := newTestBucket("logs", "ns-logs", storagev1alpha1.ReclaimPolicyDelete)
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b, other)
	api := &countingReader{Reader: cluster}
	r := bucketReconciler(cluster, &fakes3.Store{Owner: "me"})
	r.APIReader = api

	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	if ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions }); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %s %s: %s", ready.Status, ready.Reason, ready.Message)
	}
	if api.reads != 0 {
		t.Errorf("%d reads at the API server for a Bucket no other names; a burst would cost O(N) each", api.reads)
	}
}

// countingReader counts the reads that reach it.
type countingReader struct {
	client.Reader
	reads int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads++
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.reads++
	return c.Reader.List(ctx, list, opts...)
}

func TestAUserCannotMakeTheOperatorAdoptAnUntaggedBucket(t *testing.T) {
	b := newTestBucket("thief", "victim", storagev1alpha1.ReclaimPolicyDelete)
	// What an older operator recorded in an annotation, which any user with update can write.
	b.Annotations = map[string]string{"storage.osm.dev/creating-bucket": "victim"}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me", Buckets: map[string]*fakes3.Bucket{"victim": {}}}

	_ = reconcileOnce(t, bucketReconciler(cluster, store), b)
	ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonBucketAlreadyExists {
		t.Errorf("Ready = %s: %s, want %s", ready.Reason, ready.Message, storagev1alpha1.ReasonBucketAlreadyExists)
	}
	if tags := store.Bucket("victim").Tags; len(tags) > 0 {
		t.Errorf("the untagged bucket was taken over: tags %v", tags)
	}
}

func TestAnUnrecordedCreationIsDeletedNotLeaked(t *testing.T) {
	for _, tt := range []struct {
		name string
		fail func(*fakes3.Store)
	}{
		{"the CreateBucket answer was lost", func(s *fakes3.Store) {
			s.Fail("CreateBucket", fakes3.Failure{Err: errLost, AfterActing: true})
		}},
		{"tagging failed", func(s *fakes3.Store) { s.Fail("PutBucketTags", fakes3.Failure{Err: errLost}) }},
		{"the answer of a creation with tags was lost", func(s *fakes3.Store) {
			s.TagsOnCreate = true
			s.Fail("CreateBucket", fakes3.Failure{Err: errLost, AfterActing: true})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
			cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
			store := &fakes3.Store{Owner: "me"}
			tt.fail(store)
			r := bucketReconciler(cluster, store)

			if err := reconcileOnce(t, r, b); err == nil {
				t.Fatal("the first pass succeeded despite the fault")
			}
			if store.Bucket("ns-data") == nil {
				t.Fatal("the fault left no bucket: nothing to test")
			}
			deleting(t, cluster, b)
			for range 2 {
				_ = reconcileOnce(t, r, b)
			}
			if store.Bucket("ns-data") != nil {
				t.Errorf("bucket ns-data leaked (calls %v)", store.Calls())
			}
			if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
				t.Errorf("the Bucket is still there: %v", b.Status.Conditions)
			}
		})
	}
}

func TestANewBucketIsTaggedAtCreationWhereTheServerTakesTags(t *testing.T) {
	for _, tt := range []struct {
		name         string
		tagsOnCreate bool
	}{{"AWS, versitygw", true}, {"Ceph RGW", false}} {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
			cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
			store := &fakes3.Store{Owner: "me", TagsOnCreate: tt.tagsOnCreate}
			if err := reconcileOnce(t, bucketReconciler(cluster, store), b); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{OwnerTag: "ns/data", OwnerUIDTag: "uid-data"}
			if got := store.Bucket("ns-data").Tags; !maps.Equal(got, want) {
				t.Errorf("tags = %v, want %v", got, want)
			}
			if tagged := slices.Contains(store.Calls(), "PutBucketTags"); tagged == tt.tagsOnCreate {
				t.Errorf("separate tagging call: %v, want %v (calls %v)", tagged, !tt.tagsOnCreate, store.Calls())
			}
		})
	}
}

func TestOwnerTagValueFitsS3(t *testing.T) {
	long := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("b", 253)}}
	short := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "photos"}}
	if got := ownerTagValue(short); got != "team-a/photos" {
		t.Errorf("ownerTagValue(team-a/photos) = %q, want it as it is", got)
	}
	got := ownerTagValue(long)
	if len(got) > maxTagValue || !strings.HasPrefix(got, "sha256:") {
		t.Errorf("ownerTagValue of a 317-character name = %q (%d characters), want a digest within %d", got, len(got), maxTagValue)
	}
	if ownerTagValue(long.DeepCopy()) != got {
		t.Error("the same resource must always get the same tag, so it can adopt its bucket after Retain")
	}
}

// refused is S3 refusing a request for good (HTTP 400), which is not retried.
func refused(code string) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusBadRequest}},
		Err:      &smithy.GenericAPIError{Code: code},
	}}
}

func TestAnUnfinishedCreationIsNeverForgottenOnAFailureThatProvesNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		fail func(*fakes3.Store)
		// blocks: the failure leaves the deletion waiting; otherwise the account's own list
		// shows the bucket is its own, and the deletion goes on at once.
		blocks bool
	}{
		{"the tag write is refused", func(s *fakes3.Store) { s.Fail("PutBucketTags", fakes3.Failure{Err: refused("InvalidTag")}) }, true},
		{"HEAD answers 403 (no body: bad clock, bad key, or a policy)", func(s *fakes3.Store) {
			s.Fail("HeadBucket", fakes3.Failure{Err: objectstore.ErrAccessDenied})
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
			cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
			store := &fakes3.Store{Owner: "me"}
			store.Fail("CreateBucket", fakes3.Failure{Err: errLost, AfterActing: true})
			r := bucketReconciler(cluster, store)
			_ = reconcileOnce(t, r, b) // made, answer lost
			deleting(t, cluster, b)

			tt.fail(store)
			_ = reconcileOnce(t, r, b)
			if tt.blocks {
				if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
					t.Fatalf("the Bucket let go of a bucket it may own: %v", err)
				}
				if !meta.IsStatusConditionTrue(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition) {
					t.Errorf("the deletion waits without saying why: %v", b.Status.Conditions)
				}
			}
			for range 2 { // the failure has passed
				_ = reconcileOnce(t, r, b)
			}
			if store.Bucket("ns-data") != nil {
				t.Errorf("bucket ns-data leaked (calls %v)", store.Calls())
			}
		})
	}
}

func TestAnUnfinishedCreationInACancelledAccountDoesNotWedgeDeletion(t *testing.T) {
	c := activeContract("acc")
	c.Status.State = "cancelled"
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	b.Status.CreatingBucket = "ns-data"
	cluster := fakeCluster(t, c, contractSecret("acc"), b)
	deleting(t, cluster, b)

	_ = reconcileOnce(t, bucketReconciler(cluster, &fakes3.Store{Owner: "me"}), b)
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
		t.Errorf("the Bucket still waits: %v", b.Status.Conditions)
	}
}

func TestACreationInOnePassLeavesNoRecordBehind(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyRetain)
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	if err := reconcileOnce(t, bucketReconciler(cluster, &fakes3.Store{Owner: "me"}), b); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	if b.Status.BucketName != "ns-data" || b.Status.CreatingBucket != "" {
		t.Errorf("status: bucketName %q, creatingBucket %q; want ns-data and none", b.Status.BucketName, b.Status.CreatingBucket)
	}
}

// A Bucket admitted with its finalizer (the webhook puts it on) costs the API server, in its
// creating pass, the end of the pass and no event; and the record of the creation before
// CreateBucket only where the server cannot say afterwards whose the bucket is.
func TestACreationInOnePassCostsOneWriteWhereTheServerKeepsTagsTwoElseAndNoEvent(t *testing.T) {
	for _, tt := range []struct {
		tagsOnCreate bool
		want         []string
	}{
		{true, []string{"PATCH buckets/status"}},
		{false, []string{"PATCH buckets/status", "PATCH buckets/status"}},
	} {
		t.Run(fmt.Sprintf("tags kept at creation %v", tt.tagsOnCreate), func(t *testing.T) {
			b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
			b.Finalizers = []string{Finalizer}
			var writes []string
			cluster := fakeClusterBuilder(t, activeContract("acc"), contractSecret("acc"), b).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					writes = append(writes, "PATCH buckets")
					return c.Patch(ctx, obj, patch, opts...)
				},
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					writes = append(writes, "PATCH buckets/"+sub)
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				},
			}).Build()
			r := bucketReconciler(cluster, &fakes3.Store{Owner: "me", TagsOnCreate: tt.tagsOnCreate})
			recorder := events.NewFakeRecorder(10)
			r.Recorder = recorder

			if err := reconcileOnce(t, r, b); err != nil {
				t.Fatal(err)
			}
			if ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions }); ready.Status != metav1.ConditionTrue {
				t.Fatalf("Ready = %s: %s, want True", ready.Reason, ready.Message)
			}
			if !slices.Equal(writes, tt.want) {
				t.Errorf("writes %v, want %v", writes, tt.want)
			}
			close(recorder.Events)
			var got []string
			for e := range recorder.Events {
				got = append(got, e)
			}
			if len(got) > 0 {
				t.Errorf("events %q, want none: a new Bucket's first Ready is said by its condition alone", got)
			}
		})
	}
}

func count(calls []string, call string) int {
	n := 0
	for _, c := range calls {
		if c == call {
			n++
		}
	}
	return n
}

// losingTheEndOfPassWrite is a cluster that fails the first status write recording a bucket as
// made, as if the manager stopped after creating and tagging the bucket, before its pass's
// last write: what the API server keeps is the record of the creation alone.
func losingTheEndOfPassWrite(t *testing.T, objs ...client.Object) client.Client {
	lost := false
	return fakeClusterBuilder(t, objs...).WithInterceptorFuncs(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			if !lost && strings.Contains(string(data), `"bucketName"`) {
				lost = true
				return errLost
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}).Build()
}

func TestABucketMadeByAPassThatStoppedBeforeRecordingItIsStillItsOwn(t *testing.T) {
	for _, tt := range []struct {
		name         string
		delete       bool
		tagsOnCreate bool // no record of the creation: the server's tags are the record
	}{
		{"the next pass records it", false, false},
		{"a deletion deletes it", true, false},
		{"the next pass records it, by its tags alone", false, true},
		{"a deletion deletes it, by its tags alone", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
			cluster := losingTheEndOfPassWrite(t, activeContract("acc"), contractSecret("acc"), b)
			store := &fakes3.Store{Owner: "me", TagsOnCreate: tt.tagsOnCreate}
			r := bucketReconciler(cluster, store)

			if err := reconcileOnce(t, r, b); !errors.Is(err, errLost) {
				t.Fatalf("the first pass returned %v, want its last write lost", err)
			}
			if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
				t.Fatal(err)
			}
			record := "ns-data"
			if tt.tagsOnCreate {
				record = ""
			}
			if store.Bucket("ns-data") == nil || b.Status.BucketName != "" || b.Status.CreatingBucket != record {
				t.Fatalf("after the lost write: bucket %v, status bucketName %q, creatingBucket %q; want the bucket made and the record %q",
					store.Bucket("ns-data") != nil, b.Status.BucketName, b.Status.CreatingBucket, record)
			}

			if tt.delete {
				deleting(t, cluster, b)
				_ = reconcileOnce(t, r, b)
				if store.Bucket("ns-data") != nil {
					t.Errorf("bucket ns-data leaked (calls %v)", store.Calls())
				}
				if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
					t.Errorf("the Bucket is still there: %v", b.Status.Conditions)
				}
				return
			}
			if err := reconcileOnce(t, r, b); err != nil {
				t.Fatal(err)
			}
			if ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions }); ready.Status != metav1.ConditionTrue {
				t.Errorf("Ready = %s: %s, want True", ready.Reason, ready.Message)
			}
			if b.Status.BucketName != "ns-data" || b.Status.CreatingBucket != "" {
				t.Errorf("status: bucketName %q, creatingBucket %q; want ns-data and no record left", b.Status.BucketName, b.Status.CreatingBucket)
			}
			// Where the server keeps tags, the next pass's look is a CreateBucket that the
			// server refuses (BucketAlreadyOwnedByYou); elsewhere a HeadBucket.
			creations := 1
			if tt.tagsOnCreate {
				creations = 2
			}
			if n := count(store.Calls(), "CreateBucket"); n != creations {
				t.Errorf("calls %v: want %d CreateBucket", store.Calls(), creations)
			}
		})
	}
}

// A Bucket deleted with nothing in its status to say a bucket was made for it is looked for at
// the server only where its Contract ever had an account: one that never got one does not hold
// the deletion up.
func TestDeletingABucketWhoseContractNeverHadAnAccountIsNotHeldUp(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	pending := activeContract("acc")
	pending.Status = storagev1alpha1.ContractStatus{}
	cluster := fakeCluster(t, pending, b)
	store := &fakes3.Store{Owner: "me", TagsOnCreate: true}
	r := bucketReconciler(cluster, store)

	deleting(t, cluster, b)
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); !apierrors.IsNotFound(err) {
		t.Errorf("the Bucket is still there (%v): %v", err, b.Status.Conditions)
	}
	if calls := store.Calls(); len(calls) > 0 {
		t.Errorf("S3 calls %v, want none", calls)
	}
}

// A bucket of the Bucket's name that its own creation did not make (no tag with its UID) is
// left alone when a Bucket with no record of a bucket is deleted, even tagged with its name.
func TestDeletingABucketLeavesABucketItsCreationDidNotMake(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me", TagsOnCreate: true}
	earlier := map[string]string{OwnerTag: ownerTagValue(b), OwnerUIDTag: "uid-of-an-earlier-data"} // Retained by an earlier "data"
	if _, err := store.CreateBucket(context.Background(), "ns-data", objectstore.CreateOptions{Tags: earlier}); err != nil {
		t.Fatal(err)
	}
	r := bucketReconciler(cluster, store)

	deleting(t, cluster, b)
	if err := reconcileOnce(t, r, b); err != nil {
		t.Fatal(err)
	}
	if store.Bucket("ns-data") == nil {
		t.Fatal("deleting a Bucket deleted a bucket it never made")
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(b), b); !apierrors.IsNotFound(err) {
		t.Errorf("the Bucket is still there (%v): %v", err, b.Status.Conditions)
	}
}

func TestARecordOfCreationTheCacheDidNotShowIsClearedToo(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	b.Finalizers = []string{Finalizer}
	b.Status.CreatingBucket = "ns-data"
	apiServer := fakeClusterBuilder(t, activeContract("acc"), contractSecret("acc"), b).Build()
	// The pass reads from a cache a step behind: it has not seen the record of the creation.
	cache := interceptor.NewClient(apiServer, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, key, obj, opts...)
			if got, ok := obj.(*storagev1alpha1.Bucket); ok && err == nil {
				got.Status.CreatingBucket = ""
			}
			return err
		},
	})
	store := &fakes3.Store{Owner: "me", Buckets: map[string]*fakes3.Bucket{
		"ns-data": {Tags: map[string]string{OwnerTag: "ns/data", OwnerUIDTag: "uid-data"}},
	}}

	if err := reconcileOnce(t, bucketReconciler(cache, store), b); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	if b.Status.BucketName != "ns-data" || b.Status.CreatingBucket != "" {
		t.Errorf("status: bucketName %q, creatingBucket %q; want ns-data and no record left", b.Status.BucketName, b.Status.CreatingBucket)
	}
}

func TestRetainedKeysWaitForASecretNameTakenByAnother(t *testing.T) {
	c, cluster, _, r := retainedLostPurchase(t)
	foreign := contractSecret("acc")
	foreign.OwnerReferences = nil // then a user writes a Secret of that name, owned by no Contract
	if err := cluster.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	deleting(t, cluster, c)
	_ = reconcileOnce(t, r, c)
	if ready := readyOf(t, cluster, c, func() []metav1.Condition { return c.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonSecretConflict {
		t.Errorf("Ready = %s: %s, want %s: the kept contract's keys have nowhere to go", ready.Reason, ready.Message, storagev1alpha1.ReasonSecretConflict)
	}
}

func TestPassesWokenWithinTheResyncPeriodDoNotAskTheProviderAgain(t *testing.T) {
	c := activeContract("acc")
	cluster := fakeCluster(t, c, contractSecret("acc"))
	api := &fakeapi.API{}
	if _, _, err := api.Buy(context.Background(), string(c.UID), contractclient.Request{Plan: "standard"}); err != nil {
		t.Fatal(err)
	}
	r := contractReconciler(cluster, api) // resync: an hour
	for range 5 {                         // a Bucket came, another went, the Secret changed, ...
		if err := reconcileOnce(t, r, c); err != nil {
			t.Fatal(err)
		}
	}
	if n := api.Calls(fakeapi.OpGet); n != 1 {
		t.Errorf("the provider was asked %d times within one resync period, want once", n)
	}
}

func TestAFreshPurchaseIsLookedAtAgainAfterTheResyncPeriod(t *testing.T) {
	c := activeContract("acc")
	c.Status = storagev1alpha1.ContractStatus{}
	cluster := fakeCluster(t, c)
	r := contractReconciler(cluster, &fakeapi.API{})
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != r.ResyncPeriod {
		t.Errorf("after the purchase: RequeueAfter %s, want the resync period %s (a cancellation behind its back is seen by no watch)",
			res.RequeueAfter, r.ResyncPeriod)
	}
}

func TestARefusalIsLookedAtAgainAfterTheResyncPeriod(t *testing.T) {
	b := newTestBucket("data", "ns-data", storagev1alpha1.ReclaimPolicyDelete)
	cluster := fakeCluster(t, activeContract("acc"), contractSecret("acc"), b)
	store := &fakes3.Store{Owner: "me"}
	store.Fail("CreateBucket", fakes3.Failure{Err: refused("AccessDenied")}) // say, a permission granted a moment too late
	r := bucketReconciler(cluster, store)

	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	if err != nil || res.RequeueAfter != r.ResyncPeriod {
		t.Fatalf("a refused pass returned (%+v, %v), want to look again after the resync period %s", res, err, r.ResyncPeriod)
	}
	if ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonS3Rejected {
		t.Errorf("Ready = %s: %s, want %s", ready.Reason, ready.Message, storagev1alpha1.ReasonS3Rejected)
	}

	_ = reconcileOnce(t, r, b) // the resync: the refusal has passed
	if ready := readyOf(t, cluster, b, func() []metav1.Condition { return b.Status.Conditions }); ready.Status != metav1.ConditionTrue {
		t.Errorf("after the refusal passed, Ready = %s: %s", ready.Reason, ready.Message)
	}
}
