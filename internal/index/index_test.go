package index_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
)

// The API server itself filters Buckets by spec.bucketName and spec.contractName (selectable
// fields of the CRD), so the lookups that must not trust the cache cost one small answer, not a
// list of the whole namespace per new Bucket.
func TestAPIServerFiltersBucketsByTheirFields(t *testing.T) {
	_, c := apiServer(t)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ name, bucket, contract string }{
		{"photos", "team-a-photos", "acc"}, {"logs", "team-a-logs", "acc"}, {"other", "team-a-photos", "other"},
	} {
		obj := &storagev1alpha1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: b.name},
			Spec:       storagev1alpha1.BucketSpec{BucketName: b.bucket, ContractName: b.contract},
		}
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	// Asked directly, so that a CRD without the selectable fields fails here instead of being
	// hidden by the fallback to a whole-namespace list.
	for field, value := range map[string]string{index.BucketNameField: "team-a-photos", index.BucketContractField: "other"} {
		var list storagev1alpha1.BucketList
		if err := c.List(ctx, &list, client.InNamespace("team-a"), client.MatchingFields{field: value}); err != nil {
			t.Fatalf("the API server refused to filter Buckets by %s: %v", field, err)
		}
		for _, b := range list.Items {
			if got := map[string]string{index.BucketNameField: b.Spec.BucketName, index.BucketContractField: b.Spec.ContractName}[field]; got != value {
				t.Errorf("filtering by %s=%s returned Bucket %s with %s", field, value, b.Name, got)
			}
		}
	}

	buckets, err := index.BucketsNamingBucketUncached(ctx, c, "team-a", "team-a-photos")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range buckets {
		names = append(names, b.Name)
	}
	if len(names) != 2 || names[0] != "other" || names[1] != "photos" {
		t.Errorf("Buckets naming team-a-photos: got %v, want [other photos]", names)
	}
	contractUsers, err := index.BucketsNamingUncached(ctx, c, "team-a", "acc")
	if err != nil {
		t.Fatal(err)
	}
	if len(contractUsers) != 2 || contractUsers[0] != "logs" || contractUsers[1] != "photos" {
		t.Errorf("Buckets naming Contract acc: got %v, want [logs photos]", contractUsers)
	}
}

// A Contract walks its Buckets in the cache's own index: the Buckets of that Contract in that
// namespace, each the cache's object itself (the same pointer every time, nothing copied), and
// the same Buckets a client's list of the cache gives.
func TestAContractWalksItsBucketsInTheCacheWithoutCopies(t *testing.T) {
	cfg, c := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, ns := range []string{"team-a", "team-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []struct{ ns, name, contract string }{
		{"team-a", "photos", "acc"}, {"team-a", "logs", "acc"}, {"team-a", "other", "other"}, {"team-b", "photos", "acc"},
	} {
		if err := c.Create(ctx, &storagev1alpha1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: b.name},
			Spec:       storagev1alpha1.BucketSpec{BucketName: b.ns + "-" + b.name, ContractName: b.contract},
		}); err != nil {
			t.Fatal(err)
		}
	}

	informers, err := cache.New(cfg, cache.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := index.Register(ctx, informers); err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	if _, err := informers.GetInformer(ctx, &storagev1alpha1.Bucket{}); err != nil {
		t.Fatal(err)
	}
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	cached, err := client.New(cfg, client.Options{Scheme: operator.Scheme, Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		t.Fatal(err)
	}

	walk := func(informers cache.Informers) map[string]*storagev1alpha1.Bucket {
		t.Helper()
		seen := map[string]*storagev1alpha1.Bucket{}
		if err := index.EachBucketNaming(ctx, informers, cached, "team-a", "acc", func(b *storagev1alpha1.Bucket) {
			seen[b.Name] = b
		}); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	first, again := walk(informers), walk(informers)
	if len(first) != 2 || first["photos"] == nil || first["logs"] == nil {
		t.Fatalf("walked %v, want team-a's photos and logs", first)
	}
	for name, b := range first {
		if again[name] != b {
			t.Errorf("Bucket %s was copied: a second walk gave another object", name)
		}
	}
	listed := walk(nil)
	if len(listed) != len(first) || listed["photos"] == nil || listed["logs"] == nil {
		t.Errorf("the cached client's list gave %v, the index %v", listed, first)
	}
}

// apiServer starts an API server with the operator's CRDs for one test, and a client of it.
func apiServer(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	env, cfg, err := localenv.StartControlPlane(localenv.ControlPlaneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c
}
