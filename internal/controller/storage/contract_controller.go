package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/status"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// Finalizer keeps a Contract or Bucket until the controller has dealt with the provider side:
// cancelled or kept the contract, deleted or kept the bucket, and waited for what depends on it.
const Finalizer = "storage.osm.dev/finalizer"

// ContractReconciler buys a contract from the provider for each Contract and keeps its
// credentials in a Secret.
type ContractReconciler struct {
	client.Client
	// API is the provider's contract API.
	API contractclient.API
	// APIReader reads from the API server directly, for what the cache does not hold.
	APIReader client.Reader
	// Stores opens the contract's S3 endpoint with a key pair: a new key is tried there before
	// it goes into the Secret.
	Stores StoreFactory
	// Recorder emits events on the Contract.
	Recorder events.EventRecorder
	// ResyncPeriod is how often a Ready Contract is read back from the provider, which finds a
	// contract cancelled behind the operator's back.
	ResyncPeriod time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int

	// observed holds, by Contract UID, the provider's last answer and when it came, so that a
	// pass woken by a Bucket or a Secret within ResyncPeriod does not ask the provider again:
	// with a thousand Buckets, each Bucket event would otherwise cost a contract API call.
	observed sync.Map // types.UID -> observation
	// unsupported holds, by Contract UID, a provider's refusal of a second key, so that it is
	// asked again once a resync period rather than on every pass.
	unsupported sync.Map // types.UID -> unsupportedKeys
}

// observation is a contract as the provider reported it, and when.
type observation struct {
	contract contractclient.Contract
	at       time.Time
}

// The manager lists and watches only Secrets labelled storage.osm.dev/contract (see
// cmd/manager's cache options); RBAC cannot express a label selector, so it grants the verbs.
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts/status,verbs=patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts/finalizers,verbs=update
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the provider's contract and the credentials Secret match the Contract.
func (r *ContractReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	contract := &storagev1alpha1.Contract{}
	if err := r.Get(ctx, req.NamespacedName, contract); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	read := contract.ResourceVersion

	// The finalizer goes on before the provider is called, so nothing is bought that a
	// deletion could forget.
	if contract.DeletionTimestamp.IsZero() {
		if err := status.SetFinalizer(ctx, r.Client, contract, Finalizer, true); err != nil {
			return status.IgnoreConflict(ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err))
		}
	}

	before := contract.DeepCopy()
	p := &contractPass{}
	defer func() {
		r.setConditions(contract, p)
		if err := status.Patch(ctx, r.Client, contract, &before.Status, &contract.Status); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
			return
		}
		// The Secret this pass created or changed wakes the Contract at once: the next pass
		// must see what this one recorded, or it buys (replays) and announces it again.
		if contract.ResourceVersion != read {
			status.AwaitCache(ctx, r.Client, contract, cacheCatchUp)
		}
	}()

	if !contract.DeletionTimestamp.IsZero() {
		return status.IgnoreConflict(lookAgainAfterRefusal(ctx, r.ResyncPeriod)(r.reconcileDelete(ctx, contract, p)))
	}
	return status.IgnoreConflict(lookAgainAfterRefusal(ctx, r.ResyncPeriod)(r.reconcileNormal(ctx, contract, p)))
}

// setConditions sets the conditions contractConditions derives from the pass, with an event
// when Ready's or KeyRotation's reason changes.
func (r *ContractReconciler) setConditions(c *storagev1alpha1.Contract, p *contractPass) {
	ready, inUse, keys := contractConditions(c, p)
	if inUse != nil {
		setCondition(&c.Status.Conditions, c.Generation, storagev1alpha1.InUseCondition, *inUse)
	}
	if p.keys == keysNotAsked {
		meta.RemoveStatusCondition(&c.Status.Conditions, storagev1alpha1.KeyRotationCondition)
	}
	if keys != nil {
		setKeyRotation(r.Recorder, c, *keys)
	}
	if ready != nil {
		c.Status.ObservedGeneration = c.Generation
		setReady(r.Recorder, c, &c.Status.Conditions, c.Generation, *ready)
	}
}

