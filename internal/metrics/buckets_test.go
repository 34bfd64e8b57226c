package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Each Bucket is one series per figure its status knows, labelled by namespace and name; a
// Bucket whose usage or quota is unknown has none of those series.
func TestBucketUsageIsOneSeriesPerKnownFigure(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := storagev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	full := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "uploads"},
		Status: storagev1alpha1.BucketStatus{Usage: &storagev1alpha1.BucketUsage{Bytes: 3500, Objects: 3},
			Quota: &storagev1alpha1.ObservedQuota{MaxSizeBytes: 1 << 20, MaxObjects: 3}}}
	unknown := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "on-versitygw"}}
	var reader client.Reader = fake.NewClientBuilder().WithScheme(scheme).WithObjects(full, unknown).Build()
	resourceCollector.reader.Store(&reader)
	t.Cleanup(func() { resourceCollector.reader.Store(nil) })

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bucketUsage{})
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

// listOptionsReader records the options of every List it passes on.
type listOptionsReader struct {
	client.Reader
	lists []client.ListOptions
}

func (r *listOptionsReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	r.lists = append(r.lists, o)
	return r.Reader.List(ctx, list, opts...)
}

// A scrape lists every resource of every kind; it must read the cached objects, not copies of
// them all (at 10,000 Buckets, the copies were most of the manager's memory while a scraper
// polled).
func TestAScrapeCopiesNothingOutOfTheCache(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{storagev1alpha1.AddToScheme, paasv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "uploads"},
		Status: storagev1alpha1.BucketStatus{Usage: &storagev1alpha1.BucketUsage{Bytes: 1, Objects: 1}}}
	recorder := &listOptionsReader{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(b).Build()}
	var reader client.Reader = recorder
	resourceCollector.reader.Store(&reader)
	t.Cleanup(func() { resourceCollector.reader.Store(nil) })

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bucketUsage{}, resourceCollector)
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
	if len(recorder.lists) != 5 { // Buckets for their usage; Contracts, Buckets, BucketAccesses, Applications
		t.Fatalf("a scrape listed %d times, want 5", len(recorder.lists))
	}
	for i, o := range recorder.lists {
		if o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
			t.Errorf("list %d of a scrape copies every object out of the cache", i)
		}
	}
}
