package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// checks are the key in the Secret, and what it was found able to do in each of its
	// buckets (and in each bucket taken out of spec.buckets), when it was checked.
	checks []keyCheck
	// buckets are, by Bucket, what keeps one of spec.buckets from being reached (it does not
	// exist, is not ready, or is of another Contract); status.buckets says so.
	buckets map[string]accessFinding
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
	ready(a *storagev1alpha1.BucketAccess, checks []keyCheck) *engine.Condition
}

type (
	accessInvalidName      struct{ why string }
	accessBucketMissing    struct{ bucket string }
	accessBucketNotReady   struct{ bucket, why string }
	accessContractNotReady struct{ bucket, why string }
	// accessContractMismatch: a Bucket of spec.buckets is of another Contract than the first.
	accessContractMismatch struct{ bucket, contract, first, firstContract string }
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

func (f accessInvalidName) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonInvalidName, fmt.Sprintf(
		"The name cannot label the credentials Secret (%s); nothing was issued. Use a name of at most 63 characters.", f.why))
}

func (f accessBucketMissing) ready(a *storagev1alpha1.BucketAccess, _ []keyCheck) *engine.Condition {
	if f.bucket == "" {
		return engine.False(storagev1alpha1.ReasonBucketNotFound, "The spec names no Bucket: set spec.bucket, or spec.buckets.")
	}
	return engine.False(storagev1alpha1.ReasonBucketNotFound, fmt.Sprintf("Bucket %q does not exist in namespace %s.", f.bucket, a.Namespace))
}

func (f accessBucketNotReady) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketNotReady, fmt.Sprintf("Waiting for Bucket %q: %s.", f.bucket, f.why))
}

func (f accessContractNotReady) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractNotReady, fmt.Sprintf("Waiting for the Contract of Bucket %q: %s.", f.bucket, f.why))
}

func (f accessContractMismatch) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractMismatch, fmt.Sprintf(
		"Bucket %q belongs to Contract %s, and Bucket %q to Contract %s: one key is a principal of one account, so it reaches the Buckets of one Contract. "+
			"Take it out of spec.buckets, or make a BucketAccess for each Contract.", f.bucket, f.contract, f.first, f.firstContract))
}

func (f accessExistingAccount) ready(a *storagev1alpha1.BucketAccess, _ []keyCheck) *engine.Condition {
	if a.Keyless() {
		return engine.False(storagev1alpha1.ReasonAuthenticationUnsupported, fmt.Sprintf(
			"Contract %s uses an account of its own (spec.credentials), and roles for ServiceAccounts are made by a provider's contract API: "+
				"run the reference contract server in front of this S3 server and buy the Contract through it (docs/contract.md). Nothing was issued.", f.contract))
	}
	return engine.False(storagev1alpha1.ReasonPrincipalsUnsupported, fmt.Sprintf(
		"Contract %s uses an account of its own (spec.credentials), and keys for one bucket are made by a provider's contract API: "+
			"run the reference contract server in front of this S3 server and buy the Contract through it (docs/contract.md), "+
			"or give the workload the Contract's Secret", f.contract))
}

func (f accessSecretTaken) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	if f.configMap {
		return engine.False(storagev1alpha1.ReasonSecretConflict, configMapTaken(f.secret, "BucketAccess"))
	}
	return engine.False(storagev1alpha1.ReasonSecretConflict, fmt.Sprintf(
		"Secret %q exists and does not belong to this BucketAccess; it is never overwritten. Delete it or set spec.secretName.", f.secret))
}

func (f accessSecretUnsafe) ready(a *storagev1alpha1.BucketAccess, _ []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonUnsafeValue, unsafeValue(a.SecretNameOrDefault(), f.err))
}

func (f accessAPIFailed) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	reason := storagev1alpha1.ReasonContractAPIRejected
	switch {
	case errors.Is(f.err, contractclient.ErrNotSupported):
		reason = storagev1alpha1.ReasonPrincipalsUnsupported
	case f.err.Retryable():
		reason = storagev1alpha1.ReasonContractAPIUnavailable
	}
	return engine.False(reason, "The contract API: "+f.err.Summary())
}

func (principalLost) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonPrincipalLost,
		"The provider no longer has this BucketAccess's principal (deleted outside the operator). Delete and re-create the BucketAccess to get new credentials.")
}

func (f accessS3Failed) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonS3Unavailable, "Checking the key: "+objectstore.Describe(f.err))
}

func (accessDeleting) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonDeleting, "Revoking the credentials.")
}

