package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/status"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// policyWait is how soon a key whose access the bucket policy does not carry yet is checked
// again: the Bucket's controller is adding the statement, and nothing the BucketAccess watches
// says when a server starts honouring it.
const policyWait = 2 * time.Second

// BucketAccessReconciler issues, for each BucketAccess, a principal of the Bucket's account with
// a key of its own, writes the key to a Secret, rotates it, and checks with the key itself that
// it can do what its access allows. The rights come from statements the Bucket's controller adds
// to the bucket policy for it (AccessGrants).
type BucketAccessReconciler struct {
	client.Client
	// Principals is the provider's contract API for principals.
	Principals contractclient.Principals
	// Stores opens the S3 endpoint with a key, to check what the key can do.
	Stores StoreFactory
	// Recorder emits events on the BucketAccess.
	Recorder events.EventRecorder
	// ResyncPeriod is how often a key is checked again.
	ResyncPeriod time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int
	// APIReader reads from the API server directly: whether the resource a BucketAccess serves
	// still exists is not in the cache. The cached client when nil.
	APIReader client.Reader
	// Now is the clock rotation follows; time.Now when nil.
	Now func() time.Time

	// checked holds, by BucketAccess UID, the last check of its key, so a pass woken by its
	// Bucket within ResyncPeriod does not send the same three requests again.
	checked sync.Map // types.UID -> keyCheck
}

type keyCheck struct {
	key   string
	check objectstore.AccessCheck
	at    time.Time
}

// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=paas.osm.dev,resources=applications,verbs=get
// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses/status,verbs=patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses/finalizers,verbs=update
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// Reconcile makes the principal, its key and the Secret match the BucketAccess.
func (r *BucketAccessReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	a := &storagev1alpha1.BucketAccess{}
	if err := r.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	read := a.ResourceVersion
	// The finalizer goes on before the provider is called, so no principal is made that a
	// deletion could forget.
	if a.DeletionTimestamp.IsZero() {
		if err := status.SetFinalizer(ctx, r.Client, a, Finalizer, true); err != nil {
			return status.IgnoreConflict(ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err))
		}
	}
	before := a.DeepCopy()
	p := &accessPass{}
	defer func() {
		r.setConditions(a, p)
		if err := status.Patch(ctx, r.Client, a, &before.Status, &a.Status); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
			return
		}
		// The Secret this pass created or changed wakes the BucketAccess at once: the next pass
		// must see what this one recorded, or it asks for the principal again.
		if a.ResourceVersion != read {
			status.AwaitCache(ctx, r.Client, a, cacheCatchUp)
		}
	}()
	if !a.DeletionTimestamp.IsZero() {
		return status.IgnoreConflict(lookAgainAfterRefusal(ctx, r.ResyncPeriod)(r.reconcileDelete(ctx, a, p)))
	}
	return status.IgnoreConflict(lookAgainAfterRefusal(ctx, r.ResyncPeriod)(r.reconcileNormal(ctx, a, p)))
}

func (r *BucketAccessReconciler) setConditions(a *storagev1alpha1.BucketAccess, p *accessPass) {
	ready, verified := accessConditions(a, p)
	if verified != nil {
		old := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition)
		setCondition(&a.Status.Conditions, a.Generation, storagev1alpha1.AccessVerifiedCondition, *verified)
		if verified.Reason == storagev1alpha1.ReasonAccessMismatch && (old == nil || old.Reason != verified.Reason) {
			r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, verified.Reason, "Verify", "%s", verified.Message)
		}
	}
	if ready != nil {
		a.Status.ObservedGeneration = a.Generation
		setReady(r.Recorder, a, &a.Status.Conditions, a.Generation, *ready)
	}
}

