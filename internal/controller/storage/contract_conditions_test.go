package storage

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
)

func TestContractConditionsFollowWhatThePassFound(t *testing.T) {
	unavailable := contractclient.NewError("creating the contract", http.StatusServiceUnavailable).WithRetryAfter(time.Second)
	refusedPlan := contractclient.NewError("creating the contract", http.StatusBadRequest)

	tests := []struct {
		name     string
		deleting bool
		pass     contractFound
		// rotated: the Secret holds key OSMKNEW since 12:00, which replaced OSMKOLD, revoked at
		// 12:10; without, OSMKNEW is the first key. period: spec.keyRotation.period is 24h.
		rotated, period bool
		ready           *want // nil: Ready is left as it was
		inUse           *want
		keys            *want
	}{
		{name: "a pass that learned nothing leaves Ready alone", pass: contractFound{}},
		{name: "Ready names the contract, its state and the Secret",
			pass:  contractFound{ready: available{contractclient.Contract{ID: "c-1", State: "active"}}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "Contract c-1 is active; its credentials are in Secret acme-credentials"}},
		{name: "a name that cannot label the Secret says nothing was bought",
			pass:  contractFound{ready: invalidName{"must be no more than 63 characters"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonInvalidName, "(must be no more than 63 characters); nothing was bought"}},
		{name: "a cancelled contract asks for a new Contract", pass: contractFound{ready: contractGone{"c-1"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractCancelled, "contract c-1 as cancelled; delete this Contract"}},
		{name: "a foreign Secret under the name is not overwritten", pass: contractFound{ready: secretTaken{secret: "acme-credentials"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonSecretConflict, "Secret acme-credentials exists and does not belong to this Contract"}},
		{name: "an API that is down is retried", pass: contractFound{ready: apiFailed{unavailable}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIUnavailable, "failed while creating the contract"}},
		{name: "an API refusal waits for the spec", pass: contractFound{ready: apiFailed{refusedPlan}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIRejected, "The contract API refused creating the contract"}},
		{name: "buckets at the provider keep a Delete contract, with the way out", deleting: true,
			pass:  contractFound{ready: hasBuckets{"c-1"}, buckets: &[]string{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIRejected, "have someone with the verb retain (ClusterRole cost-admin) set spec.reclaimPolicy to Retain"},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNoBuckets, "No Bucket names this Contract"}},
		{name: "InUse names the Buckets", pass: contractFound{ready: available{}, buckets: &[]string{"a", "b"}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			inUse: &want{metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, "Named by 2 Buckets: a, b"}},
		{name: "deletion waits for its Buckets", deleting: true, pass: contractFound{buckets: &[]string{"a"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting, "Deletion waits until no Bucket names this Contract"},
			inUse: &want{metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, "Named by 1 Bucket: a"}},
		{name: "a deletion going ahead leaves Ready alone", deleting: true, pass: contractFound{buckets: &[]string{}},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNoBuckets, ""}},
		{name: "a Retain deletion waits for the replaced keys to be revoked", deleting: true, rotated: true,
			pass: contractFound{ready: keysRetiring{}, buckets: &[]string{}, keys: credentials.Finding{State: credentials.Current}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting,
				"Deletion waits until the replaced key is revoked: OSMKOLD at 2024-06-01T12:10:00Z; the contract stays at the provider (reclaimPolicy Retain) with key OSMKNEW in Secret acme-credentials"},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNoBuckets, ""},
			keys:  &want{metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated, ""}},
		{name: "a pass that did not get to the keys leaves KeyRotation alone",
			pass:  contractFound{ready: available{}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""}},
		{name: "no rotation asked: no KeyRotation to set (it is removed)",
			pass:  contractFound{ready: available{}, keys: credentials.Finding{State: credentials.NotAsked}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""}},
		{name: "a rotated key says since when, what it replaced and when that goes", rotated: true,
			pass:  contractFound{ready: available{}, keys: credentials.Finding{State: credentials.Current}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			keys: &want{metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated,
				"Key OSMKNEW has been in Secret acme-credentials since 2024-06-01T12:00:00Z; the replaced key is revoked: OSMKOLD at 2024-06-01T12:10:00Z; " +
					"a new value of annotation storage.osm.dev/rotate-key rotates it"}},
		{name: "a period says when the next rotation comes", rotated: true, period: true,
			pass: contractFound{keys: credentials.Finding{State: credentials.Current}},
			keys: &want{metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated,
				"; the next rotation is at 2024-06-02T12:00:00Z (spec.keyRotation.period 24h0m0s)"}},
		{name: "a period before the first rotation is scheduled", period: true,
			pass: contractFound{keys: credentials.Finding{State: credentials.Current}},
			keys: &want{metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotationScheduled,
				"Key OSMKNEW has been in Secret acme-credentials since 2024-06-01T12:00:00Z; the next rotation is at 2024-06-02T12:00:00Z"}},
		{name: "one key per account is said plainly, in the provider's words",
			pass:  contractFound{ready: available{}, keys: credentials.Finding{State: credentials.Unsupported, Why: "versitygw accounts hold one key pair (a versitygw user is its access key)"}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonKeyRotationUnsupported,
				"Versitygw accounts hold one key pair (a versitygw user is its access key): this Contract's key cannot rotate, " +
					"and key OSMKNEW stays in Secret acme-credentials. Remove spec.keyRotation and the storage.osm.dev/rotate-key annotation to stop asking"}},
		{name: "a provider that gives no reason still says one key",
			pass: contractFound{keys: credentials.Finding{State: credentials.Unsupported}},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonKeyRotationUnsupported, "The provider's accounts hold one key pair: "}},
		{name: "a refused new key stays out of the Secret",
			pass: contractFound{keys: credentials.Finding{State: credentials.NotWorking, NewKey: "OSMKNEXT", Reason: storagev1alpha1.ReasonNewKeyRefused,
				Why: "The S3 endpoint refused new key OSMKNEXT when it was tried (InvalidAccessKeyId: as the server says)"}},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNewKeyRefused,
				"The S3 endpoint refused new key OSMKNEXT when it was tried (InvalidAccessKeyId: as the server says), so Secret acme-credentials keeps key OSMKNEW; trying again"}},
		{name: "an endpoint that cannot be reached is retried",
			pass: contractFound{keys: credentials.Finding{State: credentials.S3Failed, NewKey: "OSMKNEXT", Err: s3Answer(503, "ServiceUnavailable")}},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonS3Unavailable, "could not be reached to try new key OSMKNEXT"}},
		{name: "a rotation the API fails is retried, and Ready stays",
			pass:  contractFound{ready: available{}, keys: credentials.Finding{State: credentials.APIFailed, APIErr: contractclient.NewError("adding a key to contract c-1", 503)}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIUnavailable,
				"The contract API failed while adding a key to contract c-1: HTTP 503; Secret acme-credentials keeps key OSMKNEW; retrying"}},
		{name: "a rotation the API refuses says so",
			pass: contractFound{keys: credentials.Finding{State: credentials.APIFailed, APIErr: contractclient.NewError("revoking key OSMKOLD of contract c-1", 409)}},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIRejected, "The contract API refused revoking key OSMKOLD of contract c-1: HTTP 409"}},
		{name: "a rotation under way says the Secret keeps its key",
			pass: contractFound{keys: credentials.Finding{State: credentials.Rotating}},
			keys: &want{metav1.ConditionFalse, storagev1alpha1.ReasonKeyRotationInProgress, "Secret acme-credentials keeps key OSMKNEW meanwhile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issued := metav1.NewTime(time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC))
			c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "acme"},
				Status: storagev1alpha1.ContractStatus{KeyStatus: storagev1alpha1.KeyStatus{AccessKeyID: "OSMKNEW", KeyIssuedAt: &issued}}}
			if tt.rotated {
				c.Status.KeysIssued = 1
				c.Status.RetiringKeys = []storagev1alpha1.RetiringKey{{AccessKeyID: "OSMKOLD", RevokeAfter: metav1.NewTime(issued.Add(10 * time.Minute))}}
			}
			if tt.period {
				c.Spec.KeyRotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 24 * time.Hour}}
			}
			if tt.deleting {
				now := metav1.Now()
				c.DeletionTimestamp = &now
			}
			ready, inUse, keys := contractConditions(c, tt.pass)
			checkCondition(t, "Ready", ready, tt.ready)
			checkCondition(t, "InUse", inUse, tt.inUse)
			checkCondition(t, "KeyRotation", keys, tt.keys)
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
