package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/status"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Rotation of a Contract's account key, where the provider's accounts hold more than one.
//
// Each step is recorded in status before the step after it depends on it, so a crash anywhere
// is finished by the next pass and never issues a second key or revokes a working one:
//
//  1. status.pendingKey gets an idempotency key (status.keysIssued+1) before the provider is asked;
//  2. the provider is asked for a key with it: a lost answer is asked for again and answered
//     with the same key;
//  3. the new key is tried with one S3 call that changes nothing (ListBuckets); only a key that
//     works goes into the Secret;
//  4. status records the new key as current, and the replaced one in status.retiringKeys with
//     the time it is revoked (now + overlap); a crash before this finds the new key in the
//     Secret already and records the same;
//  5. once that time has passed, the replaced key is revoked. Never the key the Secret holds,
//     never the account's last key (the provider refuses that too).

// keyFinding is what a pass found about the account's keys, for the KeyRotation condition.
type keyFinding int

const (
	// keysUntouched: the pass did not get to the keys; KeyRotation stays as it was.
	keysUntouched keyFinding = iota
	// keysNotAsked: no rotation is asked for or under way; there is no KeyRotation condition.
	keysNotAsked
	// keysCurrent: the key in the Secret is the one status names, and nothing is due now.
	keysCurrent
	// keysRotating: a new key is asked for and not in the Secret yet.
	keysRotating
	// keysUnsupported: the provider's accounts hold one key pair (keysWhy says why).
	keysUnsupported
	// keysRefused: the S3 endpoint refused the new key (keysErr).
	keysRefused
	// keysS3Failed: the S3 endpoint could not be asked to try the new key (keysErr).
	keysS3Failed
	// keysAPIFailed: a contract API call of the rotation failed (keysAPIErr).
	keysAPIFailed
)

// newKeyRetry is how soon a new key the S3 endpoint refused is tried again: a server may take a
// moment before a key it just made works everywhere.
const newKeyRetry = 5 * time.Second

// unsupportedKeys is a provider's refusal of a second key (501), remembered so that a provider
// that does not say so in the contract is asked once a resync period, not on every pass.
type unsupportedKeys struct {
	why string
	at  time.Time
}

// rotationDue says whether the Contract asks for a new key at now, and for which value of the
// rotate-key annotation ("" when spec.keyRotation's period is what is due). next is when the
// period comes due, zero without spec.keyRotation.
func rotationDue(c *storagev1alpha1.Contract, now time.Time) (due bool, trigger string, next time.Time) {
	if r := c.Spec.KeyRotation; r != nil && c.Status.KeyIssuedAt != nil {
		next = c.Status.KeyIssuedAt.Add(r.Period.Duration)
	}
	if v := c.Annotations[storagev1alpha1.RotateKeyAnnotation]; v != "" && v != c.Status.RotatedFor {
		return true, v, next
	}
	return !next.IsZero() && !now.Before(next), "", next
}

// rotationAsked says whether the Contract has anything to do with rotation: a period, a
// rotation due, under way or done, or keys to revoke. Without, it has no KeyRotation condition.
func rotationAsked(c *storagev1alpha1.Contract, due bool) bool {
	s := c.Status
	return due || c.Spec.KeyRotation != nil || s.KeysIssued > 0 || s.PendingKey != nil || len(s.RetiringKeys) > 0
}

