package credentials

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
)

// Keys is one resource's key pair through one pass.
type Keys struct {
	// Issuer issues, tries and revokes the resource's keys.
	Issuer Issuer
	// UID is the resource's; rotations ask for keys with "<UID>-key-<n>".
	UID types.UID
	// Status is the resource's key state. Record writes a change of it at once, before the step
	// that depends on it; other changes go out with the pass's status write.
	Status *storagev1alpha1.KeyStatus
	Record func(ctx context.Context, mutate func(*storagev1alpha1.KeyStatus)) error
	// SecretName names the Secret the key goes to; InSecret is the key pair it holds now (zero
	// when it holds none or does not exist); WriteSecret puts a key pair into it.
	SecretName  string
	InSecret    contractclient.Credentials
	WriteSecret func(ctx context.Context, key contractclient.Credentials) error
	// Reread, when set, reads the key pair in the Secret again from the API server (zero when
	// it holds none): InSecret comes from a cache, which may not show yet what this operator
	// last wrote to the Secret.
	Reread func(ctx context.Context) (contractclient.Credentials, error)
	// Rotation is the spec's rotation (nil: none), RotationField its path for messages, and
	// Annotation the value of the rotate-key annotation.
	Rotation      *storagev1alpha1.KeyRotation
	RotationField string
	Annotation    string
	// VerifyFirst: the first key too is tried with itself (Issuer.Verify) before it goes into
	// the Secret, where a key that does more than it is for must never be handed out (a key
	// limited to a prefix, on a server that may not enforce it).
	VerifyFirst bool
	// SingleKey, when set, is the provider's word that the account holds one key pair: then
	// nothing is asked of it, and a lost Secret gets the same key back.
	SingleKey string
	// Refusals remembers, for ResyncPeriod, a provider's refusal of a second key, so one that
	// does not say so beforehand is asked once a resync period, not on every pass.
	Refusals     *ttlcache.Cache[types.UID, string]
	ResyncPeriod time.Duration
	Now          time.Time
	Emit         func(eventType, reason, message string)
}

// Result is what a pass over the keys found, and when they want another look.
type Result struct {
	Found Finding
	// After is when something is due: a revocation, a rotation, a new key to try again.
	After time.Duration
	// Err stopped the keys short; refusals are wrapped as terminal (engine.APIFailure).
	Err error
}

// Reconcile issues the first key, replaces a key the Secret lost, rotates when due, finishes a
// rotation under way and revokes replaced keys whose overlap has passed.
func (k *Keys) Reconcile(ctx context.Context) Result {
	if k.Status.AccessKeyID == "" {
		return k.issue(ctx)
	}
	if err := k.confirmSecret(ctx); err != nil {
		return Result{Err: err}
	}
	if k.putBack() {
		if err := k.adopt(ctx); err != nil {
			return Result{Err: err}
		}
	}
	lost := k.lost()
	due, trigger, next := Due(k.Rotation, k.Status, k.Annotation, k.Now)
	if !due && !lost && !Asked(k.Rotation, k.Status) {
		return Result{Found: Finding{State: NotAsked}}
	}
	if k.SingleKey != "" {
		// Nothing can be pending or retiring on such an account: no key was ever added.
		return k.cannotRotate(ctx, lost, k.SingleKey)
	}
	if k.Status.PendingKey == nil && (due || lost) {
		if why, _, refused := k.Refusals.Get(k.UID, k.ResyncPeriod); refused {
			return k.cannotRotate(ctx, lost, why)
		}
		cause := k.cause(trigger, lost)
		if lost {
			trigger = "" // a replacement for the lost key answers no annotation
		}
		if err := k.start(ctx, trigger, cause); err != nil {
			return Result{Err: err}
		}
	}
	if k.Status.PendingKey != nil {
		if res := k.finish(ctx); res.Found.State != Current {
			return res
		}
		_, _, next = Due(k.Rotation, k.Status, k.Annotation, k.Now)
	}
	res := k.revokeRetired(ctx)
	if res.Err != nil || res.Found.State == APIFailed {
		return res
	}
	if !next.IsZero() {
		res.After = engine.Sooner(res.After, max(next.Sub(k.Now), time.Second))
	}
	return res
}

// confirmSecret reads the Secret again from the API server when the cache shows it without the
// key status names, before that difference is acted on: a key taken for lost would be replaced,
// and a replaced key taken for put back by hand would oust its replacement. A cache a step behind
// this operator's own writes shows exactly that (a Secret just made not there yet, a rotated one
// still with the old key), as the sieve found with watch events coalesced.
func (k *Keys) confirmSecret(ctx context.Context) error {
	if k.Reread == nil || (k.InSecret.AccessKeyID == k.Status.AccessKeyID && k.InSecret.SecretAccessKey != "") {
		return nil
	}
	live, err := k.Reread(ctx)
	if err != nil {
		return fmt.Errorf("reading Secret %s again: %w", k.SecretName, err)
	}
	k.InSecret = live
	return nil
}

