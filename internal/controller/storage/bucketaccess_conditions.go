package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// accessFound is what a pass of the BucketAccess reconciler found; conclude derives every
// condition from it, once, at the end of the pass.
type accessFound struct {
	// ready decides Ready; nil leaves it as it was.
	ready accessFinding
	// check is the key in the Secret, and what it was found able to do, when it was checked.
	check *keyCheck
	// keys is what the pass found about the key's rotation.
	keys credentials.Finding
}

// end is how a pass that found f ends.
func (f accessFound) end(ready accessFinding, after time.Duration, err error) accessOutcome {
	f.ready = ready
	return accessOutcome{Found: f, After: after, Err: err}
}

// An accessFinding is one thing a pass can find that decides the BucketAccess's Ready.
type accessFinding interface {
	ready(a *storagev1alpha1.BucketAccess, check *keyCheck) *engine.Condition
}

type (
	accessInvalidName      struct{ why string }
	accessBucketMissing    struct{}
	accessBucketNotReady   struct{ why string }
	accessContractNotReady struct{ why string }
	// accessExistingAccount: the Contract uses an account of its own, where principals cannot be made.
	accessExistingAccount struct{ contract string }
	// configMap: it is the obc format's ConfigMap of that name that is someone else's.
	accessSecretTaken struct {
		secret    string
		configMap bool
	}
	// accessSecretUnsafe: a value of the credentials cannot be written in a format asked for.
	accessSecretUnsafe struct{ err error }
	accessAPIFailed    struct{ err *contractclient.Error }
	// principalLost: the provider no longer has the principal (deleted outside the operator).
	principalLost  struct{}
	accessS3Failed struct{ err error }
	// accessIssued: the Secret holds the key; what it can do decides Ready.
	accessIssued   struct{}
	accessDeleting struct{}
	// waitingForUser: being deleted, it waits for the resource it serves to go.
	waitingForUser struct{ owner string }
	// accessKeyReplacing: the Secret lost the key, and a new one is on its way.
	accessKeyReplacing struct{ secret, key string }
	// accessWithheld: the first key, tried with itself, does not do only what it is for (the
	// policy does not carry it yet, or it reaches outside its prefix): it is not handed out.
	accessWithheld struct{ reason, why string }
)

func (f accessInvalidName) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonInvalidName, fmt.Sprintf(
		"The name cannot label the credentials Secret (%s); nothing was issued. Use a name of at most 63 characters.", f.why))
}

func (accessBucketMissing) ready(a *storagev1alpha1.BucketAccess, _ *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketNotFound, fmt.Sprintf("Bucket %q does not exist in namespace %s.", string(a.Spec.Bucket), a.Namespace))
}

func (f accessBucketNotReady) ready(a *storagev1alpha1.BucketAccess, _ *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketNotReady, fmt.Sprintf("Waiting for Bucket %q: %s.", string(a.Spec.Bucket), f.why))
}

func (f accessContractNotReady) ready(a *storagev1alpha1.BucketAccess, _ *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractNotReady, fmt.Sprintf("Waiting for the Contract of Bucket %q: %s.", string(a.Spec.Bucket), f.why))
}

func (f accessExistingAccount) ready(a *storagev1alpha1.BucketAccess, _ *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonPrincipalsUnsupported, fmt.Sprintf(
		"Contract %s uses an account of its own (spec.credentials), and keys for one bucket are made by a provider's contract API: "+
			"run the reference contract server in front of this S3 server and buy the Contract through it (docs/contract.md), "+
			"or give the workload the Contract's Secret", f.contract))
}

func (f accessSecretTaken) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	if f.configMap {
		return engine.False(storagev1alpha1.ReasonSecretConflict, configMapTaken(f.secret, "BucketAccess"))
	}
	return engine.False(storagev1alpha1.ReasonSecretConflict, fmt.Sprintf(
		"Secret %q exists and does not belong to this BucketAccess; it is never overwritten. Delete it or set spec.secretName.", f.secret))
}

func (f accessSecretUnsafe) ready(a *storagev1alpha1.BucketAccess, _ *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonUnsafeValue, unsafeValue(a.SecretNameOrDefault(), f.err))
}

func (f accessAPIFailed) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	reason := storagev1alpha1.ReasonContractAPIRejected
	switch {
	case errors.Is(f.err, contractclient.ErrNotSupported):
		reason = storagev1alpha1.ReasonPrincipalsUnsupported
	case f.err.Retryable():
		reason = storagev1alpha1.ReasonContractAPIUnavailable
	}
	return engine.False(reason, "The contract API: "+f.err.Summary())
}

func (principalLost) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonPrincipalLost,
		"The provider no longer has this BucketAccess's principal (deleted outside the operator). Delete and re-create the BucketAccess to get new credentials.")
}

func (f accessS3Failed) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonS3Unavailable, "Checking the key: "+objectstore.Describe(f.err))
}

func (accessDeleting) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonDeleting, "Revoking the credentials.")
}