// reconcileKeys rotates the account's key when it is due, and revokes replaced keys whose
// overlap has passed. secret is the Contract's Secret, holding a key pair.
func (r *ContractReconciler) reconcileKeys(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, secret *corev1.Secret) (ctrl.Result, error) {
	now := time.Now()
	if c.Status.AccessKeyID == "" {
		// A Contract from before rotation: learn which key its Secret holds, and since when.
		issued := secret.CreationTimestamp
		c.Status.AccessKeyID, c.Status.KeyIssuedAt = string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), &issued
		c.Status.RotatedFor = c.Annotations[storagev1alpha1.RotateKeyAnnotation]
	}
	due, trigger, next := rotationDue(c, now)
	if !rotationAsked(c, due) {
		p.keys = keysNotAsked
		return ctrl.Result{}, nil
	}
	if single, why := p.observed.SingleKey(); single {
		// Nothing can be pending or retiring on such an account: no key was ever added.
		p.keys, p.keysWhy = keysUnsupported, why
		return ctrl.Result{}, nil
	}
	if c.Status.PendingKey == nil && due {
		if last, ok := r.unsupported.Load(c.UID); ok && time.Since(last.(unsupportedKeys).at) < r.ResyncPeriod {
			p.keys, p.keysWhy = keysUnsupported, last.(unsupportedKeys).why
			return ctrl.Result{}, nil
		}
		cause := fmt.Sprintf("annotation %s is %q", storagev1alpha1.RotateKeyAnnotation, trigger)
		if trigger == "" {
			cause = fmt.Sprintf("spec.keyRotation.period (%s) has passed", c.Spec.KeyRotation.Period.Duration)
		}
		if err := r.startRotation(ctx, c, trigger, cause); err != nil {
			return ctrl.Result{}, err
		}
	}
	if c.Status.PendingKey != nil {
		if res, err := r.finishRotation(ctx, c, p, secret); err != nil || p.keys != keysCurrent {
			return res, err
		}
		_, _, next = rotationDue(c, now)
	}
	res, err := r.revokeRetired(ctx, c, p, secret, now)
	if err != nil || p.keys == keysAPIFailed {
		return res, err
	}
	p.keys = keysCurrent
	if !next.IsZero() {
		res = sooner(res, ctrl.Result{RequeueAfter: max(next.Sub(now), time.Second)})
	}
	return res, nil
}

// startRotation records the intent to rotate before the provider is asked, with the idempotency
// key every attempt of this rotation asks with.
func (r *ContractReconciler) startRotation(ctx context.Context, c *storagev1alpha1.Contract, trigger, cause string) error {
	pending := &storagev1alpha1.PendingKey{
		IdempotencyKey: fmt.Sprintf("%s-key-%d", c.UID, c.Status.KeysIssued+1),
		Trigger:        trigger,
	}
	if err := status.Record(ctx, r.Client, c, func(o client.Object) {
		o.(*storagev1alpha1.Contract).Status.PendingKey = pending
	}); err != nil {
		return fmt.Errorf("recording the key rotation: %w", err)
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "KeyRotationStarted", "RotateKey",
		"Asking the provider for a new key for Secret %s: %s", c.SecretNameOrDefault(), cause)
	return nil
}

// finishRotation gets the pending key from the provider (again, if an earlier answer was lost),
// tries it, and puts it in the Secret. p.keys is keysCurrent when the key is in.
func (r *ContractReconciler) finishRotation(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, secret *corev1.Secret) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	pending := c.Status.PendingKey
	log.V(1).Info("Asking for the new key (or replaying the request)", "idempotencyKey", pending.IdempotencyKey)
	creds, err := r.API.AddKey(ctx, c.Status.ContractID, pending.IdempotencyKey)
	switch {
	case errors.Is(err, contractclient.ErrNotSupported):
		// Nothing was made: the rotation is over before it began.
		why := err.Error()
		if e, ok := contractclient.AsError(err); ok && e.Detail() != "" {
			why = e.Detail()
		}
		r.unsupported.Store(c.UID, unsupportedKeys{why: why, at: time.Now()})
		p.keys, p.keysWhy = keysUnsupported, why
		return ctrl.Result{}, r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) { s.PendingKey = nil })
	case errors.Is(err, contractclient.ErrKeyRevoked):
		// Someone revoked the key made for this rotation before it reached the Secret: the
		// next one asks with a new idempotency key.
		p.keys = keysRotating
		err := r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) { s.PendingKey, s.KeysIssued = nil, s.KeysIssued+1 })
		return ctrl.Result{RequeueAfter: time.Second}, err
	case err != nil:
		return r.keysAPIFailed(p, err)
	}
	pending.AccessKeyID = creds.AccessKeyID
	p.keysNew = creds.AccessKeyID

	// One call that changes nothing, with the new key itself: only a key that works goes where
	// Buckets and Applications take their keys from.
	if _, err := r.Stores(c.Status.Endpoint, c.Status.Region, creds.AccessKeyID, creds.SecretAccessKey).BucketNames(ctx); err != nil {
		p.keysErr = err
		if objectstore.IsTransient(err) {
			p.keys = keysS3Failed
			return ctrl.Result{}, fmt.Errorf("trying new key %s: %w", creds.AccessKeyID, err)
		}
		p.keys = keysRefused
		return ctrl.Result{RequeueAfter: newKeyRetry}, nil
	}

	if err := r.writeSecret(ctx, c, secret, c.Status.Endpoint, c.Status.Region, &creds); err != nil {
		return r.secretFailed(ctx, c, p, err)
	}
	replaced := c.Status.AccessKeyID
	now := metav1.Now()
	revokeAfter := metav1.NewTime(now.Add(c.KeyOverlap()))
	err = r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) {
		if replaced != "" && replaced != creds.AccessKeyID && !slices.ContainsFunc(s.RetiringKeys, isKey(replaced)) {
			s.RetiringKeys = append(slices.Clone(s.RetiringKeys), storagev1alpha1.RetiringKey{AccessKeyID: replaced, RevokeAfter: revokeAfter})
		}
		s.AccessKeyID, s.KeyIssuedAt, s.KeysIssued = creds.AccessKeyID, &now, s.KeysIssued+1
		if pending.Trigger != "" {
			s.RotatedFor = pending.Trigger
		}
		s.PendingKey = nil
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	p.keys = keysCurrent
	if replaced == "" || replaced == creds.AccessKeyID {
		r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "KeyRotated", "RotateKey",
			"Wrote new key %s to Secret %s", creds.AccessKeyID, secret.Name)
	} else {
		r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "KeyRotated", "RotateKey",
			"Wrote new key %s to Secret %s; the key it replaced, %s, works until %s, then it is revoked",
			creds.AccessKeyID, secret.Name, replaced, revokeAfter.UTC().Format(time.RFC3339))
	}
	return ctrl.Result{}, nil
}

