package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Each Bucket is one series per figure its status knows, labelled by namespace and name; a
// Bucket whose usage or quota is unknown has none of those series.
func TestBucketUsageIsOneSeriesPerKnownFigure(t *testing.T) {
	full := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "uploads"},
		Status: storagev1alpha1.BucketStatus{Usage: &storagev1alpha1.BucketUsage{Bytes: 3500, Objects: 3},
			Quota: &storagev1alpha1.ObservedQuota{MaxSizeBytes: 1 << 20, MaxObjects: 3}}}
	unknown := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "on-versitygw"}}
	observe(t, full, unknown)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bucketUsage{})
	got := scrape(t, reg)
	want := []string{
		"osm_bucket_objects{bucket=uploads,namespace=team} 3",
		"osm_bucket_quota_bytes{bucket=uploads,namespace=team} 1.048576e+06",
		"osm_bucket_quota_objects{bucket=uploads,namespace=team} 3",
		"osm_bucket_size_bytes{bucket=uploads,namespace=team} 3500",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

// A scrape walks the cache's own objects: what it allocates is far less than one copy of the
// cached Buckets, which a list (even without deep copies) would make for each kind it counts.
func TestAScrapeCopiesNothingOutOfTheCache(t *testing.T) {
	const n = 2000
	var objs []client.Object
	for i := range n {
		objs = append(objs, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("b-%d", i)},
			Status: storagev1alpha1.BucketStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Available"}}}})
	}
	observe(t, objs...)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bucketUsage{}, resourceCollector)

	least := uint64(math.MaxUint64)
	for range 5 { // the least of a few scrapes, so nothing else running counts
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		families, err := reg.Gather()
		goruntime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(families) != 1 || families[0].GetMetric()[0].GetGauge().GetValue() != n {
			t.Fatalf("scraped %v, want osm_resources counting %d Ready Buckets", families, n)
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if one := uint64(n * unsafe.Sizeof(storagev1alpha1.Bucket{})); least >= one {
		t.Errorf("a scrape of %d cached Buckets allocated %d bytes, as much as one copy of them (%d)", n, least, one)
	}
}

// observe makes the collectors read a cache holding objs, and nothing of other kinds.
func observe(t *testing.T, objs ...client.Object) {
	t.Helper()
	stores := storeInformers{}
	for _, o := range objs {
		store := stores[reflect.TypeOf(o)]
		if store == nil {
			store = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
			stores[reflect.TypeOf(o)] = store
		}
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	resourceCollector.cache.Store(&observed{informers: stores})
	t.Cleanup(func() { resourceCollector.cache.Store(nil) })
}

// storeInformers is a cache whose informers are stores of objects, by type; only GetInformer is
// called.
type storeInformers map[reflect.Type]toolscache.Indexer

func (s storeInformers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	store := s[reflect.TypeOf(obj)]
	if store == nil {
		store = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	}
	return storeInformer{store: store}, nil
}

func (s storeInformers) GetInformerForKind(context.Context, schema.GroupVersionKind, ...cache.InformerGetOption) (cache.Informer, error) {
	return nil, errors.New("not used")
}
func (s storeInformers) RemoveInformer(context.Context, client.Object) error { return nil }
func (s storeInformers) Start(context.Context) error                         { return nil }
func (s storeInformers) WaitForCacheSync(context.Context) bool               { return true }
func (s storeInformers) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

type storeInformer struct {
	cache.Informer // only GetIndexer is called
	store          toolscache.Indexer
}

func (i storeInformer) GetIndexer() toolscache.Indexer { return i.store }

// scrape gathers reg as lines "name{label=value,...} value".
func scrape(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got = append(got, fmt.Sprintf("%s{%s} %g", f.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	return got
}