// lost reports whether the Secret no longer holds the key status names: emptied or deleted by
// hand, or overwritten. The key a rotation brought in before its pass could record it is not
// lost: finishing the rotation records it.
func (k *Keys) lost() bool {
	in := k.InSecret.AccessKeyID
	switch {
	case in == k.Status.AccessKeyID && k.InSecret.SecretAccessKey != "":
		return false
	case in != "" && k.Status.PendingKey != nil && k.Status.PendingKey.AccessKeyID == in:
		return false
	}
	return in == "" || k.Status.PendingKey == nil
}

// putBack reports whether the Secret holds a key that was replaced and still works (put back
// by hand, from a backup): the key in the Secret is never revoked.
func (k *Keys) putBack() bool {
	in := k.InSecret
	return in.AccessKeyID != k.Status.AccessKeyID && in.SecretAccessKey != "" &&
		slices.ContainsFunc(k.Status.RetiringKeys, isKey(in.AccessKeyID))
}

// adopt makes the key put back into the Secret the current one again; the key it displaced
// retires, with the overlap, as a replaced key does.
func (k *Keys) adopt(ctx context.Context) error {
	back, displaced := k.InSecret.AccessKeyID, k.Status.AccessKeyID
	revokeAfter := metav1.NewTime(k.Now.Add(storagev1alpha1.KeyOverlap(k.Rotation)))
	err := k.Record(ctx, func(s *storagev1alpha1.KeyStatus) {
		s.RetiringKeys = slices.DeleteFunc(slices.Clone(s.RetiringKeys), isKey(back))
		if !slices.ContainsFunc(s.RetiringKeys, isKey(displaced)) {
			s.RetiringKeys = append(s.RetiringKeys, storagev1alpha1.RetiringKey{AccessKeyID: displaced, RevokeAfter: revokeAfter})
		}
		s.AccessKeyID = back
	})
	if err != nil {
		return fmt.Errorf("recording the key put back into Secret %s: %w", k.SecretName, err)
	}
	k.Emit(corev1.EventTypeWarning, "KeyPutBack", fmt.Sprintf(
		"Secret %s holds replaced key %s again, put back outside the operator; it stays, and key %s, which it displaced, works until %s, then it is revoked",
		k.SecretName, back, displaced, revokeAfter.UTC().Format(time.RFC3339)))
	return nil
}

func (k *Keys) cause(trigger string, lost bool) string {
	switch {
	case lost:
		return fmt.Sprintf("Secret %s lost key %s", k.SecretName, k.Status.AccessKeyID)
	case trigger != "":
		return fmt.Sprintf("annotation %s is %q", storagev1alpha1.RotateKeyAnnotation, trigger)
	}
	return fmt.Sprintf("%s.period (%s) has passed", k.RotationField, k.Rotation.Period.Duration)
}

// issue writes the first key pair to the Secret. Should the pass stop before status names it,
// the next asks for it again and gets the same.
func (k *Keys) issue(ctx context.Context) Result {
	key, err := k.Issuer.First(ctx)
	if err != nil {
		return k.apiFailed(err, "")
	}
	if k.VerifyFirst {
		if res, withheld := k.tryFirst(ctx, key); withheld {
			return res
		}
	}
	if err := k.writeSecret(ctx, key); err != nil {
		return Result{Err: err}
	}
	now := metav1.NewTime(k.Now)
	k.Status.AccessKeyID, k.Status.KeyIssuedAt = key.AccessKeyID, &now
	// An annotation already there asks for nothing: only a new value does.
	k.Status.RotatedFor = k.Annotation
	return Result{Found: Finding{State: NotAsked}}
}

// tryFirst tries the first key with itself; withheld says it does not do only what it is for,
// or could not be tried, and stays out of the Secret. Nothing is recorded: the next pass asks
// for the same key again.
func (k *Keys) tryFirst(ctx context.Context, key contractclient.Credentials) (Result, bool) {
	verdict, err := k.Issuer.Verify(ctx, key)
	switch {
	case err != nil:
		return Result{Found: Finding{State: Withheld, NewKey: key.AccessKeyID, Err: err}, Err: fmt.Errorf("trying key %s: %w", key.AccessKeyID, err)}, true
	case !verdict.Works:
		return Result{Found: Finding{State: Withheld, NewKey: key.AccessKeyID, Reason: verdict.Reason, Why: verdict.Why}, After: verdict.Retry}, true
	}
	return Result{}, false
}