func (r *BucketAccessReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *BucketAccessReconciler) reconcileNormal(ctx context.Context, a *storagev1alpha1.BucketAccess, p *accessPass) (ctrl.Result, error) {
	// What cannot work is refused before anything is issued: the name labels the Secret.
	if errs := validation.IsValidLabelValue(a.Name); len(errs) > 0 {
		p.found, p.why = accessInvalidName, strings.Join(errs, "; ")
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("name %q is not a valid label value", a.Name))
	}
	bucket, contract, secret, res, err := r.connect(ctx, a, p)
	if bucket == nil || err != nil {
		return res, err
	}
	a.Status.BucketName = bucket.Status.BucketName
	a.Status.SecretName = a.SecretNameOrDefault()

	if a.Status.PrincipalID == "" {
		if res, err := r.issue(ctx, a, p, contract, secret); err != nil || !res.IsZero() {
			return res, err
		}
	} else if err := r.writeSecret(ctx, a, secret, contract, nil); err != nil {
		return r.secretFailed(a, p, err)
	}
	if secret.ResourceVersion != "" && !hasCredentials(secret) && a.Status.PendingKey == nil {
		// The Secret lost its key (edited or deleted by hand): issue a new one the normal way.
		if err := r.startRotation(ctx, a, "", "the Secret no longer holds the key"); err != nil {
			return ctrl.Result{}, err
		}
	}
	if r.rotationDue(a) && a.Status.PendingKey == nil {
		if err := r.startRotation(ctx, a, a.Annotations[storagev1alpha1.RotateKeyAnnotation], "rotation is due"); err != nil {
			return ctrl.Result{}, err
		}
	}
	// While the new key waits for the policy to carry it, the key in the Secret still works:
	// the pass goes on to check that one, so the BucketAccess stays Ready through a rotation.
	rotating := false
	if a.Status.PendingKey != nil {
		waiting, res, err := r.finishRotation(ctx, a, p, contract, secret)
		if err != nil || !res.IsZero() {
			return res, err
		}
		rotating = waiting
	}
	if err := r.revokeRetired(ctx, a); err != nil {
		return r.principalFailed(p, err)
	}

	p.found = accessIssued
	key := string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
	check, err := r.check(ctx, a, contract, key, string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
	if err != nil {
		p.found, p.s3Err = accessS3Failed, err
		return ctrl.Result{}, err
	}
	p.check, p.checkedKey = &check, key
	if missing, _ := accessGaps(a.Spec.Access, check); len(missing) > 0 || rotating {
		if len(missing) > 0 {
			r.checked.Delete(a.UID)
		}
		return ctrl.Result{RequeueAfter: policyWait}, nil
	}
	return ctrl.Result{RequeueAfter: r.nextLook(a)}, nil
}

// connect finds the Bucket, its Contract and the Secret (nil Bucket: waiting, recorded in p).
// A Secret not yet written is returned empty, with its name.
func (r *BucketAccessReconciler) connect(ctx context.Context, a *storagev1alpha1.BucketAccess, p *accessPass) (
	*storagev1alpha1.Bucket, *storagev1alpha1.Contract, *corev1.Secret, ctrl.Result, error) {
	bucket := &storagev1alpha1.Bucket{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.Bucket}, bucket); err != nil {
		if apierrors.IsNotFound(err) {
			p.found = accessBucketMissing
			return nil, nil, nil, ctrl.Result{}, nil
		}
		return nil, nil, nil, ctrl.Result{}, fmt.Errorf("reading Bucket %q: %w", a.Spec.Bucket, err)
	}
	if bucket.Status.BucketName == "" || bucket.Status.BucketName != bucket.Spec.BucketName {
		p.found, p.why = accessBucketNotReady, "its bucket is not made yet"
		if c := meta.FindStatusCondition(bucket.Status.Conditions, storagev1alpha1.ReadyCondition); c != nil {
			p.why = fmt.Sprintf("%s: %s", c.Reason, strings.TrimSuffix(c.Message, "."))
		}
		return nil, nil, nil, ctrl.Result{}, nil
	}
	contract := &storagev1alpha1.Contract{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: bucket.Spec.ContractName}, contract); err != nil {
		if apierrors.IsNotFound(err) {
			p.found, p.why = accessContractNotReady, fmt.Sprintf("Contract %q does not exist", bucket.Spec.ContractName)
			return nil, nil, nil, ctrl.Result{}, nil
		}
		return nil, nil, nil, ctrl.Result{}, fmt.Errorf("reading Contract %q: %w", bucket.Spec.ContractName, err)
	}
	if contract.Status.ContractID == "" || contract.Status.State != "active" || contract.Status.Endpoint == "" {
		p.found, p.why = accessContractNotReady, fmt.Sprintf("Contract %q is not active", contract.Name)
		return nil, nil, nil, ctrl.Result{}, nil
	}
	if a.Status.ContractID != "" && a.Status.ContractID != contract.Status.ContractID {
		p.found, p.why = accessContractNotReady, fmt.Sprintf(
			"Contract %q is now contract %s, not %s whose account holds this BucketAccess's principal", contract.Name, contract.Status.ContractID, a.Status.ContractID)
		return nil, nil, nil, ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	name := a.SecretNameOrDefault()
	err := r.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: name}}
	case err != nil:
		return nil, nil, nil, ctrl.Result{}, fmt.Errorf("reading Secret %q: %w", name, err)
	case !metav1.IsControlledBy(secret, a):
		p.found, p.secret = accessSecretConflict, name
		// A foreign Secret is not in the cache (it lacks the label): look again later.
		return nil, nil, nil, ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
	}
	return bucket, contract, secret, ctrl.Result{}, nil
}

