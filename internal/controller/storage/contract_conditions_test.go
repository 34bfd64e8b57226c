package storage

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

func TestContractConditionsFollowWhatThePassFound(t *testing.T) {
	unavailable := &contractclient.Error{Op: "creating the contract", Status: http.StatusServiceUnavailable, RetryAfter: time.Second}
	refusedPlan := &contractclient.Error{Op: "creating the contract", Status: http.StatusBadRequest}

	tests := []struct {
		name     string
		deleting bool
		pass     contractPass
		ready    *want // nil: Ready is left as it was
		inUse    *want
	}{
		{name: "a pass that learned nothing leaves Ready alone", pass: contractPass{}},
		{name: "Ready names the contract, its state and the Secret",
			pass:  contractPass{found: contractAvailable, observed: contractclient.Contract{ID: "c-1", State: "active"}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "Contract c-1 is active; its credentials are in Secret acme-credentials"}},
		{name: "a name that cannot label the Secret says nothing was bought",
			pass:  contractPass{found: contractInvalidName, why: "must be no more than 63 characters"},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonInvalidName, "(must be no more than 63 characters); nothing was bought"}},
		{name: "a cancelled contract asks for a new Contract", pass: contractPass{found: contractCancelled, id: "c-1"},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractCancelled, "contract c-1 as cancelled; delete this Contract"}},
		{name: "a foreign Secret under the name is not overwritten", pass: contractPass{found: contractSecretConflict, secret: "acme-credentials"},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonSecretConflict, "Secret acme-credentials exists and does not belong to this Contract"}},
		{name: "an API that is down is retried", pass: contractPass{found: contractAPIFailed, apiErr: unavailable},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIUnavailable, "failed while creating the contract"}},
		{name: "an API refusal waits for the spec", pass: contractPass{found: contractAPIFailed, apiErr: refusedPlan},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIRejected, "The contract API refused creating the contract"}},
		{name: "buckets at the provider keep a Delete contract, with the way out", deleting: true,
			pass:  contractPass{found: contractHasBuckets, id: "c-1", bucketsListed: true},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIRejected, "set spec.reclaimPolicy to Retain"},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNoBuckets, "No Bucket names this Contract"}},
		{name: "InUse names the Buckets", pass: contractPass{found: contractAvailable, bucketsListed: true, buckets: []string{"a", "b"}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			inUse: &want{metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, "Named by 2 Buckets: a, b"}},
		{name: "deletion waits for its Buckets", deleting: true, pass: contractPass{bucketsListed: true, buckets: []string{"a"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting, "Deletion waits until no Bucket names this Contract"},
			inUse: &want{metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, "Named by 1 Bucket: a"}},
		{name: "a deletion going ahead leaves Ready alone", deleting: true, pass: contractPass{bucketsListed: true},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNoBuckets, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "acme"}}
			if tt.deleting {
				now := metav1.Now()
				c.DeletionTimestamp = &now
			}
			ready, inUse := contractConditions(c, &tt.pass)
			checkCondition(t, "Ready", ready, tt.ready)
			checkCondition(t, "InUse", inUse, tt.inUse)
		})
	}
}

func TestContractInUseDoesNotChangeWithEveryBucket(t *testing.T) {
	buckets := func(n int) []string {
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("b-%03d", i))
		}
		return names
	}
	tests := []struct {
		n    int
		want string
	}{
		{1, "Named by 1 Bucket: b-000"},
		{3, "Named by 3 Buckets: b-000, b-001, b-002"},
		{4, "Named by more than 3 Buckets, among them b-000, b-001, b-002 (kubectl get buckets shows each one's Contract)"},
		{10, "Named by more than 3 Buckets, among them b-000, b-001, b-002 (kubectl get buckets shows each one's Contract)"},
		{11, "Named by more than 10 Buckets, among them b-000, b-001, b-002 (kubectl get buckets shows each one's Contract)"},
		{100, "Named by more than 10 Buckets, among them b-000, b-001, b-002 (kubectl get buckets shows each one's Contract)"},
		{101, "Named by more than 100 Buckets, among them b-000, b-001, b-002 (kubectl get buckets shows each one's Contract)"},
	}
	for _, tt := range tests {
		if got := namedBy(buckets(tt.n)); got != tt.want {
			t.Errorf("%d Buckets: %q, want %q", tt.n, got, tt.want)
		}
	}

	// A hundred Buckets of a Contract created one by one, in the order of their names: InUse
	// changes at 1, 2, 3, 4, 11 and 101 Buckets, not with each.
	changes, last := 0, ""
	for n := 1; n <= 200; n++ {
		if msg := namedBy(buckets(n)); msg != last {
			changes, last = changes+1, msg
		}
	}
	if changes != 6 {
		t.Errorf("InUse changed %d times over 200 Buckets, want 6", changes)
	}
}
