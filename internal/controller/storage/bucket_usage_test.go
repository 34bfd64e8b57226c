package storage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1023: "1023", 1024: "1.0Ki", 3500: "3.4Ki", 5 << 30: "5.0Gi", 1536 << 20: "1.5Gi"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// QuotaNearlyFull follows the limit nearest to being reached, against the spec's threshold.
func TestQuotaNearlyFullFollowsTheNearestLimit(t *testing.T) {
	bucket := func(quota storagev1alpha1.BucketQuota, bytes, objects int64) *storagev1alpha1.Bucket {
		return &storagev1alpha1.Bucket{Spec: storagev1alpha1.BucketSpec{BucketName: "b", Quota: &quota},
			Status: storagev1alpha1.BucketStatus{Usage: &storagev1alpha1.BucketUsage{Bytes: bytes, Objects: objects, Size: humanBytes(bytes)}}}
	}
	objects3 := storagev1alpha1.BucketQuota{MaxObjects: ptr.To[int64](3), NearlyFullPercent: 90}
	tests := []struct {
		name string
		b    *storagev1alpha1.Bucket
		want engine.Condition
	}{
		{"two objects of three", bucket(objects3, 3500, 2), engine.Condition{Status: metav1.ConditionFalse, Reason: "BelowThreshold",
			Message: "Bucket b holds 3.4Ki in 2 objects, against a quota of 3 objects: below 90%"}},
		{"three objects of three", bucket(objects3, 3500, 3), engine.Condition{Status: metav1.ConditionTrue, Reason: "QuotaNearlyFull",
			Message: "Bucket b holds 3.4Ki in 3 objects, against a quota of 3 objects: 100% full, past the 90% of spec.quota.nearlyFullPercent; " +
				"the provider refuses writes past the quota: delete objects, or raise spec.quota"}},
		{"the size nearer its limit than the objects, the default threshold", bucket(storagev1alpha1.BucketQuota{
			MaxSize: ptr.To(resource.MustParse("1Ki")), MaxObjects: ptr.To[int64](100)}, 950, 1), engine.Condition{
			Status: metav1.ConditionTrue, Reason: "QuotaNearlyFull",
			Message: "Bucket b holds 950 in 1 object, against a quota of 1Ki and 100 objects: 93% full, past the 90% of " +
				"spec.quota.nearlyFullPercent; the provider refuses writes past the quota: delete objects, or raise spec.quota"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, *usageKnown{}.nearlyFull(tt.b)); diff != "" {
				t.Errorf("nearlyFull (-want +got):\n%s", diff)
			}
		})
	}
}