// cannotRotate reports a provider that holds one key pair. A Secret that lost the key gets the
// same key back, the one thing left to do.
func (k *Keys) cannotRotate(ctx context.Context, lost bool, why string) Result {
	if lost {
		if res := k.restore(ctx); res.Err != nil {
			return res
		}
	}
	return Result{Found: Finding{State: Unsupported, Why: why}}
}

// restore writes the key status names back into the Secret, where the provider hands it out
// again (the first key, asked for with the creation's idempotency key).
func (k *Keys) restore(ctx context.Context) Result {
	key, err := k.Issuer.First(ctx)
	if err != nil {
		return k.apiFailed(err, "")
	}
	if key.AccessKeyID != k.Status.AccessKeyID {
		return Result{Err: fmt.Errorf("secret %s lost key %s, which the provider cannot hand out again, and it cannot issue another",
			k.SecretName, k.Status.AccessKeyID)}
	}
	return Result{Err: k.writeSecret(ctx, key)}
}

// writeSecret puts key into the Secret, which then holds it.
func (k *Keys) writeSecret(ctx context.Context, key contractclient.Credentials) error {
	if err := k.WriteSecret(ctx, key); err != nil {
		return err
	}
	k.InSecret = key
	return nil
}

// start records the intent to rotate before the provider is asked, with the idempotency key
// every attempt of this rotation asks with.
func (k *Keys) start(ctx context.Context, trigger, cause string) error {
	pending := &storagev1alpha1.PendingKey{
		IdempotencyKey: fmt.Sprintf("%s-key-%d", k.UID, k.Status.KeysIssued+1),
		Trigger:        trigger,
	}
	if err := k.Record(ctx, func(s *storagev1alpha1.KeyStatus) { s.PendingKey = pending.DeepCopy() }); err != nil {
		return fmt.Errorf("recording the key rotation: %w", err)
	}
	k.Emit(corev1.EventTypeNormal, "KeyRotationStarted", fmt.Sprintf("Asking the provider for a new key for Secret %s: %s", k.SecretName, cause))
	return nil
}

// finish gets the pending key from the provider (again, if an earlier answer was lost), tries
// it, puts it in the Secret, and then records it, retiring the key status named before: that one
// is replaced whatever the Secret held, so a pass that stopped after writing the Secret, or a
// Secret emptied by hand, never leaves a replaced key working without an end.
func (k *Keys) finish(ctx context.Context) Result {
	pending := k.Status.PendingKey
	logf.FromContext(ctx).V(1).Info("Asking for the new key (or replaying the request)", "idempotencyKey", pending.IdempotencyKey)
	key, err := k.Issuer.Add(ctx, pending.IdempotencyKey)
	switch {
	case errors.Is(err, contractclient.ErrNotSupported):
		return k.refusedSecondKey(ctx, err)
	case errors.Is(err, contractclient.ErrKeyRevoked):
		// Someone revoked the key made for this rotation before it reached the Secret: the
		// next attempt asks with a new idempotency key.
		err := k.Record(ctx, func(s *storagev1alpha1.KeyStatus) { s.PendingKey, s.KeysIssued = nil, s.KeysIssued+1 })
		return Result{Found: Finding{State: Rotating}, After: time.Second, Err: err}
	case err != nil:
		return k.apiFailed(err, "")
	}
	pending.AccessKeyID = key.AccessKeyID
	found := Finding{State: Rotating, NewKey: key.AccessKeyID}

	// One try that changes nothing, with the new key itself: only a key that works goes where
	// workloads take their keys from.
	verdict, err := k.Issuer.Verify(ctx, key)
	switch {
	case err != nil:
		found.State, found.Err = S3Failed, err
		return Result{Found: found, Err: fmt.Errorf("trying new key %s: %w", key.AccessKeyID, err)}
	case !verdict.Works:
		found.State, found.Reason, found.Why = NotWorking, verdict.Reason, verdict.Why
		return Result{Found: found, After: verdict.Retry}
	}
	if err := k.writeSecret(ctx, key); err != nil {
		return Result{Err: err}
	}
	return k.rotated(ctx, key.AccessKeyID, pending.Trigger)
}

// rotated records key as the one in the Secret, and the key it replaced as retiring.
func (k *Keys) rotated(ctx context.Context, key, trigger string) Result {
	replaced := k.Status.AccessKeyID
	now := metav1.NewTime(k.Now)
	revokeAfter := metav1.NewTime(k.Now.Add(storagev1alpha1.KeyOverlap(k.Rotation)))
	err := k.Record(ctx, func(s *storagev1alpha1.KeyStatus) {
		if replaced != "" && replaced != key && !slices.ContainsFunc(s.RetiringKeys, isKey(replaced)) {
			s.RetiringKeys = append(slices.Clone(s.RetiringKeys), storagev1alpha1.RetiringKey{AccessKeyID: replaced, RevokeAfter: revokeAfter})
		}
		s.AccessKeyID, s.KeyIssuedAt, s.KeysIssued = key, &now, s.KeysIssued+1
		if trigger != "" {
			s.RotatedFor = trigger
		}
		s.PendingKey = nil
	})
	if err != nil {
		return Result{Err: fmt.Errorf("recording the new key: %w", err)}
	}
	msg := fmt.Sprintf("Wrote new key %s to Secret %s", key, k.SecretName)
	if replaced != "" && replaced != key {
		msg += fmt.Sprintf("; the key it replaced, %s, works until %s, then it is revoked", replaced, revokeAfter.UTC().Format(time.RFC3339))
	}
	k.Emit(corev1.EventTypeNormal, "KeyRotated", msg)
	return Result{Found: Finding{State: Current}}
}

