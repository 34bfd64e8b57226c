package storage

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/status"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
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
	// contractKeysRetiring: deletion (reclaimPolicy Retain) waits until the keys rotation
	// replaced are revoked, at the end of their overlap.
	contractKeysRetiring
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

	// keys is what the pass found about key rotation (see contract_keys.go); keysWhy is the
	// provider's reason for holding one key, keysErr the S3 endpoint's answer to a new key,
	// keysAPIErr a failed contract API call, keysNew the new key's id once the provider gave
	// it, keysRevoking the key whose revocation was last asked for.
	keys         keyFinding
	keysWhy      string
	keysErr      error
	keysAPIErr   *contractclient.Error
	keysNew      string
	keysRevoking string
}

// contractConditions derives the Contract's conditions from what a pass found. A nil condition
// is left as it was (KeyRotation is removed when p.keys is keysNotAsked).
func contractConditions(c *storagev1alpha1.Contract, p *contractPass) (ready, inUse, keys *condition) {
	keys = keyRotationCondition(c, p)
	if p.bucketsListed {
		inUse = falseCondition(storagev1alpha1.ReasonNoBuckets, "No Bucket names this Contract")
		if len(p.buckets) > 0 {
			inUse = &condition{metav1.ConditionTrue, storagev1alpha1.ReasonBucketsExist, namedBy(p.buckets)}
		}
	}
	if !c.DeletionTimestamp.IsZero() && len(p.buckets) > 0 {
		// The Bucket watch wakes the Contract when they go: waiting is not failing.
		return falseCondition(storagev1alpha1.ReasonDeleting,
			"Deletion waits until no Bucket names this Contract (see the InUse condition)"), inUse, keys
	}
	return contractCause(c, p), inUse, keys
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
	case contractKeysRetiring:
		return falseCondition(storagev1alpha1.ReasonDeleting, fmt.Sprintf(
			"Deletion waits until %s; the contract stays at the provider (reclaimPolicy Retain) with key %s in Secret %s",
			retiringSummary(c.Status.RetiringKeys), c.Status.AccessKeyID, c.SecretNameOrDefault()))
	case contractHasBuckets:
		// Buckets outside Kubernetes (or retained ones) are the user's data: never forced.
		return falseCondition(storagev1alpha1.ReasonContractAPIRejected, fmt.Sprintf(
			"Contract %s still owns buckets at the provider (retained or made outside Kubernetes); "+
				"delete them, or set spec.reclaimPolicy to Retain to keep the contract", p.id))
	}
	return nil
}

// keyRotationCondition is the KeyRotation condition for what the pass found about the keys, nil
// when it found nothing about them (or nothing is asked: the condition is then removed).
func keyRotationCondition(c *storagev1alpha1.Contract, p *contractPass) *condition {
	secret := c.SecretNameOrDefault()
	switch p.keys {
	case keysUntouched, keysNotAsked:
		return nil
	case keysCurrent:
		return keysCurrentCondition(c)
	case keysRotating:
		return falseCondition(storagev1alpha1.ReasonKeyRotationInProgress, fmt.Sprintf(
			"Asking the provider for a new key; Secret %s keeps key %s meanwhile", secret, c.Status.AccessKeyID))
	case keysUnsupported:
		why := p.keysWhy
		if why == "" {
			why = "The provider's accounts hold one key pair"
		}
		return falseCondition(storagev1alpha1.ReasonKeyRotationUnsupported, fmt.Sprintf(
			"%s: this Contract's key cannot rotate, and key %s stays in Secret %s. "+
				"Remove spec.keyRotation and the %s annotation to stop asking",
			upperFirst(why), c.Status.AccessKeyID, secret, storagev1alpha1.RotateKeyAnnotation))
	case keysRefused:
		return falseCondition(storagev1alpha1.ReasonNewKeyRefused, fmt.Sprintf(
			"The S3 endpoint refused new key %s when it was tried (%s), so Secret %s keeps key %s; trying again",
			p.keysNew, objectstore.Describe(p.keysErr), secret, c.Status.AccessKeyID))
	case keysS3Failed:
		return falseCondition(storagev1alpha1.ReasonS3Unavailable, fmt.Sprintf(
			"The S3 endpoint could not be reached to try new key %s (%s); Secret %s keeps key %s; retrying",
			p.keysNew, objectstore.Describe(p.keysErr), secret, c.Status.AccessKeyID))
	case keysAPIFailed:
		if p.keysAPIErr.Retryable() {
			return falseCondition(storagev1alpha1.ReasonContractAPIUnavailable, fmt.Sprintf(
				"The contract API failed while %s: %s; Secret %s keeps key %s; retrying",
				p.keysAPIErr.Op, p.keysAPIErr.Summary(), secret, c.Status.AccessKeyID))
		}
		return falseCondition(storagev1alpha1.ReasonContractAPIRejected, fmt.Sprintf(
			"The contract API refused %s: %s; Secret %s keeps key %s",
			p.keysAPIErr.Op, p.keysAPIErr.Summary(), secret, c.Status.AccessKeyID))
	}
	return nil
}

// keysCurrentCondition says which key the Secret holds since when, what it replaced and when
// the next rotation comes. Every time in it comes from status or spec, so it reads the same on
// every pass until something changes.
func keysCurrentCondition(c *storagev1alpha1.Contract) *condition {
	st := c.Status
	var since string
	if st.KeyIssuedAt != nil {
		since = " since " + formatTime(st.KeyIssuedAt.Time)
	}
	msg := fmt.Sprintf("Key %s has been in Secret %s%s", st.AccessKeyID, c.SecretNameOrDefault(), since)
	reason := storagev1alpha1.ReasonKeyRotated
	if st.KeysIssued == 0 {
		reason = storagev1alpha1.ReasonKeyRotationScheduled
	}
	if len(st.RetiringKeys) > 0 {
		msg += "; " + retiringSummary(st.RetiringKeys)
	}
	if r := c.Spec.KeyRotation; r != nil && st.KeyIssuedAt != nil {
		msg += fmt.Sprintf("; the next rotation is at %s (spec.keyRotation.period %s)",
			formatTime(st.KeyIssuedAt.Add(r.Period.Duration)), r.Period.Duration)
	} else {
		msg += fmt.Sprintf("; a new value of annotation %s rotates it", storagev1alpha1.RotateKeyAnnotation)
	}
	return &condition{metav1.ConditionTrue, reason, msg}
}

// retiringSummary says when the replaced keys are revoked.
func retiringSummary(keys []storagev1alpha1.RetiringKey) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s at %s", k.AccessKeyID, formatTime(k.RevokeAfter.Time)))
	}
	return fmt.Sprintf("the replaced %s revoked: %s", pluralIs(len(keys), "key is", "keys are"), strings.Join(parts, ", "))
}

func pluralIs(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// setKeyRotation sets a Contract's KeyRotation condition and, when it turns False for a new
// reason, emits a warning that says why the key does not rotate. The rotation's own steps have
// events of their own.
func setKeyRotation(rec events.EventRecorder, c *storagev1alpha1.Contract, cond condition) {
	oldReason := status.Reason(c.Status.Conditions, storagev1alpha1.KeyRotationCondition)
	status.SetCondition(&c.Status.Conditions, c.Generation, storagev1alpha1.KeyRotationCondition, cond.Status, cond.Reason, cond.Message)
	if oldReason != cond.Reason && cond.Status == metav1.ConditionFalse && cond.Reason != storagev1alpha1.ReasonKeyRotationInProgress {
		rec.Eventf(c, nil, corev1.EventTypeWarning, cond.Reason, "RotateKey", "%s", cond.Message)
	}
}