// issue makes the principal (or, after a lost answer, gets it again with the same idempotency
// key) and writes its first key to the Secret.
func (r *BucketAccessReconciler) issue(ctx context.Context, a *storagev1alpha1.BucketAccess, p *accessPass,
	contract *storagev1alpha1.Contract, secret *corev1.Secret) (ctrl.Result, error) {
	if !a.Status.PrincipalRequested {
		contractID := contract.Status.ContractID
		if err := status.Record(ctx, r.Client, a, func(o client.Object) {
			o.(*storagev1alpha1.BucketAccess).Status.PrincipalRequested = true
			o.(*storagev1alpha1.BucketAccess).Status.ContractID = contractID
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("recording the request for a principal: %w", err)
		}
	}
	got, created, err := r.Principals.CreatePrincipal(ctx, a.Status.ContractID, string(a.UID))
	if err != nil {
		return r.principalFailed(p, err)
	}
	if got.Credentials == nil {
		return ctrl.Result{}, errors.New("the contract API made a principal but returned no key")
	}
	if created {
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "PrincipalCreated", "Create",
			"Made principal %s in the account of contract %s, with key %s", got.ID, a.Status.ContractID, got.Credentials.AccessKeyID)
	}
	if err := r.writeSecret(ctx, a, secret, contract, got.Credentials); err != nil {
		return r.secretFailed(a, p, err)
	}
	a.Status.PrincipalID = got.ID
	a.Status.PolicyPrincipal = policyPrincipalRaw(got.PolicyPrincipal)
	a.Status.AccessKeyID = got.Credentials.AccessKeyID
	issued := metav1.NewTime(r.now())
	a.Status.KeyIssuedAt = &issued
	a.Status.KeysIssued = max(a.Status.KeysIssued, 1)
	a.Status.RotatedFor = a.Annotations[storagev1alpha1.RotateKeyAnnotation]
	return ctrl.Result{}, nil
}

// rotationDue reports whether a new key is asked for: a new value of the rotate-key annotation,
// or a key older than the rotation period.
func (r *BucketAccessReconciler) rotationDue(a *storagev1alpha1.BucketAccess) bool {
	if v := a.Annotations[storagev1alpha1.RotateKeyAnnotation]; v != "" && v != a.Status.RotatedFor {
		return true
	}
	rot := a.Spec.Rotation
	return rot != nil && a.Status.KeyIssuedAt != nil && !r.now().Before(a.Status.KeyIssuedAt.Add(rot.Period.Duration))
}

// startRotation records the intent to issue a new key, with the idempotency key it will be
// asked for with, before the provider is asked.
func (r *BucketAccessReconciler) startRotation(ctx context.Context, a *storagev1alpha1.BucketAccess, trigger, why string) error {
	pending := &storagev1alpha1.PendingKey{
		IdempotencyKey: fmt.Sprintf("%s-key-%d", a.UID, a.Status.KeysIssued+1),
		Trigger:        trigger,
	}
	if err := status.Record(ctx, r.Client, a, func(o client.Object) {
		o.(*storagev1alpha1.BucketAccess).Status.PendingKey = pending.DeepCopy()
	}); err != nil {
		return fmt.Errorf("recording the rotation: %w", err)
	}
	logf.FromContext(ctx).Info("Rotating the key", "why", why)
	return nil
}