func (r *ContractReconciler) reconcileNormal(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass) (ctrl.Result, error) {
	if err := r.listBuckets(ctx, c, p, false); err != nil {
		return ctrl.Result{}, err
	}

	secretName := c.SecretNameOrDefault()
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: secretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Secret %q: %w", secretName, err)
	case !metav1.IsControlledBy(secret, c):
		return r.secretConflict(p, secretName)
	case !secret.DeletionTimestamp.IsZero():
		// Deleted by hand: let it go, and its deletion wakes this Contract to write it again. Not
		// when the whole namespace is going: its Buckets need it until they are gone.
		if terminating, err := r.namespaceTerminating(ctx, c.Namespace); err != nil || terminating {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.releaseSecret(ctx, c, secret, false)
	}

	if c.Status.ContractID == "" || secret == nil || !hasCredentials(secret) {
		return r.createOrRecover(ctx, c, p, secret)
	}
	if err := r.removeStaleSecrets(ctx, c); err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.observe(ctx, c, p, secret)
	if err != nil || p.found != contractAvailable {
		return res, err
	}
	keys, err := r.reconcileKeys(ctx, c, p, secret)
	if err != nil {
		return keys, err
	}
	return sooner(res, keys), nil
}

// removeStaleSecrets deletes this Contract's Secrets under names it no longer uses (after a
// change of spec.secretName), so no second copy of the keys lingers.
func (r *ContractReconciler) removeStaleSecrets(ctx context.Context, c *storagev1alpha1.Contract) error {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.InNamespace(c.Namespace),
		client.MatchingLabels{storagev1alpha1.ContractLabel: c.Name}); err != nil {
		return fmt.Errorf("listing Secrets of Contract %q: %w", c.Name, err)
	}
	for i := range list.Items {
		old := &list.Items[i]
		if old.Name == c.SecretNameOrDefault() || !metav1.IsControlledBy(old, c) {
			continue
		}
		if err := r.releaseSecret(ctx, c, old, false); err != nil {
			return err
		}
		if err := r.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Secret %q: %w", old.Name, err)
		}
		r.Recorder.Eventf(c, old, corev1.EventTypeNormal, "SecretDeleted", "Delete",
			"Deleted Secret %s: the credentials now live in Secret %s", old.Name, c.SecretNameOrDefault())
	}
	return nil
}