func (f waitingForUser) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonDeleting, fmt.Sprintf(
		"Deletion waits until %s, which these credentials were made for, is gone: it must not lose its key first.", f.owner))
}

func (f accessKeyReplacing) ready(*storagev1alpha1.BucketAccess, []keyCheck) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonProvisioning, fmt.Sprintf(
		"Secret %s lost key %s; a new key is on its way (see the KeyRotation condition).", f.secret, f.key))
}

func (f accessWithheld) ready(a *storagev1alpha1.BucketAccess, _ []keyCheck) *engine.Condition {
	return engine.False(f.reason, fmt.Sprintf("%s; it is not written to Secret %s until it does only what it is for.", f.why, a.SecretNameOrDefault()))
}

// ready of an issued key says whether it can do what its access allows in each of its buckets,
// and only under each prefix.
func (accessIssued) ready(a *storagev1alpha1.BucketAccess, checks []keyCheck) *engine.Condition {
	if len(checks) == 0 {
		return nil
	}
	for _, c := range checks {
		if gap := readyGap(c); gap != nil {
			return inBucket(a, c, gap)
		}
	}
	return engine.True(storagev1alpha1.ReasonAvailable, fmt.Sprintf("The credentials are in Secret %s.", a.SecretNameOrDefault()))
}

// readyGap is why what the key was found able to do in one bucket keeps it from Ready: it cannot
// do what its access allows, or can reach outside its prefix; nil when neither. A bucket taken
// out of spec.buckets that still lets the key in does not: AccessVerified says so.
func readyGap(c keyCheck) *engine.Condition {
	if c.revoked {
		return nil
	}
	if missing, _ := accessGaps(c.access, c.check); len(missing) > 0 {
		return engine.False(storagev1alpha1.ReasonPolicyPending, policyPending(missing, &c))
	}
	if outside := outsideGaps(c.check); len(outside) > 0 {
		return engine.False(storagev1alpha1.ReasonPrefixUnsupported, prefixUnsupported(c.prefix, outside, &c))
	}
	return nil
}

// verifiedCondition is AccessVerified for what the key in the Secret was found able to do: in
// its one bucket, or in each of spec.buckets (the first that is not as it should be decides).
func verifiedCondition(a *storagev1alpha1.BucketAccess, checks []keyCheck) *engine.Condition {
	if !a.MultiBucket() && len(checks) == 1 {
		return verifiedIn(checks[0])
	}
	var said []string
	for _, c := range checks {
		v := verifiedIn(c)
		if v.Status != metav1.ConditionTrue {
			return inBucket(a, c, v)
		}
		if !c.revoked {
			said = append(said, fmt.Sprintf("%s (%s) %s", c.bucket, c.access, describeCheck(&c)))
		}
	}
	return engine.True(storagev1alpha1.ReasonVerified, fmt.Sprintf(
		"Checked with the key itself in each bucket, as its access allows: %s.", strings.Join(said, "; ")))
}

// verifiedIn is AccessVerified for what the key was found able to do in one bucket: what its
// access allows and nothing more, or, in a bucket taken out of spec.buckets, nothing.
func verifiedIn(c keyCheck) *engine.Condition {
	missing, extra := accessGaps(c.access, c.check)
	switch still := stillReaches(c); {
	case len(still) > 0:
		return engine.False(storagev1alpha1.ReasonPolicyPending, fmt.Sprintf(
			"Taken out of spec.buckets, but the key can still %s there (%s): the Bucket's policy does not drop it yet.",
			strings.Join(still, " and "), checked(&c)))
	case c.revoked && len(extra) > 0:
		return engine.True(storagev1alpha1.ReasonVerified, fmt.Sprintf(
			"Taken out of spec.buckets: the key can %s there only as every key can, by the bucket's canned ACL (%s).",
			strings.Join(extra, " and "), checked(&c)))
	case c.revoked:
		return engine.True(storagev1alpha1.ReasonVerified, fmt.Sprintf("Taken out of spec.buckets: the key is refused there (%s).", checked(&c)))
	case len(missing) > 0:
		return engine.False(storagev1alpha1.ReasonPolicyPending, policyPending(missing, &c))
	case len(outsideGaps(c.check)) > 0:
		return engine.False(storagev1alpha1.ReasonPrefixUnsupported, prefixUnsupported(c.prefix, outsideGaps(c.check), &c))
	case len(extra) > 0:
		return engine.False(storagev1alpha1.ReasonAccessMismatch, fmt.Sprintf(
			"%s access, but the key can also %s (%s): the bucket's ACL or the user's policy allows it to more than this key.",
			c.access, strings.Join(extra, " and "), checked(&c)))
	}
	return engine.True(storagev1alpha1.ReasonVerified, fmt.Sprintf("Checked with the key itself: %s, as %s access allows.",
		describeCheck(&c), c.access))
}