// finishRotation asks for the new key, lets the Bucket's policy name it, checks it with itself,
// and only then writes it to the Secret; the key it replaces keeps working for the overlap.
// waiting says the new key cannot do what it should yet (the policy does not carry it).
func (r *BucketAccessReconciler) finishRotation(ctx context.Context, a *storagev1alpha1.BucketAccess, p *accessPass,
	contract *storagev1alpha1.Contract, secret *corev1.Secret) (waiting bool, _ ctrl.Result, _ error) {
	pending := a.Status.PendingKey
	got, creds, err := r.Principals.AddPrincipalKey(ctx, a.Status.ContractID, a.Status.PrincipalID, pending.IdempotencyKey)
	if err != nil {
		res, err := r.principalFailed(p, err)
		return false, res, err
	}
	if pending.AccessKeyID == "" {
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "KeyIssued", "Rotate",
			"Issued key %s; it goes into Secret %s once it is checked", creds.AccessKeyID, a.SecretNameOrDefault())
	}
	pending.AccessKeyID = creds.AccessKeyID
	// The policy must name the new key before it can work (servers that name principals by
	// key): the Bucket's controller reads this and rewrites the policy.
	a.Status.PolicyPrincipal = policyPrincipalRaw(got.PolicyPrincipal)

	check, err := r.check(ctx, a, contract, creds.AccessKeyID, creds.SecretAccessKey)
	if err != nil {
		p.found, p.s3Err = accessS3Failed, err
		return false, ctrl.Result{}, err
	}
	if missing, _ := accessGaps(a.Spec.Access, check); len(missing) > 0 {
		return true, ctrl.Result{}, nil
	}

	old := string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
	if err := r.writeSecret(ctx, a, secret, contract, &creds); err != nil {
		res, err := r.secretFailed(a, p, err)
		return false, res, err
	}
	now := r.now()
	overlap := 10 * time.Minute
	if a.Spec.Rotation != nil {
		overlap = a.Spec.Rotation.OverlapOrDefault().Duration
	}
	if old != "" && old != creds.AccessKeyID {
		a.Status.RetiringKeys = append(a.Status.RetiringKeys, storagev1alpha1.RetiringKey{
			AccessKeyID: old, RevokeAfter: metav1.NewTime(now.Add(overlap))})
	}
	a.Status.AccessKeyID = creds.AccessKeyID
	issued := metav1.NewTime(now)
	a.Status.KeyIssuedAt = &issued
	a.Status.KeysIssued++
	if pending.Trigger != "" {
		a.Status.RotatedFor = pending.Trigger
	}
	a.Status.PendingKey = nil
	r.checked.Store(a.UID, keyCheck{key: creds.AccessKeyID, check: check, at: now})
	r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "KeyRotated", "Rotate",
		"Secret %s now holds key %s; key %s keeps working until %s", a.SecretNameOrDefault(), creds.AccessKeyID, old,
		now.Add(overlap).UTC().Format(time.RFC3339))
	return false, ctrl.Result{}, nil
}

// revokeRetired revokes the replaced keys whose overlap is over, and reads back how the policy
// names the principal without them.
func (r *BucketAccessReconciler) revokeRetired(ctx context.Context, a *storagev1alpha1.BucketAccess) error {
	now := r.now()
	var kept []storagev1alpha1.RetiringKey
	revoked := false
	for _, k := range a.Status.RetiringKeys {
		if now.Before(k.RevokeAfter.Time) || k.AccessKeyID == a.Status.AccessKeyID {
			if k.AccessKeyID != a.Status.AccessKeyID {
				kept = append(kept, k)
			}
			continue
		}
		err := r.Principals.RemovePrincipalKey(ctx, a.Status.ContractID, a.Status.PrincipalID, k.AccessKeyID)
		if err != nil && !errors.Is(err, contractclient.ErrLastKey) {
			return err
		}
		revoked = true
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "KeyRevoked", "Rotate",
			"Revoked key %s: its overlap with key %s is over", k.AccessKeyID, a.Status.AccessKeyID)
	}
	a.Status.RetiringKeys = kept
	if !revoked {
		return nil
	}
	got, err := r.Principals.GetPrincipal(ctx, a.Status.ContractID, a.Status.PrincipalID)
	if err != nil {
		return err
	}
	a.Status.PolicyPrincipal = policyPrincipalRaw(got.PolicyPrincipal)
	return nil
}

// check finds out what key can do in the bucket, asking again only when the key changed or the
// last answer is older than the resync period.
func (r *BucketAccessReconciler) check(ctx context.Context, a *storagev1alpha1.BucketAccess, contract *storagev1alpha1.Contract,
	key, secretKey string) (objectstore.AccessCheck, error) {
	if last, ok := r.checked.Load(a.UID); ok {
		c := last.(keyCheck)
		if c.key == key && time.Since(c.at) < r.ResyncPeriod {
			return c.check, nil
		}
	}
	store := r.Stores(contract.Status.Endpoint, contract.Status.Region, key, secretKey)
	check, err := objectstore.CheckAccess(ctx, store, a.Status.BucketName)
	if err != nil {
		return check, err
	}
	if key == a.Status.AccessKeyID {
		r.checked.Store(a.UID, keyCheck{key: key, check: check, at: time.Now()})
	}
	return check, nil
}