// createOrRecover buys the contract, or fetches its key pair again. The API answers a repeated
// Idempotency-Key (the Contract's UID) with the same contract and the same first key pair, so a
// crash between buying and recording never buys a second contract, and a Secret deleted by hand
// comes back with the same keys.
func (r *ContractReconciler) createOrRecover(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, secret *corev1.Secret) (ctrl.Result, error) {
	// What cannot work is refused before anything is bought: the name labels the Secret.
	if errs := validation.IsValidLabelValue(c.Name); len(errs) > 0 {
		p.found, p.why = contractInvalidName, strings.Join(errs, "; ")
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("contract name %q is not a valid label value", c.Name))
	}
	// Record the intent first: should the answer be lost and the Contract then be deleted,
	// deletion knows there may be a contract to cancel or keep (see learnContract).
	if !c.Status.PurchaseRequested {
		if err := status.Record(ctx, r.Client, c, func(o client.Object) {
			o.(*storagev1alpha1.Contract).Status.PurchaseRequested = true
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("recording the purchase: %w", err)
		}
	}
	logf.FromContext(ctx).V(1).Info("Buying the contract (or replaying the purchase)", "replay", c.Status.ContractID != "")
	got, created, err := r.API.Buy(ctx, string(c.UID), purchaseRequest(c))
	if err != nil {
		return apiFailed(p, err)
	}
	if created {
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "ContractCreated", "Create",
			"Bought contract %s (plan %s) from the provider", got.ID, got.Plan)
	}
	c.Status.ContractID = got.ID
	if got.Cancelled() {
		return cancelled(c, p, got.ID)
	}

	if secret == nil {
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}}
	}
	if c.Status.AccessKeyID != "" && c.Status.AccessKeyID != got.Credentials.AccessKeyID {
		// Rotation replaced the first key, the only one a replayed purchase answers.
		setObserved(c, p, got)
		got.Credentials = nil
		r.observed.Store(c.UID, observation{contract: got, at: time.Now()})
		return r.reissueKey(ctx, c, p, secret)
	}
	if err := r.writeSecret(ctx, c, secret, got.Endpoint, got.Region, got.Credentials); err != nil {
		return r.secretFailed(ctx, c, p, err)
	}
	if c.Status.AccessKeyID == "" {
		// An annotation already there asks for nothing: only a new value does.
		now := metav1.Now()
		c.Status.AccessKeyID, c.Status.KeyIssuedAt = got.Credentials.AccessKeyID, &now
		c.Status.RotatedFor = c.Annotations[storagev1alpha1.RotateKeyAnnotation]
	}
	setObserved(c, p, got)
	got.Credentials = nil // the cache holds what Get would answer, never a secret
	r.observed.Store(c.UID, observation{contract: got, at: time.Now()})
	// Nothing this controller watches changes when the provider cancels the contract behind its
	// back: look again after the resync period, as observe does.
	return ctrl.Result{RequeueAfter: r.ResyncPeriod}, nil
}

// purchaseRequest is what the Contract asks the provider for.
func purchaseRequest(c *storagev1alpha1.Contract) contractclient.Request {
	return contractclient.Request{Plan: c.Spec.Plan, Region: c.Spec.Region, DisplayName: c.Spec.DisplayName,
		Namespace: c.Namespace, Name: c.Name}
}

// learnContract finds the contract a deletion must cancel or keep when none was recorded: a
// purchase whose answer was lost. Asking again returns it, with its keys; a refusal means
// nothing was bought. A zero result, nil error and nil contract mean c.Status.ContractID is as
// complete as it gets.
func (r *ContractReconciler) learnContract(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass) (*contractclient.Contract, ctrl.Result, error) {
	if c.Status.ContractID != "" || !c.Status.PurchaseRequested {
		return nil, ctrl.Result{}, nil
	}
	got, _, err := r.API.Buy(ctx, string(c.UID), purchaseRequest(c))
	if err != nil {
		if contractclient.NothingStored(err) {
			return nil, ctrl.Result{}, nil // the request itself was refused: nothing was bought
		}
		res, err := apiFailed(p, err)
		return nil, res, err
	}
	c.Status.ContractID = got.ID
	return &got, ctrl.Result{}, nil
}

// observe reads the contract back and keeps the Secret's endpoint and region in line with it.
func (r *ContractReconciler) observe(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, secret *corev1.Secret) (ctrl.Result, error) {
	if last, ok := r.observed.Load(c.UID); ok {
		o := last.(observation)
		if age := time.Since(o.at); age < r.ResyncPeriod && o.contract.ID == c.Status.ContractID {
			if err := r.writeSecret(ctx, c, secret, o.contract.Endpoint, o.contract.Region, nil); err != nil {
				return r.secretFailed(ctx, c, p, err)
			}
			setObserved(c, p, o.contract)
			return ctrl.Result{RequeueAfter: r.ResyncPeriod - age}, nil
		}
	}
	got, err := r.API.Get(ctx, c.Status.ContractID)
	if err != nil || got.Cancelled() {
		r.observed.Delete(c.UID)
	} else {
		r.observed.Store(c.UID, observation{contract: got, at: time.Now()})
	}
	switch {
	case errors.Is(err, contractclient.ErrNotFound):
		return cancelled(c, p, c.Status.ContractID)
	case err != nil:
		return apiFailed(p, err)
	case got.Cancelled():
		return cancelled(c, p, got.ID)
	}
	if err := r.writeSecret(ctx, c, secret, got.Endpoint, got.Region, nil); err != nil {
		return r.secretFailed(ctx, c, p, err)
	}
	setObserved(c, p, got)
	return ctrl.Result{RequeueAfter: r.ResyncPeriod}, nil
}