func (f waitingForUser) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonDeleting, fmt.Sprintf(
		"Deletion waits until %s, which these credentials were made for, is gone: it must not lose its key first.", f.owner))
}

func (f accessKeyReplacing) ready(*storagev1alpha1.BucketAccess, *keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonProvisioning, fmt.Sprintf(
		"Secret %s lost key %s; a new key is on its way (see the KeyRotation condition).", f.secret, f.key))
}

func (f accessWithheld) ready(a *storagev1alpha1.BucketAccess, _ *keyCheck) *engine.Condition {
	return engine.False(f.reason, fmt.Sprintf("%s; it is not written to Secret %s until it does only what it is for.", f.why, a.SecretNameOrDefault()))
}

// ready of an issued key says whether it can do what its access allows, and only under its
// prefix.
func (accessIssued) ready(a *storagev1alpha1.BucketAccess, check *keyCheck) *engine.Condition {
	if check == nil {
		return nil
	}
	if missing, _ := accessGaps(a.Spec.Access, check.check); len(missing) > 0 {
		return engine.False(storagev1alpha1.ReasonPolicyPending, policyPending(missing, check))
	}
	if outside := outsideGaps(check.check); len(outside) > 0 {
		return engine.False(storagev1alpha1.ReasonPrefixUnsupported, prefixUnsupported(string(a.Spec.Prefix), outside, check))
	}
	return engine.True(storagev1alpha1.ReasonAvailable, fmt.Sprintf("The credentials are in Secret %s.", a.SecretNameOrDefault()))
}

// verifiedCondition is AccessVerified for what the key in the Secret was found able to do.
func verifiedCondition(a *storagev1alpha1.BucketAccess, check *keyCheck) *engine.Condition {
	missing, extra := accessGaps(a.Spec.Access, check.check)
	switch {
	case len(missing) > 0:
		return engine.False(storagev1alpha1.ReasonPolicyPending, policyPending(missing, check))
	case len(outsideGaps(check.check)) > 0:
		return engine.False(storagev1alpha1.ReasonPrefixUnsupported, prefixUnsupported(string(a.Spec.Prefix), outsideGaps(check.check), check))
	case len(extra) > 0:
		return engine.False(storagev1alpha1.ReasonAccessMismatch, fmt.Sprintf(
			"%s access, but the key can also %s (%s): the bucket's ACL or the user's policy allows it to more than this key.",
			a.Spec.Access, strings.Join(extra, " and "), checked(check)))
	}
	return engine.True(storagev1alpha1.ReasonVerified, fmt.Sprintf("Checked with the key itself: %s, as %s access allows.",
		describeCheck(check), a.Spec.Access))
}

// prefixUnsupported says that a key limited to prefix can do what outside names beyond it.
func prefixUnsupported(prefix string, outside []string, check *keyCheck) string {
	return fmt.Sprintf("The key can also %s outside prefix %q (%s): the S3 server does not enforce the policy's prefix condition, "+
		"or the bucket's ACL or policy allows more.", strings.Join(outside, " and "), prefix, checked(check))
}

func policyPending(missing []string, check *keyCheck) string {
	return fmt.Sprintf("The key cannot %s yet (%s): the Bucket's policy does not carry this access yet.", strings.Join(missing, " or "), checked(check))
}

func checked(check *keyCheck) string {
	return fmt.Sprintf("key %s, %s", check.key, describeCheck(check))
}

// conclude sets the BucketAccess's conditions from what the pass found, with an event when
// Ready's reason changes, when the key turns out able to do more than its access, and when
// KeyRotation turns False for a new reason.
func (k accessKind) conclude(a *storagev1alpha1.BucketAccess, f accessFound) {
	if f.keys.State == credentials.NotAsked {
		meta.RemoveStatusCondition(&a.Status.Conditions, storagev1alpha1.KeyRotationCondition)
	}
	described := credentials.Describe(a)
	if keys := described.Condition(f.keys); keys != nil {
		engine.SetAnnounced(k.Recorder, a, &a.Status.Conditions, a.Generation, storagev1alpha1.KeyRotationCondition, *keys, credentials.EventType)
	}
	ready, verified := accessConditions(a, f)
	if verified != nil {
		engine.SetAnnounced(k.Recorder, a, &a.Status.Conditions, a.Generation, storagev1alpha1.AccessVerifiedCondition, *verified,
			func(c engine.Condition) string {
				if c.Reason == storagev1alpha1.ReasonAccessMismatch {
					return corev1.EventTypeWarning
				}
				return ""
			})
	}
	if ready != nil {
		a.Status.ObservedGeneration = a.Generation
		engine.SetReady(k.Recorder, a, &a.Status.Conditions, a.Generation, *ready)
	}
}

// accessConditions derives Ready and AccessVerified from what a pass found; nil leaves one as
// it is.
func accessConditions(a *storagev1alpha1.BucketAccess, f accessFound) (ready, verified *engine.Condition) {
	if f.check != nil {
		verified = verifiedCondition(a, f.check)
	}
	if f.ready != nil {
		ready = f.ready.ready(a, f.check)
	}
	return ready, verified
}

