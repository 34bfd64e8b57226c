package storage

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// contractFinding is what ended a pass of the Contract reconciler: Ready, or what stopped it
// short.
type contractFinding int

const (
	// contractFoundNothing: the pass learned nothing that changes Ready (it stopped on an API
	// server error, or a deletion went ahead): Ready stays as it was.
	contractFoundNothing contractFinding = iota
	// contractAvailable: the provider reports the contract (observed) and its keys are in the
	// Secret.
	contractAvailable
	// contractInvalidName: the name cannot label the Secret (why); nothing is bought.
	contractInvalidName
	// contractCancelled: the provider reports the contract (id) as cancelled.
	contractCancelled
	// contractSecretConflict: the Secret's name (secret) is taken by a Secret of someone else.
	contractSecretConflict
	// contractAPIFailed: a call of the contract API failed (apiErr), transiently or by a refusal.
	contractAPIFailed
	// contractHasBuckets: the provider refuses to cancel a contract (id) that still owns buckets.
	contractHasBuckets
)

// contractPass is what one pass of the Contract reconciler found. The reconciler records
// findings as it goes; contractConditions derives every condition from them, once, at the end of
// the pass.
type contractPass struct {
	found    contractFinding
	observed contractclient.Contract
	id       string
	why      string
	secret   string
	apiErr   *contractclient.Error

	// bucketsListed says the Buckets naming the Contract were listed (InUse is derived only
	// then); buckets names them, sorted (namedBy depends on it).
	bucketsListed bool
	buckets       []string
}

// contractConditions derives the Contract's conditions from what a pass found. A nil condition
// is left as it was.
func contractConditions(c *storagev1alpha1.Contract, p *contractPass) (ready, inUse *condition) {
	if p.bucketsListed {
		inUse = falseCondition(storagev1alpha1.ReasonNoBuckets, "No Bucket names this Contract")
		if len(p.buckets) > 0 {
			inUse = &condition{metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, namedBy(p.buckets)}
		}
	}
	if !c.DeletionTimestamp.IsZero() && len(p.buckets) > 0 {
		// The Bucket watch wakes the Contract when they go: waiting is not failing.
		return falseCondition(storagev1alpha1.ReasonDeleting,
			"Deletion waits until no Bucket names this Contract (see the InUse condition)"), inUse
	}
	return contractCause(c, p), inUse
}

// namedInFull is how many Buckets InUse names and counts exactly; of more, it names as many and
// says roughly how many there are.
const namedInFull = 3

// namedBy is InUse's message for the Buckets (sorted) that name a Contract. A message that
// listed or counted every Bucket would change with each one created or deleted, and cost a write
// of the Contract each time: a burst of a hundred Buckets a Contract, a hundred writes. Past
// namedInFull it names the first few and the power of ten their number exceeds, and so changes
// only when one of the first few changes or the number passes a power of ten.
func namedBy(buckets []string) string {
	if len(buckets) <= namedInFull {
		return fmt.Sprintf("Named by %s: %s", plural(len(buckets), "Bucket"), strings.Join(buckets, ", "))
	}
	more := namedInFull
	for p := 10; p < len(buckets); p *= 10 {
		more = p
	}
	return fmt.Sprintf("Named by more than %d Buckets, among them %s (kubectl get buckets shows each one's Contract)",
		more, strings.Join(buckets[:namedInFull], ", "))
}

// contractCause is the Ready condition for what the pass found, nil when it found nothing new.
func contractCause(c *storagev1alpha1.Contract, p *contractPass) *condition {
	switch p.found {
	case contractFoundNothing:
		return nil
	case contractAvailable:
		return &condition{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, fmt.Sprintf(
			"Contract %s is %s; its credentials are in Secret %s", p.observed.ID, p.observed.State, c.SecretNameOrDefault())}
	case contractInvalidName:
		return falseCondition(storagev1alpha1.ReasonInvalidName, fmt.Sprintf(
			"Contract name %q cannot label its Secret (%s); nothing was bought: recreate the Contract with a shorter name",
			c.Name, p.why))
	case contractCancelled:
		return falseCondition(storagev1alpha1.ReasonContractCancelled, fmt.Sprintf(
			"The provider reports contract %s as cancelled; delete this Contract and create a new one", p.id))
	case contractSecretConflict:
		return falseCondition(storagev1alpha1.ReasonSecretConflict, fmt.Sprintf(
			"Secret %s exists and does not belong to this Contract; delete it or set spec.secretName to another name", p.secret))
	case contractAPIFailed:
		if p.apiErr.Retryable() {
			return falseCondition(storagev1alpha1.ReasonContractAPIUnavailable,
				fmt.Sprintf("The contract API failed while %s: %s; retrying", p.apiErr.Op, p.apiErr.Summary()))
		}
		return falseCondition(storagev1alpha1.ReasonContractAPIRejected,
			fmt.Sprintf("The contract API refused %s: %s", p.apiErr.Op, p.apiErr.Summary()))
	case contractHasBuckets:
		// Buckets outside Kubernetes (or retained ones) are the user's data: never forced.
		return falseCondition(storagev1alpha1.ReasonContractAPIRejected, fmt.Sprintf(
			"Contract %s still owns buckets at the provider (retained or made outside Kubernetes); "+
				"delete them, or set spec.reclaimPolicy to Retain to keep the contract", p.id))
	}
	return nil
}
