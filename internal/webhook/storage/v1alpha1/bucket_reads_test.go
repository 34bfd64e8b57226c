package v1alpha1

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

// countingReader counts the calls that reach r.
type countingReader struct {
	r           client.Reader
	gets, lists atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.r.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists.Add(1)
	return c.r.List(ctx, list, opts...)
}

// unusedAPI fails the test when anything reads it: the cache should have answered.
type unusedAPI struct{ t *testing.T }

func (u unusedAPI) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u.t.Errorf("the API server was asked for %T %s", obj, key)
	return nil
}

func (u unusedAPI) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	u.t.Errorf("the API server was asked for a %T", list)
	return nil
}

// builderIndexer registers index.Register's indexes on a fake client being built.
type builderIndexer struct{ b *fake.ClientBuilder }

func (i builderIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	i.b.WithIndex(obj, field, extract)
	return nil
}

// cacheWith is a manager's cache as the validator sees it: the given objects, with the
// manager's field indexes, and field selectors that work only on them.
func cacheWith(t *testing.T, objs ...client.Object) client.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := storagev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := paasv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...)
	if err := index.Register(context.Background(), builderIndexer{b}); err != nil {
		t.Fatal(err)
	}
	return b.Build()
}

// TestAContractTheCacheHasNotSeenYetIsReadFromTheAPIServer: a Contract and a Bucket applied
// together reach the webhook before the informer has the Contract; the Bucket is admitted, with
// the policy checked in the provider's own names.
func TestAContractTheCacheHasNotSeenYetIsReadFromTheAPIServer(t *testing.T) {
	iij := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"},
		Status: storagev1alpha1.ContractStatus{BucketPolicy: &storagev1alpha1.BucketPolicyForm{ResourcePrefix: "grn:iijgio:dag:::bucket/"}}}
	api := &countingReader{r: webhooktest.Reader{Objects: []client.Object{iij}}}
	v := &BucketValidator{Cache: cacheWith(t), API: api}
	b := validBucket()
	b.Spec.Policy = policy(`{"Statement":{"Effect":"Allow","Principal":{"IIJGIO":"*"},"Action":"s3:GetObject","Resource":"grn:iijgio:dag:::bucket/team-a-data/*"}}`)
	if _, err := v.ValidateCreate(context.Background(), b); err != nil {
		t.Fatalf("ValidateCreate() = %v, want the Bucket admitted", err)
	}
	if got := api.gets.Load(); got != 1 {
		t.Errorf("the API server got %d GETs, want 1 (one read of the Contract, for both checks)", got)
	}
}

// TestAContractInTheCacheCostsTheAPIServerNothing: the cache answers every read of an admitted
// create, and of an update that changes the policy; the Contract is read once per admission.
func TestAContractInTheCacheCostsTheAPIServerNothing(t *testing.T) {
	contract := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"},
		Status: storagev1alpha1.ContractStatus{BucketPolicy: &storagev1alpha1.BucketPolicyForm{ResourcePrefix: "grn:iijgio:dag:::bucket/"}}}
	target := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "team-a-logs", ContractName: "team-a"}}
	cache := &countingReader{r: cacheWith(t, contract, target)}
	v := &BucketValidator{Cache: cache, API: unusedAPI{t}}

	b := validBucket()
	b.Spec.Policy = policy(`{"Statement":{"Effect":"Allow","Principal":{"IIJGIO":"*"},"Action":"s3:GetObject","Resource":"grn:iijgio:dag:::bucket/team-a-data/*"}}`)
	b.Spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "team-a-logs"}
	if _, err := v.ValidateCreate(context.Background(), b); err != nil {
		t.Fatalf("ValidateCreate() = %v, want the Bucket admitted", err)
	}
	if got := cache.gets.Load(); got != 1 {
		t.Errorf("ValidateCreate() read the Contract %d times, want once", got)
	}

	changed := b.DeepCopy()
	changed.Spec.Policy = policy(`{"Statement":{"Effect":"Allow","Principal":{"IIJGIO":"*"},"Action":"s3:ListBucket","Resource":"grn:iijgio:dag:::bucket/team-a-data"}}`)
	if _, err := v.ValidateUpdate(context.Background(), b, changed); err != nil {
		t.Fatalf("ValidateUpdate() = %v, want the change admitted", err)
	}
}

// TestANamesakeInTheCacheIsRefused: the cache's field index finds the Bucket that already
// manages the bucket, without a LIST on the API server.
func TestANamesakeInTheCacheIsRefused(t *testing.T) {
	contract := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}}
	other := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "older"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "team-a-data", ContractName: "team-a"}}
	elsewhere := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "data"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "team-a-data", ContractName: "team-a"}}
	v := &BucketValidator{Cache: cacheWith(t, contract, other, elsewhere), API: unusedAPI{t}}
	_, err := v.ValidateCreate(context.Background(), validBucket())
	want := []string{`spec.bucketName: Invalid value: "team-a-data": Bucket older in this namespace already manages this bucket of Contract team-a, and exactly one may`}
	if diff := cmp.Diff(want, webhooktest.Causes(t, err)); diff != "" {
		t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
	}
}