// principalFailed ends a pass on a failed principal call: a principal the provider no longer
// has waits for the user; other failures go as engine.APIFailure says.
func (k accessKind) principalFailed(found accessFound, err error) accessOutcome {
	if errors.Is(err, contractclient.ErrPrincipalDeleted) || errors.Is(err, contractclient.ErrNotFound) {
		return found.end(principalLost{}, 0, reconcile.TerminalError(err))
	}
	apiErr, after, err := engine.APIFailure(err)
	if apiErr == nil {
		return found.end(nil, 0, err)
	}
	return found.end(accessAPIFailed{apiErr}, after, err)
}

// secretFailed ends a pass whose Secret is someone else's (ErrSecretConflict), holds a value a
// format cannot (ErrUnsafeValue), or could not be written. A foreign Secret is not in the cache
// (it lacks the label), and a provider's answer changes by itself: look again later.
func (k accessKind) secretFailed(found accessFound, a *storagev1alpha1.BucketAccess, err error) accessOutcome {
	switch {
	case errors.Is(err, credentials.ErrSecretConflict) || errors.Is(err, credentials.ErrConfigMapConflict):
		taken := accessSecretTaken{secret: a.SecretNameOrDefault(), configMap: errors.Is(err, credentials.ErrConfigMapConflict)}
		return found.end(taken, engine.WaitingRetry(k.ResyncPeriod), nil)
	case errors.Is(err, credentials.ErrUnsafeValue):
		return found.end(accessSecretUnsafe{err}, engine.WaitingRetry(k.ResyncPeriod), nil)
	}
	return found.end(nil, 0, err)
}

// secretNotWritten says whether err stopped a Secret's write for good until something changes:
// a Secret or ConfigMap of someone else's, or a value a format cannot hold.
func secretNotWritten(err error) bool {
	return errors.Is(err, credentials.ErrSecretConflict) || errors.Is(err, credentials.ErrConfigMapConflict) ||
		errors.Is(err, credentials.ErrUnsafeValue)
}

// unsafeValue says that Secret name was not written, for err (credentials.ErrUnsafeValue), and
// how to get out.
func unsafeValue(name string, err error) string {
	why := "a value cannot be written as it is"
	if unsafe := (*credentials.UnsafeValueError)(nil); errors.As(err, &unsafe) {
		why = unsafe.Error()
	}
	return fmt.Sprintf("Secret %s was not written: %s. Take that format out of spec.formats (env holds any value as it is), "+
		"or have the value corrected where it comes from (the provider's answer, or spec.credentials and its Secret)", name, why)
}

// configMapTaken says that the obc format's ConfigMap, of the Secret's name, is someone else's.
func configMapTaken(name, kind string) string {
	return fmt.Sprintf("ConfigMap %s exists and does not belong to this %s; the obc format writes the connection to a ConfigMap "+
		"of the Secret's name, and never overwrites another's. Delete it, or take obc out of spec.formats", name, kind)
}

// accessGaps lists what a key cannot do that its access allows (missing), and what it can do
// that its access does not allow (extra).
func accessGaps(access storagev1alpha1.AccessMode, c objectstore.AccessCheck) (missing, extra []string) {
	want := map[storagev1alpha1.AccessMode]objectstore.AccessCheck{
		storagev1alpha1.AccessReadOnly:  {List: true, Read: true},
		storagev1alpha1.AccessReadWrite: {List: true, Read: true, Write: true},
		storagev1alpha1.AccessWriteOnly: {Write: true},
	}[access]
	for _, d := range []struct {
		what      string
		want, got bool
	}{{"list", want.List, c.List}, {"read", want.Read, c.Read}, {"write", want.Write, c.Write}} {
		switch {
		case d.want && !d.got:
			missing = append(missing, d.what)
		case !d.want && d.got:
			extra = append(extra, d.what)
		}
	}
	return missing, extra
}

// outsideGaps lists what a key checked under a prefix can do outside it.
func outsideGaps(c objectstore.AccessCheck) []string {
	if c.Outside == nil {
		return nil
	}
	var can []string
	for _, d := range []struct {
		what string
		ok   bool
	}{{"list", c.Outside.List}, {"read", c.Outside.Read}, {"write", c.Outside.Write}} {
		if d.ok {
			can = append(can, d.what)
		}
	}
	return can
}

// describeCheck says what a check found: "list allowed, read allowed, write refused", under
// the prefix and outside it when the key has one.
func describeCheck(check *keyCheck) string {
	words := func(c objectstore.AccessCheck) string {
		word := func(ok bool, what string) string {
			if ok {
				return what + " allowed"
			}
			return what + " refused"
		}
		return strings.Join([]string{word(c.List, "list"), word(c.Read, "read"), word(c.Write, "write")}, ", ")
	}
	c := check.check
	if c.Outside == nil {
		return words(c)
	}
	return fmt.Sprintf("under prefix %q %s; outside it %s", check.prefix, words(c), words(*c.Outside))
}
