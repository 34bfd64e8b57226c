package storage

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine/status"
)

func TestBucketsWakeOnlyForContractChangesTheyRead(t *testing.T) {
	ready := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Name: "acc", Generation: 1}}
	ready.Status.State, ready.Status.Endpoint, ready.Status.SecretName = "active", "http://127.0.0.1:7070", "acc-credentials"
	status.SetCondition(&ready.Status.Conditions, 1, storagev1alpha1.ReadyCondition, metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "ok")
	status.SetCondition(&ready.Status.Conditions, 1, storagev1alpha1.InUseCondition, metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, "Named by 1 Bucket: a")
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		change func(*storagev1alpha1.Contract)
		wake   bool
	}{
		{"nothing", func(*storagev1alpha1.Contract) {}, false},
		{"another Bucket names it", func(c *storagev1alpha1.Contract) {
			status.SetCondition(&c.Status.Conditions, 1, storagev1alpha1.InUseCondition, metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, "Named by 2 Buckets: a, b")
		}, false},
		{"another Bucket's usage is summed", func(c *storagev1alpha1.Contract) {
			c.Status.Usage = &storagev1alpha1.ContractUsage{Bytes: 0, Objects: 0, Size: "0 B", Buckets: 2}
		}, false},
		{"endpoint", func(c *storagev1alpha1.Contract) { c.Status.Endpoint = "http://127.0.0.1:7071" }, true},
		{"state", func(c *storagev1alpha1.Contract) { c.Status.State = "cancelled" }, true},
		{"secret name", func(c *storagev1alpha1.Contract) { c.Status.SecretName = "moved" }, true},
		{"not Ready", func(c *storagev1alpha1.Contract) {
			status.SetCondition(&c.Status.Conditions, 1, storagev1alpha1.ReadyCondition, metav1.ConditionFalse, "ContractAPIUnavailable", "down")
		}, true},
		{"deleted", func(c *storagev1alpha1.Contract) { c.DeletionTimestamp = &now }, true},
		{"spec", func(c *storagev1alpha1.Contract) { c.Generation = 2 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := ready.DeepCopy(), ready.DeepCopy()
			tc.change(cur)
			if got := bucketsSeeChange(old, cur); got != tc.wake {
				t.Errorf("Buckets woken: %v, want %v", got, tc.wake)
			}
		})
	}
}
