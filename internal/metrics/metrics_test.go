package metrics

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContractOperationKeepsIdsOutOfLabels(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/v1/contracts", "POST /v1/contracts"},
		{"GET", "/v1/contracts/c-123", "GET /v1/contracts/{id}"},
		{"DELETE", "/v1/contracts/c-123/keys/AKIA42", "DELETE /v1/contracts/{id}/keys/{id}"},
		{"GET", "/prefix/v1/contracts/c-1/", "GET /prefix/v1/contracts/{id}"},
		{"PUT", "/v1/contracts/c-1/buckets/uploads-team/quota", "PUT /v1/contracts/{id}/buckets/{id}/quota"},
	} {
		if got := ContractOperation(tc.method, tc.path); got != tc.want {
			t.Errorf("ContractOperation(%s, %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestCountReadyGroupsByStatusAndReason(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: "Other", Status: metav1.ConditionFalse, Reason: "Ignored"}, {Type: "Ready", Status: status, Reason: reason}}
	}
	got := countReady([][]metav1.Condition{
		ready(metav1.ConditionTrue, "Synced"),
		ready(metav1.ConditionTrue, "Synced"),
		ready(metav1.ConditionFalse, "ContractNotReady"),
		nil,
	})
	want := map[readyKey]int{{"True", "Synced"}: 2, {"False", "ContractNotReady"}: 1, {"Unknown", "NoCondition"}: 1}
	if len(got) != len(want) {
		t.Fatalf("countReady = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("countReady[%v] = %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
}