// revokeRetired revokes the replaced keys whose overlap has passed, and says when to look again
// for the others. It never revokes the key the Secret holds.
func (r *ContractReconciler) revokeRetired(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, secret *corev1.Secret, now time.Time) (ctrl.Result, error) {
	inSecret := ""
	if secret != nil {
		inSecret = string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
	}
	var res ctrl.Result
	for _, k := range slices.Clone(c.Status.RetiringKeys) {
		if k.AccessKeyID == inSecret || k.AccessKeyID == c.Status.AccessKeyID {
			// In use after all (a Secret restored by hand): it is not retiring.
			if err := r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) {
				s.RetiringKeys = slices.DeleteFunc(slices.Clone(s.RetiringKeys), isKey(k.AccessKeyID))
			}); err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		if wait := k.RevokeAfter.Sub(now); wait > 0 {
			res = sooner(res, ctrl.Result{RequeueAfter: wait})
			continue
		}
		logf.FromContext(ctx).V(1).Info("Revoking a replaced key", "accessKeyID", k.AccessKeyID)
		p.keysRevoking = k.AccessKeyID
		if err := r.API.RemoveKey(ctx, c.Status.ContractID, k.AccessKeyID); err != nil {
			return r.keysAPIFailed(p, err)
		}
		if err := r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) {
			s.RetiringKeys = slices.DeleteFunc(slices.Clone(s.RetiringKeys), isKey(k.AccessKeyID))
		}); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "KeyRevoked", "RotateKey",
			"Revoked key %s, replaced in Secret %s by key %s", k.AccessKeyID, c.SecretNameOrDefault(), c.Status.AccessKeyID)
	}
	return res, nil
}