// writeSecret creates or updates the credentials Secret; a nil creds keeps the keys it holds.
// It writes only when something differs.
func (r *ContractReconciler) writeSecret(ctx context.Context, c *storagev1alpha1.Contract, secret *corev1.Secret,
	endpoint, region string, creds *contractclient.Credentials) error {
	var keyID, secretKey []byte
	if creds != nil {
		keyID, secretKey = []byte(creds.AccessKeyID), []byte(creds.SecretAccessKey)
	}
	isNew := secret.ResourceVersion == ""
	changed := setSecretData(secret, c.Name, endpoint, region, keyID, secretKey)
	if !metav1.IsControlledBy(secret, c) {
		if err := controllerutil.SetControllerReference(c, secret, r.Scheme()); err != nil {
			return err
		}
		changed = true
	}
	// The Secret outlives a namespace deletion's first sweep until this Contract lets it go, so
	// its Buckets can still reach S3 to delete themselves (see reconcileDelete).
	if controllerutil.AddFinalizer(secret, Finalizer) {
		changed = true
	}
	switch {
	case isNew:
		if err := r.Create(ctx, secret); err != nil {
			return fmt.Errorf("creating Secret %q: %w", secret.Name, err)
		}
		r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "SecretCreated", "Create",
			"Wrote the contract's credentials to Secret %s", secret.Name)
	case changed:
		if err := r.Update(ctx, secret); err != nil {
			return fmt.Errorf("updating Secret %q: %w", secret.Name, err)
		}
		r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "SecretUpdated", "Update",
			"Updated the contract's connection details in Secret %s", secret.Name)
	}
	return nil
}

// setObserved records the contract as the provider reports it.
func setObserved(c *storagev1alpha1.Contract, p *contractPass, got contractclient.Contract) {
	c.Status.ContractID = got.ID
	c.Status.State = got.State
	c.Status.Endpoint = got.Endpoint
	c.Status.Region = got.Region
	c.Status.Plan = got.Plan
	c.Status.SecretName = c.SecretNameOrDefault()
	c.Status.BucketPolicy = nil
	if f := got.PolicyForm; f != nil {
		c.Status.BucketPolicy = &storagev1alpha1.BucketPolicyForm{ResourcePrefix: f.ResourcePrefix,
			OwnerPrincipal: f.OwnerPrincipal, OwnerNeedsAllow: f.OwnerNeedsAllow}
	}
	p.found, p.observed = contractAvailable, got
}

func cancelled(c *storagev1alpha1.Contract, p *contractPass, id string) (ctrl.Result, error) {
	c.Status.State = string(contractapi.Cancelled)
	p.found, p.id = contractCancelled, id
	return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("contract %s is cancelled", id))
}

func (r *ContractReconciler) secretConflict(p *contractPass, name string) (ctrl.Result, error) {
	p.found, p.secret = contractSecretConflict, name
	// A foreign Secret is not in the cache (it lacks the label), so no watch says when it goes.
	return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
}

func (r *ContractReconciler) secretFailed(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, err error) (ctrl.Result, error) {
	if !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, err
	}
	// The cache holds only labelled Secrets, and may not yet hold one this Contract has just
	// written: ask the API server whose it is.
	existing := &corev1.Secret{}
	if getErr := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}, existing); getErr != nil {
		return ctrl.Result{}, client.IgnoreNotFound(getErr)
	}
	if metav1.IsControlledBy(existing, c) {
		return ctrl.Result{}, err // the cache catches up; retry
	}
	return r.secretConflict(p, c.SecretNameOrDefault())
}