// nextLook is when the BucketAccess has something to do next: a revocation, a rotation, or the
// resync.
func (r *BucketAccessReconciler) nextLook(a *storagev1alpha1.BucketAccess) time.Duration {
	next := resyncAfter(r.ResyncPeriod)
	now := r.now()
	consider := func(at time.Time) {
		if d := at.Sub(now) + 100*time.Millisecond; d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	for _, k := range a.Status.RetiringKeys {
		consider(k.RevokeAfter.Time)
	}
	if a.Spec.Rotation != nil && a.Status.KeyIssuedAt != nil {
		consider(a.Status.KeyIssuedAt.Add(a.Spec.Rotation.Period.Duration))
	}
	return next
}

// writeSecret creates or updates the Secret; a nil creds keeps the key it holds. It writes only
// when something differs.
func (r *BucketAccessReconciler) writeSecret(ctx context.Context, a *storagev1alpha1.BucketAccess, secret *corev1.Secret,
	contract *storagev1alpha1.Contract, creds *contractclient.Credentials) error {
	var keyID, secretKey []byte
	if creds != nil {
		keyID, secretKey = []byte(creds.AccessKeyID), []byte(creds.SecretAccessKey)
	}
	isNew := secret.ResourceVersion == ""
	if isNew && creds == nil {
		return nil // nothing to write yet: issue or rotation fills it
	}
	changed := setSecretData(secret, contract.Name, contract.Status.Endpoint, contract.Status.Region, keyID, secretKey)
	if string(secret.Data[storagev1alpha1.SecretKeyBucketName]) != a.Status.BucketName {
		secret.Data[storagev1alpha1.SecretKeyBucketName] = []byte(a.Status.BucketName)
		changed = true
	}
	if secret.Labels[storagev1alpha1.BucketAccessLabel] != a.Name {
		secret.Labels[storagev1alpha1.BucketAccessLabel] = a.Name
		changed = true
	}
	if !metav1.IsControlledBy(secret, a) {
		if err := controllerutil.SetControllerReference(a, secret, r.Scheme()); err != nil {
			return err
		}
		changed = true
	}
	switch {
	case isNew:
		if err := r.Create(ctx, secret); err != nil {
			return fmt.Errorf("creating Secret %q: %w", secret.Name, err)
		}
		r.Recorder.Eventf(a, secret, corev1.EventTypeNormal, "SecretCreated", "Create",
			"Wrote the credentials for bucket %s to Secret %s", a.Status.BucketName, secret.Name)
	case changed:
		if err := r.Update(ctx, secret); err != nil {
			return fmt.Errorf("updating Secret %q: %w", secret.Name, err)
		}
	}
	return nil
}

func (r *BucketAccessReconciler) secretFailed(a *storagev1alpha1.BucketAccess, p *accessPass, err error) (ctrl.Result, error) {
	if apierrors.IsAlreadyExists(err) {
		// Someone else's Secret, which the cache does not hold: do not write over it.
		p.found, p.secret = accessSecretConflict, a.SecretNameOrDefault()
		return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
	}
	return ctrl.Result{}, err
}

// principalFailed records a failed principal call: retried with backoff when it may pass,
// looked at again after the resync period when refused.
func (r *BucketAccessReconciler) principalFailed(p *accessPass, err error) (ctrl.Result, error) {
	if errors.Is(err, contractclient.ErrPrincipalDeleted) || errors.Is(err, contractclient.ErrNotFound) {
		p.found = accessPrincipalLost
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	e, ok := contractclient.AsError(err)
	if !ok {
		return ctrl.Result{}, err
	}
	p.found, p.apiErr = accessAPIFailed, e
	if !e.Retryable() {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if e.RetryAfter() > 0 {
		return ctrl.Result{RequeueAfter: e.RetryAfter()}, nil
	}
	return ctrl.Result{}, err
}

// reconcileDelete deletes the principal with all its keys, then the Secret. A principal whose
// answer was lost is learnt first, by asking again with the same idempotency key.
func (r *BucketAccessReconciler) reconcileDelete(ctx context.Context, a *storagev1alpha1.BucketAccess, p *accessPass) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(a, Finalizer) {
		return ctrl.Result{}, nil
	}
	p.found = accessDeleting
	// Credentials made for another resource (an Application's link) go after it: deleting a
	// namespace deletes both at once, and the workload must not lose its key first.
	switch owner, err := r.liveController(ctx, a); {
	case err != nil:
		return ctrl.Result{}, err
	case owner != "":
		p.found, p.why = accessWaitingForUser, owner
		return ctrl.Result{RequeueAfter: ownerWait}, nil
	}
	if a.Status.PrincipalID == "" && a.Status.PrincipalRequested {
		got, _, err := r.Principals.CreatePrincipal(ctx, a.Status.ContractID, string(a.UID))
		switch {
		case err == nil:
			a.Status.PrincipalID = got.ID
		case errors.Is(err, contractclient.ErrPrincipalDeleted), errors.Is(err, contractclient.ErrNotFound), contractclient.NothingStored(err):
			// Deleted already, the account is gone, or the request was refused: nothing to revoke.
		default:
			return r.principalFailed(p, err)
		}
	}
	if a.Status.PrincipalID != "" {
		err := r.Principals.DeletePrincipal(ctx, a.Status.ContractID, a.Status.PrincipalID)
		if err != nil && !errors.Is(err, contractclient.ErrNotFound) {
			return r.principalFailed(p, err)
		}
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "PrincipalDeleted", "Delete",
			"Deleted principal %s and revoked all its keys", a.Status.PrincipalID)
		a.Status.PrincipalID, a.Status.PolicyPrincipal, a.Status.AccessKeyID, a.Status.RetiringKeys = "", nil, "", nil
	}
	a.Status.PrincipalRequested = false
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.SecretNameOrDefault()}, secret)
	if err == nil && metav1.IsControlledBy(secret, a) {
		if err := r.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting Secret %q: %w", secret.Name, err)
		}
	} else if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("reading Secret %q: %w", a.SecretNameOrDefault(), err)
	}
	r.checked.Delete(a.UID)
	return ctrl.Result{}, status.SetFinalizer(ctx, r.Client, a, Finalizer, false)
}