// inBucket names the bucket a condition is about, for a BucketAccess over several.
func inBucket(a *storagev1alpha1.BucketAccess, c keyCheck, cond *engine.Condition) *engine.Condition {
	if !a.MultiBucket() {
		return cond
	}
	out := *cond
	out.Message = fmt.Sprintf("Bucket %s: %s", c.bucket, cond.Message)
	return &out
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
	for _, gone := range setBucketStatus(a, f) {
		k.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "BucketRevoked", "Revoke",
			"Key %s is refused in Bucket %s (%s), taken out of spec.buckets", gone.key, gone.bucket, describeCheck(&gone))
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

// maxBucketMessage bounds status.buckets[].message (the CRD's maxLength): a prefix may be 1024
// characters long, and a message names it.
const maxBucketMessage = 1024

// setBucketStatus sets status.buckets, of a BucketAccess over several Buckets, from what the
// pass found: each of spec.buckets with what the key was checked to do there, or why it cannot
// be reached; then each Bucket taken out of spec.buckets whose policy may still let the key in.
// It returns the checks of those found refusing the key now, which leave status.buckets. A
// Bucket the pass did not look at keeps what the last pass said.
func setBucketStatus(a *storagev1alpha1.BucketAccess, f accessFound) (revoked []keyCheck) {
	if (!a.MultiBucket() && len(a.Status.Buckets) == 0) || a.Keyless() {
		return nil // a role holds no key to check: Ready says what reaches it
	}
	was := map[string]storagev1alpha1.AccessBucketStatus{}
	for _, st := range a.Status.Buckets {
		was[st.Name] = st
	}
	checks := map[string]keyCheck{}
	for _, c := range f.checks {
		checks[c.bucket] = c
	}
	say := func(st *storagev1alpha1.AccessBucketStatus, c *engine.Condition) {
		st.Verified, st.Reason, st.Message = c.Status, c.Reason, c.Message
		if len(st.Message) > maxBucketMessage {
			st.Message = st.Message[:maxBucketMessage-3] + "..."
		}
	}
	out := make([]storagev1alpha1.AccessBucketStatus, 0, len(a.Status.Buckets))
	for _, item := range a.Spec.Buckets {
		name := string(item.Name)
		st := was[name]
		st.Name, st.Access, st.Prefix, st.Revoked = name, item.Access, string(item.Prefix), false
		switch c, checked := checks[name]; {
		case checked:
			st.BucketName = c.bucketName
			say(&st, verifiedIn(c))
		case f.buckets[name] != nil:
			say(&st, f.buckets[name].ready(a, nil))
		case st.Verified == "":
			say(&st, &engine.Condition{Status: metav1.ConditionUnknown, Reason: storagev1alpha1.ReasonProvisioning,
				Message: "The key has not been checked here yet."})
		}
		out = append(out, st)
	}
	for _, st := range a.Status.Buckets {
		if _, kept := a.AccessBucketNamed(st.Name); kept {
			continue
		}
		c, checked := checks[st.Name]
		if checked && c.revoked && len(stillReaches(c)) == 0 {
			revoked = append(revoked, c)
			continue
		}
		if st.BucketName == "" {
			continue // never reached: no policy of it names the key
		}
		st.Revoked = true
		if checked {
			say(&st, verifiedIn(c))
		}
		out = append(out, st)
	}
	a.Status.Buckets = out
	return revoked
}

// accessConditions derives Ready and AccessVerified from what a pass found; nil leaves one as
// it is.
func accessConditions(a *storagev1alpha1.BucketAccess, f accessFound) (ready, verified *engine.Condition) {
	if len(f.checks) > 0 {
		verified = verifiedCondition(a, f.checks)
	}
	if f.ready != nil {
		ready = f.ready.ready(a, f.checks)
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

// stillReaches lists what a key can still do in a bucket taken out of spec.buckets beyond what
// the bucket lets every key do; nothing for a bucket it keeps.
func stillReaches(c keyCheck) []string {
	if !c.revoked {
		return nil
	}
	var still []string
	for _, d := range []struct {
		what          string
		can, everyone bool
	}{{"list", c.check.List, c.everyone.List}, {"read", c.check.Read, c.everyone.Read}, {"write", c.check.Write, c.everyone.Write}} {
		if d.can && !d.everyone {
			still = append(still, d.what)
		}
	}
	return still
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
