package credentials

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// State is where a pass left the keys.
type State int

const (
	// Untouched: the pass did not get to the keys; KeyRotation stays as it was.
	Untouched State = iota
	// NotAsked: no rotation is asked for or under way; there is no KeyRotation condition.
	NotAsked
	// Current: the key in the Secret is the one status names, and nothing is due now.
	Current
	// Rotating: a new key is asked for and not in the Secret yet.
	Rotating
	// Unsupported: the provider's accounts hold one key pair (Why says why).
	Unsupported
	// NotWorking: the new key, tried with itself, does not do what it is for yet (Reason, and
	// Why: a sentence that names the key and says what the try found).
	NotWorking
	// S3Failed: the S3 endpoint could not be asked to try the new key (Err).
	S3Failed
	// APIFailed: a contract API call of the keys failed (APIErr).
	APIFailed
	// Withheld: the first key (NewKey), tried with itself (Keys.VerifyFirst), does not do only
	// what it is for (Reason, Why) or could not be tried (Err); it is not in the Secret. No
	// rotation is asked: KeyRotation stays as it was.
	Withheld
)

// Finding is what a pass found about the keys.
type Finding struct {
	State State
	// Why is the provider's reason for one key (Unsupported), or what the try of a new key
	// found (NotWorking, with its Reason).
	Why, Reason string
	// NewKey is the new key's id, once the provider gave it.
	NewKey string
	// Err is the S3 endpoint's failure (S3Failed); APIErr the contract API's (APIFailed), and
	// Revoking the key whose revocation it was, if it was one.
	Err      error
	APIErr   *contractclient.Error
	Revoking string
}

// Described is a resource's keys as its KeyRotation condition talks about them.
type Described struct {
	// Kind is the resource's kind: "Contract".
	Kind       string
	Status     *storagev1alpha1.KeyStatus
	SecretName string
	// Rotation is the spec's rotation and RotationField its path ("spec.keyRotation").
	Rotation      *storagev1alpha1.KeyRotation
	RotationField string
}

// Condition is the KeyRotation condition for what a pass found: nil when it found nothing
// about the keys (Untouched: the condition stays) or nothing is asked (NotAsked: the condition
// goes; see Remove).
func (d Described) Condition(f Finding) *engine.Condition {
	st, secret := d.Status, d.SecretName
	keeps := fmt.Sprintf("Secret %s keeps key %s", secret, st.AccessKeyID)
	switch f.State {
	case Current:
		return d.current()
	case Rotating:
		return engine.False(storagev1alpha1.ReasonKeyRotationInProgress, "Asking the provider for a new key; "+keeps+" meanwhile")
	case Unsupported:
		why := f.Why
		if why == "" {
			why = "The provider's accounts hold one key pair"
		}
		return engine.False(storagev1alpha1.ReasonKeyRotationUnsupported, fmt.Sprintf(
			"%s: this %s's key cannot rotate, and key %s stays in Secret %s. Remove %s and the %s annotation to stop asking",
			upperFirst(why), d.Kind, st.AccessKeyID, secret, d.RotationField, storagev1alpha1.RotateKeyAnnotation))
	case NotWorking:
		return engine.False(f.Reason, fmt.Sprintf("%s, so %s; trying again", f.Why, keeps))
	case S3Failed:
		return engine.False(storagev1alpha1.ReasonS3Unavailable, fmt.Sprintf(
			"The S3 endpoint could not be reached to try new key %s (%s); %s; retrying", f.NewKey, objectstore.Describe(f.Err), keeps))
	case APIFailed:
		if f.APIErr.Retryable() {
			return engine.False(storagev1alpha1.ReasonContractAPIUnavailable, fmt.Sprintf(
				"The contract API failed while %s: %s; %s; retrying", f.APIErr.Op, f.APIErr.Summary(), keeps))
		}
		return engine.False(storagev1alpha1.ReasonContractAPIRejected, fmt.Sprintf(
			"The contract API refused %s: %s; %s", f.APIErr.Op, f.APIErr.Summary(), keeps))
	}
	return nil
}

// current says which key the Secret holds since when, what it replaced and when the next
// rotation comes. Every time in it comes from status or spec, so it reads the same on every
// pass until something changes.
func (d Described) current() *engine.Condition {
	st := d.Status
	var since string
	if st.KeyIssuedAt != nil {
		since = " since " + formatTime(st.KeyIssuedAt.Time)
	}
	msg := fmt.Sprintf("Key %s has been in Secret %s%s", st.AccessKeyID, d.SecretName, since)
	reason := storagev1alpha1.ReasonKeyRotated
	if st.KeysIssued == 0 {
		reason = storagev1alpha1.ReasonKeyRotationScheduled
	}
	if len(st.RetiringKeys) > 0 {
		msg += "; " + RetiringSummary(st.RetiringKeys)
	}
	if r := d.Rotation; r != nil && st.KeyIssuedAt != nil {
		msg += fmt.Sprintf("; the next rotation is at %s (%s.period %s)",
			formatTime(st.KeyIssuedAt.Add(r.Period.Duration)), d.RotationField, r.Period.Duration)
	} else {
		msg += fmt.Sprintf("; a new value of annotation %s rotates it", storagev1alpha1.RotateKeyAnnotation)
	}
	return &engine.Condition{Status: metav1.ConditionTrue, Reason: reason, Message: msg}
}

// RetiringSummary says when the replaced keys are revoked.
func RetiringSummary(keys []storagev1alpha1.RetiringKey) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s at %s", k.AccessKeyID, formatTime(k.RevokeAfter.Time)))
	}
	verb := "keys are"
	if len(keys) == 1 {
		verb = "key is"
	}
	return fmt.Sprintf("the replaced %s revoked: %s", verb, strings.Join(parts, ", "))
}

// EventType is the event a KeyRotation condition's new reason gets: a warning when it turns
// False, since the key does not rotate as asked, but for a rotation simply under way; none
// otherwise (the rotation's own steps have events of their own).
func EventType(c engine.Condition) string {
	if c.Status == metav1.ConditionFalse && c.Reason != storagev1alpha1.ReasonKeyRotationInProgress {
		return "Warning"
	}
	return ""
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