// refusedSecondKey handles a provider that answers a new key with not-supported: nothing was
// made, the rotation is over before it began, and the provider is asked again only after a
// resync period. A Secret that lost its key gets it back instead.
func (k *Keys) refusedSecondKey(ctx context.Context, err error) Result {
	why := err.Error()
	if e, ok := contractclient.AsError(err); ok && e.Detail() != "" {
		why = e.Detail()
	}
	k.Refusals.Put(k.UID, why)
	if err := k.Record(ctx, func(s *storagev1alpha1.KeyStatus) { s.PendingKey = nil }); err != nil {
		return Result{Err: err}
	}
	return k.cannotRotate(ctx, k.lost(), why)
}

// revokeRetired revokes the replaced keys whose overlap has passed, and says when to look again
// for the others. A key the Secret holds, or status names, is in use after all (put back by
// hand): it leaves the list and is never revoked.
func (k *Keys) revokeRetired(ctx context.Context) Result {
	res := Result{Found: Finding{State: Current}}
	for _, r := range slices.Clone(k.Status.RetiringKeys) {
		id := r.AccessKeyID
		if id == k.InSecret.AccessKeyID || id == k.Status.AccessKeyID {
			if err := k.dropRetiring(ctx, id); err != nil {
				return Result{Err: err}
			}
			continue
		}
		if wait := r.RevokeAfter.Sub(k.Now); wait > 0 {
			res.After = engine.Sooner(res.After, wait)
			continue
		}
		logf.FromContext(ctx).V(1).Info("Revoking a replaced key", "accessKeyID", id)
		if err := k.Issuer.Revoke(ctx, id); err != nil && !errors.Is(err, contractclient.ErrLastKey) {
			return k.apiFailed(err, id)
		}
		if err := k.dropRetiring(ctx, id); err != nil {
			return Result{Err: err}
		}
		k.Emit(corev1.EventTypeNormal, "KeyRevoked", fmt.Sprintf("Revoked key %s, replaced in Secret %s by key %s", id, k.SecretName, k.Status.AccessKeyID))
	}
	return res
}

func (k *Keys) dropRetiring(ctx context.Context, id string) error {
	return k.Record(ctx, func(s *storagev1alpha1.KeyStatus) {
		s.RetiringKeys = slices.DeleteFunc(slices.Clone(s.RetiringKeys), isKey(id))
	})
}

// apiFailed is a contract API call of the keys that failed; revoking names the key whose
// revocation it was. It leaves the resource's Ready alone: the key in the Secret works meanwhile.
func (k *Keys) apiFailed(err error, revoking string) Result {
	apiErr, after, err := engine.APIFailure(err)
	if apiErr == nil {
		return Result{Err: err}
	}
	return Result{Found: Finding{State: APIFailed, APIErr: apiErr, Revoking: revoking}, After: after, Err: err}
}

func isKey(id string) func(storagev1alpha1.RetiringKey) bool {
	return func(k storagev1alpha1.RetiringKey) bool { return k.AccessKeyID == id }
}

// Due says whether a new key is asked for at now, and for which value of the rotate-key
// annotation ("" when the rotation period is what is due). next is when the period comes due,
// zero without a rotation.
func Due(rotation *storagev1alpha1.KeyRotation, st *storagev1alpha1.KeyStatus, annotation string, now time.Time) (due bool, trigger string, next time.Time) {
	if rotation != nil && st.KeyIssuedAt != nil {
		next = st.KeyIssuedAt.Add(rotation.Period.Duration)
	}
	if annotation != "" && annotation != st.RotatedFor {
		return true, annotation, next
	}
	return !next.IsZero() && !now.Before(next), "", next
}

// Asked says whether a resource has anything to do with rotation beyond what is due now: a
// period, or a rotation under way or done, or keys to revoke. Without, it has no KeyRotation
// condition.
func Asked(rotation *storagev1alpha1.KeyRotation, st *storagev1alpha1.KeyStatus) bool {
	return rotation != nil || st.KeysIssued > 0 || st.PendingKey != nil || len(st.RetiringKeys) > 0
}