// settleKeys, before a Contract whose contract stays (reclaimPolicy Retain) goes, finishes a
// rotation under way (so the Secret that stays holds the newest key) and revokes the keys it
// replaced once their overlap has passed, so no replaced key outlives the resource. What the
// provider refuses for good does not hold the deletion up: a warning says what was left. A zero
// result and nil error mean nothing is left to wait for.
func (r *ContractReconciler) settleKeys(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass) (ctrl.Result, error) {
	if c.Status.PendingKey == nil && len(c.Status.RetiringKeys) == 0 {
		return ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}, secret); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}}
	} else if !metav1.IsControlledBy(secret, c) {
		return r.secretConflict(p, secret.Name)
	}
	if c.Status.PendingKey != nil {
		res, err := r.finishRotation(ctx, c, p, secret)
		switch {
		case p.keys == keysCurrent, p.keys == keysUnsupported, p.keys == keysRotating:
			// In the Secret, or nothing was made.
		case p.keys == keysRefused, p.keys == keysAPIFailed && !p.keysAPIErr.Retryable():
			if err := r.abandonRotation(ctx, c, secret); err != nil {
				return ctrl.Result{}, err
			}
		default:
			return res, err
		}
	}
	res, err := r.revokeRetired(ctx, c, p, secret, time.Now())
	if p.keys == keysAPIFailed && !p.keysAPIErr.Retryable() {
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "KeyNotRevoked", "Delete",
			"Key %s stays at the provider: %s", p.keysRevoking, p.keysAPIErr.Summary())
		if err := r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) {
			s.RetiringKeys = slices.DeleteFunc(slices.Clone(s.RetiringKeys), isKey(p.keysRevoking))
		}); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil || p.keys == keysAPIFailed {
		return res, err
	}
	p.keys = keysCurrent
	if len(c.Status.RetiringKeys) > 0 {
		p.found = contractKeysRetiring
	}
	return res, nil
}

// abandonRotation gives up a rotation that cannot finish, at deletion: the key made for it, if
// the provider answered, was never handed out, and is revoked.
func (r *ContractReconciler) abandonRotation(ctx context.Context, c *storagev1alpha1.Contract, secret *corev1.Secret) error {
	made := c.Status.PendingKey.AccessKeyID
	if made != "" && made != string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]) {
		if err := r.API.RemoveKey(ctx, c.Status.ContractID, made); err != nil {
			if e, ok := contractclient.AsError(err); !ok || e.Retryable() {
				return fmt.Errorf("revoking the unused key %s: %w", made, err)
			}
		}
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "KeyRotationAbandoned", "Delete",
		"The rotation under way cannot finish; Secret %s keeps key %s", secret.Name, c.Status.AccessKeyID)
	return r.recordKeys(ctx, c, func(s *storagev1alpha1.ContractStatus) { s.PendingKey = nil })
}

// reissueKey gives a Secret lost by hand a new key when the first key, the one a replayed
// purchase answers, was replaced by rotation: the Secret must not go back to a key that is
// revoked or about to be. The key the Secret held is retired like a rotated one: whoever read
// it before the Secret went still has the overlap to move.
func (r *ContractReconciler) reissueKey(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, secret *corev1.Secret) (ctrl.Result, error) {
	if c.Status.PendingKey == nil {
		if err := r.startRotation(ctx, c, "", fmt.Sprintf("Secret %s lost key %s", secret.Name, c.Status.AccessKeyID)); err != nil {
			return ctrl.Result{}, err
		}
	}
	res, err := r.finishRotation(ctx, c, p, secret)
	if err != nil || p.keys != keysCurrent {
		return res, err
	}
	return ctrl.Result{RequeueAfter: r.ResyncPeriod}, nil
}

// recordKeys writes a change of the key records at once: the next step depends on it.
func (r *ContractReconciler) recordKeys(ctx context.Context, c *storagev1alpha1.Contract, mutate func(*storagev1alpha1.ContractStatus)) error {
	if err := status.Record(ctx, r.Client, c, func(o client.Object) { mutate(&o.(*storagev1alpha1.Contract).Status) }); err != nil {
		return fmt.Errorf("recording the keys: %w", err)
	}
	return nil
}

// keysAPIFailed records a failed contract API call of a rotation. It leaves Ready alone: the key
// in the Secret works meanwhile.
func (r *ContractReconciler) keysAPIFailed(p *contractPass, err error) (ctrl.Result, error) {
	e, ok := contractclient.AsError(err)
	if !ok {
		return ctrl.Result{}, err
	}
	p.keys, p.keysAPIErr = keysAPIFailed, e
	if !e.Retryable() {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if e.RetryAfter() > 0 {
		return ctrl.Result{RequeueAfter: e.RetryAfter()}, nil
	}
	return ctrl.Result{}, err
}

func isKey(id string) func(storagev1alpha1.RetiringKey) bool {
	return func(k storagev1alpha1.RetiringKey) bool { return k.AccessKeyID == id }
}

// sooner is the result that comes back first: a requeue after the shorter wait.
func sooner(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0 || a.RequeueAfter <= b.RequeueAfter:
		return a
	}
	return b
}
