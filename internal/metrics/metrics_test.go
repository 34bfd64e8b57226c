package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestContractOperationKeepsIdsOutOfLabels(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/v1/contracts", "POST /v1/contracts"},
		{"GET", "/v1/contracts/c-123", "GET /v1/contracts/{id}"},
		{"DELETE", "/v1/contracts/c-123/keys/AKIA42", "DELETE /v1/contracts/{id}/keys/{accessKeyId}"},
		{"GET", "/prefix/v1/contracts/c-1/", "GET /v1/contracts/{id}"},
		{"PUT", "/v1/contracts/c-1/buckets/uploads-team/quota", "PUT /v1/contracts/{id}/buckets/{bucket}/quota"},
		{"PUT", "/v1/contracts/c-1/topics/osm-3f0c1a2b-bucket-uid", "PUT /v1/contracts/{id}/topics/{topicName}"},
		{"DELETE", "/v1/contracts/c-1/principals/p-9/keys/AK1", "DELETE /v1/contracts/{id}/principals/{principalId}/keys/{accessKeyId}"},
		{"GET", "/v1/contracts/c-1/topics/a/b", "GET other"},
		{"GET", "/somewhere/else", "GET other"},
		{"BREW", "/v1/contracts", "OTHER /v1/contracts"},
	} {
		if got := ContractOperation(tc.method, tc.path); got != tc.want {
			t.Errorf("ContractOperation(%s, %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

// osm_resources counts each kind by the status and reason of its Ready condition; other
// conditions do not count, and a resource without Ready counts as NoCondition.
func TestResourcesAreCountedByTheStatusAndReasonOfReady(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: "Other", Status: metav1.ConditionFalse, Reason: "Ignored"}, {Type: "Ready", Status: status, Reason: reason}}
	}
	bucket := func(name string, conds []metav1.Condition) *storagev1alpha1.Bucket {
		return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name},
			Status: storagev1alpha1.BucketStatus{Conditions: conds}}
	}
	observe(t,
		bucket("a", ready(metav1.ConditionTrue, "Synced")),
		bucket("b", ready(metav1.ConditionTrue, "Synced")),
		bucket("c", ready(metav1.ConditionFalse, "ContractNotReady")),
		bucket("d", nil),
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "acc"},
			Status: storagev1alpha1.ContractStatus{Conditions: ready(metav1.ConditionTrue, "Available")}},
	)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(resourceCollector)
	got := scrape(t, reg)
	want := []string{
		"osm_resources{kind=Bucket,ready=False,reason=ContractNotReady} 1",
		"osm_resources{kind=Bucket,ready=True,reason=Synced} 2",
		"osm_resources{kind=Bucket,ready=Unknown,reason=NoCondition} 1",
		"osm_resources{kind=Contract,ready=True,reason=Available} 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}