// ownerWait is how often a deletion that waits for the resource it serves looks again; that
// resource is of a kind this controller does not watch.
const ownerWait = 2 * time.Second

// liveController names the BucketAccess's controlling owner ("Application web") while it exists
// and is not being deleted, as the API server says; "" when there is none.
func (r *BucketAccessReconciler) liveController(ctx context.Context, a *storagev1alpha1.BucketAccess) (string, error) {
	ref := metav1.GetControllerOf(a)
	if ref == nil {
		return "", nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", nil
	}
	owner := &metav1.PartialObjectMetadata{}
	owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	err = reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: ref.Name}, owner)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading %s %q: %w", ref.Kind, ref.Name, err)
	case owner.UID != ref.UID:
		return "", nil // a new object of the same name: not the one these credentials served
	case owner.DeletionTimestamp != nil:
		// Going too; and a foreground deletion of it waits for this BucketAccess to go first.
		return "", nil
	}
	return ref.Kind + " " + ref.Name, nil
}

// policyPrincipalRaw is a principal's Principal element as status holds it.
func policyPrincipalRaw(p map[string]any) *runtime.RawExtension {
	if len(p) == 0 {
		return nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return &runtime.RawExtension{Raw: raw}
}

// SetupWithManager registers the controller. A BucketAccess wakes when its spec or the
// rotate-key annotation changes, when its Secret changes, and when its Bucket's status changes
// (the bucket is made, or its policy now carries the access).
func (r *BucketAccessReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&storagev1alpha1.BucketAccess{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&corev1.Secret{}).
		Watches(&storagev1alpha1.Bucket{}, handler.EnqueueRequestsFromMapFunc(r.accessesOfBucket)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles)}).
		Named("bucketaccess").
		Complete(r)
}

func (r *BucketAccessReconciler) accessesOfBucket(ctx context.Context, obj client.Object) []reconcile.Request {
	names, err := index.BucketAccessesNaming(ctx, r.Client, obj.GetNamespace(), obj.GetName())
	if err != nil {
		logf.FromContext(ctx).Error(err, "Mapping a Bucket to its BucketAccesses", "namespace", obj.GetNamespace(), "bucket", obj.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(names))
	for _, name := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}})
	}
	return reqs
}