// apiFailed records a failed contract API call. Transient failures are retried with backoff (or
// after the API's Retry-After); refusals wait for the spec to change.
func apiFailed(p *contractPass, err error) (ctrl.Result, error) {
	e, ok := contractclient.AsError(err)
	if !ok {
		return ctrl.Result{}, err
	}
	p.found, p.apiErr = contractAPIFailed, e
	if !e.Retryable() {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if e.RetryAfter() > 0 {
		return ctrl.Result{RequeueAfter: e.RetryAfter()}, nil
	}
	return ctrl.Result{}, err
}

// listBuckets records in the pass which Buckets name this Contract. Before a Contract lets go, it
// asks the API server itself: a Bucket created a moment ago may not be in the cache yet, and a
// Contract cancelled under it would leave its bucket with no way to be deleted.
func (r *ContractReconciler) listBuckets(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, fromAPIServer bool) error {
	names, err := index.BucketsNaming(ctx, r.Client, c.Namespace, c.Name)
	if fromAPIServer {
		names, err = index.BucketsNamingUncached(ctx, r.APIReader, c.Namespace, c.Name)
	}
	if err != nil {
		return err
	}
	p.bucketsListed, p.buckets = true, names
	return nil
}

func (r *ContractReconciler) reconcileDelete(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(c, Finalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.listBuckets(ctx, c, p, true); err != nil {
		return ctrl.Result{}, err
	}
	if len(p.buckets) > 0 {
		return ctrl.Result{}, nil // the Bucket watch wakes this Contract when the Buckets go
	}

	// Whatever the policy, first learn a contract whose purchase answer was lost: Delete must
	// cancel it, and Retain must leave its keys somewhere.
	learned, res, err := r.learnContract(ctx, c, p)
	if err != nil || !res.IsZero() {
		return res, err
	}

	if c.Spec.ReclaimPolicy != storagev1alpha1.ReclaimPolicyDelete && c.Status.ContractID != "" && c.Status.State != string(contractapi.Cancelled) {
		if res, err := r.settleKeys(ctx, c, p); err != nil || !res.IsZero() {
			return res, err
		}
	}
	if res, err := r.settleAtProvider(ctx, c, p, learned); err != nil || !res.IsZero() {
		return res, err
	}
	r.observed.Delete(c.UID)
	return ctrl.Result{}, status.SetFinalizer(ctx, r.Client, c, Finalizer, false)
}

// settleAtProvider does what the reclaim policy says before the Contract goes: Delete cancels
// the contract and deletes its Secret; Retain leaves the contract and its keys in a Secret that
// outlives the Contract. learned is a contract whose purchase answer was lost, if any. A zero
// result and nil error mean the Contract may go.
func (r *ContractReconciler) settleAtProvider(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass, learned *contractclient.Contract) (ctrl.Result, error) {
	secret := &corev1.Secret{}
	secretErr := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}, secret)
	if secretErr != nil && !apierrors.IsNotFound(secretErr) {
		return ctrl.Result{}, secretErr
	}
	ownSecret := secretErr == nil && metav1.IsControlledBy(secret, c)

	switch {
	case c.Spec.ReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete && c.Status.ContractID != "":
		if res, err := r.cancelAtProvider(ctx, c, p); err != nil || !res.IsZero() {
			return res, err
		}
		// The keys are dead: the Secret goes with the contract.
		if ownSecret {
			if err := r.releaseSecret(ctx, c, secret, false); err != nil {
				return ctrl.Result{}, err
			}
			if err := r.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting Secret %q: %w", secret.Name, err)
			}
		}
	case learned != nil && !learned.Cancelled() && !apierrors.IsNotFound(secretErr) && !ownSecret:
		// Retain, the keys never reached a Secret, and their name is taken by another: they
		// must land somewhere before this resource goes.
		return r.secretConflict(p, c.SecretNameOrDefault())
	case learned != nil && !learned.Cancelled() && apierrors.IsNotFound(secretErr):
		// Retain, and the keys never reached a Secret: write them, unowned, so they outlive
		// this resource with the contract they open.
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}}
		if err := r.writeSecret(ctx, c, secret, learned.Endpoint, learned.Region, learned.Credentials); err != nil {
			return r.secretFailed(ctx, c, p, err)
		}
		if err := r.releaseSecret(ctx, c, secret, true); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "SecretRetained", "Delete",
			"Contract %s stays at the provider (reclaimPolicy Retain); Secret %s keeps its credentials", c.Status.ContractID, secret.Name)
	case ownSecret:
		// Retain keeps the contract running, so its credentials must outlive this resource:
		// without the owner reference the garbage collector leaves the Secret alone.
		if err := r.releaseSecret(ctx, c, secret, true); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "SecretRetained", "Delete",
			"Contract %s stays at the provider (reclaimPolicy Retain); Secret %s keeps its credentials", c.Status.ContractID, secret.Name)
	}
	return ctrl.Result{}, nil
}

