package bucketsettings

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// roundingProvider enforces quotas as Ceph RGW does: a size in whole KiB.
type roundingProvider struct {
	quotas map[string]storagev1alpha1.ObservedQuota
	writes int
}

func (p *roundingProvider) Quota(_ context.Context, bucket string) (storagev1alpha1.ObservedQuota, error) {
	return p.quotas[bucket], nil
}

func (p *roundingProvider) SetQuota(_ context.Context, bucket string, q storagev1alpha1.ObservedQuota) error {
	p.writes++
	q.MaxSizeBytes = (q.MaxSizeBytes + 1023) / 1024 * 1024
	p.quotas[bucket] = q
	return nil
}

// A quota the provider rounds is written once: what it showed after the write counts as the
// spec from then on. Dropped from the spec, it is lifted.
func TestQuotaIsWrittenOnceThoughTheProviderRoundsIt(t *testing.T) {
	p := &roundingProvider{quotas: map[string]storagev1alpha1.ObservedQuota{}}
	b := &storagev1alpha1.Bucket{Spec: storagev1alpha1.BucketSpec{BucketName: "b",
		Quota: &storagev1alpha1.BucketQuota{MaxSize: ptr.To(resource.MustParse("7000")), MaxObjects: ptr.To[int64](3)}}}
	var events []string
	emit := func(_, reason, message string) { events = append(events, reason+": "+message) }
	in := &Input{Bucket: b, Store: &fakes3.Store{}, Provider: p}
	only := []Syncer{Of[storagev1alpha1.ObservedQuota](Quota{})}

	for pass := range 3 {
		if res := Sync(context.Background(), in, emit, only); len(res.Failed) > 0 {
			t.Fatalf("pass %d: %+v", pass, res.Failed)
		}
		in.Applied = true // the pass ended Ready
	}
	want := &storagev1alpha1.ObservedQuota{MaxSizeBytes: 7168, MaxObjects: 3}
	if diff := cmp.Diff(want, b.Status.Quota); diff != "" {
		t.Errorf("status.quota (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"QuotaUpdated: Set the quota of bucket b to 7000 and 3 objects"}, events); p.writes != 1 || diff != "" {
		t.Errorf("%d writes, events (-want +got):\n%s", p.writes, diff)
	}

	b.Spec.Quota = nil
	Sync(context.Background(), in, emit, only)
	if p.quotas["b"] != (storagev1alpha1.ObservedQuota{}) || b.Status.Quota != nil {
		t.Errorf("after the spec dropped it: quota %+v, status %+v; want none", p.quotas["b"], b.Status.Quota)
	}
}

// Without a provider, a quota is unsupported, never ignored.
func TestQuotaWithoutAProviderIsUnsupported(t *testing.T) {
	b := &storagev1alpha1.Bucket{Spec: storagev1alpha1.BucketSpec{BucketName: "b",
		Quota: &storagev1alpha1.BucketQuota{MaxObjects: ptr.To[int64](3)}}}
	res := Sync(context.Background(), &Input{Bucket: b, Store: &fakes3.Store{}}, func(string, string, string) {},
		[]Syncer{Of[storagev1alpha1.ObservedQuota](Quota{})})
	if len(res.Failed) != 1 || !res.Failed[0].Unsupported || res.Failed[0].Info.Unsupported != storagev1alpha1.ReasonQuotaUnsupported {
		t.Errorf("failed %+v, want one unsupported quota", res.Failed)
	}
}
