package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// What each Bucket holds and may hold, read at scrape time from the Buckets' status in the
// manager's cache (the same reader as osm_resources): one series per Bucket, labelled by its
// namespace and name, and only for what is known.
var (
	bucketSizeDesc = prometheus.NewDesc("osm_bucket_size_bytes",
		"Bytes a Bucket's objects hold, as its provider counts them (status.usage.bytes).", []string{"namespace", "bucket"}, nil)
	bucketObjectsDesc = prometheus.NewDesc("osm_bucket_objects",
		"Objects a Bucket holds, as its provider counts them (status.usage.objects).", []string{"namespace", "bucket"}, nil)
	bucketQuotaBytesDesc = prometheus.NewDesc("osm_bucket_quota_bytes",
		"The size limit the provider enforces on a Bucket (status.quota.maxSizeBytes), for Buckets that have one.", []string{"namespace", "bucket"}, nil)
	bucketQuotaObjectsDesc = prometheus.NewDesc("osm_bucket_quota_objects",
		"The object limit the provider enforces on a Bucket (status.quota.maxObjects), for Buckets that have one.", []string{"namespace", "bucket"}, nil)
)

type bucketUsage struct{}

func init() { crmetrics.Registry.MustRegister(bucketUsage{}) }

func (bucketUsage) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{bucketSizeDesc, bucketObjectsDesc, bucketQuotaBytesDesc, bucketQuotaObjectsDesc} {
		ch <- d
	}
}

func (bucketUsage) Collect(ch chan<- prometheus.Metric) {
	p := resourceCollector.cache.Load()
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gauge := func(d *prometheus.Desc, v int64, b *storagev1alpha1.Bucket) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), b.Namespace, b.Name)
	}
	// Read only, not copied: see resources. An error is a cache not started yet.
	_ = index.EachCached(ctx, p.informers, p.reader, &storagev1alpha1.BucketList{}, func(b *storagev1alpha1.Bucket) {
		if u := b.Status.Usage; u != nil {
			gauge(bucketSizeDesc, u.Bytes, b)
			gauge(bucketObjectsDesc, u.Objects, b)
		}
		if q := b.Status.Quota; q != nil && q.MaxSizeBytes > 0 {
			gauge(bucketQuotaBytesDesc, q.MaxSizeBytes, b)
		}
		if q := b.Status.Quota; q != nil && q.MaxObjects > 0 {
			gauge(bucketQuotaObjectsDesc, q.MaxObjects, b)
		}
	})
}