func (r *ContractReconciler) namespaceTerminating(ctx context.Context, name string) (bool, error) {
	// Read from the API server, not a cache of every Namespace: this is rare (a Secret being
	// deleted), and get on its own namespace is all a manager limited to some namespaces has.
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}

// releaseSecret removes this Contract's finalizer from its Secret, and with orphan also its owner
// reference, so the Secret outlives the Contract.
func (r *ContractReconciler) releaseSecret(ctx context.Context, c *storagev1alpha1.Contract, secret *corev1.Secret, orphan bool) error {
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := controllerutil.RemoveFinalizer(secret, Finalizer)
	if orphan {
		secret.OwnerReferences = removeOwner(secret.OwnerReferences, c.UID)
		changed = true
	}
	if !changed {
		return nil
	}
	if err := r.Patch(ctx, secret, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("releasing Secret %q: %w", secret.Name, err)
	}
	return nil
}

// cancelAtProvider cancels the contract. A zero result and nil error mean it is gone.
func (r *ContractReconciler) cancelAtProvider(ctx context.Context, c *storagev1alpha1.Contract, p *contractPass) (ctrl.Result, error) {
	logf.FromContext(ctx).V(1).Info("Cancelling the contract", "contractID", c.Status.ContractID)
	err := r.API.Cancel(ctx, c.Status.ContractID)
	switch {
	case err == nil:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "ContractCancelled", "Delete",
			"Cancelled contract %s at the provider (reclaimPolicy Delete)", c.Status.ContractID)
		return ctrl.Result{}, nil
	case errors.Is(err, contractclient.ErrNotFound):
		return ctrl.Result{}, nil // already gone at the provider: nothing left to cancel
	case errors.Is(err, contractclient.ErrHasBuckets):
		p.found, p.id = contractHasBuckets, c.Status.ContractID
		return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
	default:
		return apiFailed(p, err)
	}
}

// SetupWithManager registers the controller. It wakes a Contract when its spec changes, when its
// Secret changes, and when a Bucket naming it comes or goes.
func (r *ContractReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&storagev1alpha1.Contract{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&corev1.Secret{}).
		Watches(&storagev1alpha1.Bucket{},
			contractOfBucketAfter(bucketChurnSettle),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles)}).
		Named("contract").
		Complete(r)
}

// contractOfBucket maps a Bucket to the Contract it names, in its own namespace.
func contractOfBucket(_ context.Context, obj client.Object) []reconcile.Request {
	b, ok := obj.(*storagev1alpha1.Bucket)
	if !ok || b.Spec.ContractName == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}}}
}

func removeOwner(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	out := refs[:0]
	for _, ref := range refs {
		if ref.UID != uid {
			out = append(out, ref)
		}
	}
	return out
}
