package storage

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/fairqueue"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// Finalizer is the finalizer the storage controllers keep their resources with.
const Finalizer = storagev1alpha1.Finalizer

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
	// AllowedEndpoints are the S3 endpoints a Contract of spec.credentials may name; the empty
	// list allows none.
	AllowedEndpoints egress.Allowlist
	// Recorder emits events on the Contract.
	Recorder events.EventRecorder
	// ResyncPeriod is how often a Ready Contract is read back from the provider, which finds a
	// contract cancelled behind the operator's back.
	ResyncPeriod time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int
	// Now is the clock key rotation follows; the wall clock when nil.
	Now engine.Clock

	// written is this controller's record of its own last writes (engine.Writes).
	written engine.Writes
	// observed holds the provider's last answer for each Contract, so that a pass woken by a
	// Bucket or a Secret within ResyncPeriod does not ask the provider again: with a thousand
	// Buckets, each Bucket event would otherwise cost a contract API call. It never holds a
	// secret: the API returns one only to a purchase.
	observed ttlcache.Cache[types.UID, contractclient.Contract]
	// refusals holds a provider's refusal of a second key, asked again once a resync period.
	refusals ttlcache.Cache[types.UID, string]
	// checked holds the account of spec.credentials whose keys last worked, for a resync period.
	checked ttlcache.Cache[types.UID, objectstore.Account]
	// ownSecrets reads the Secrets of spec.credentials.
	ownSecrets accountSecrets
	// informers is the manager's cache, whose index gives the Buckets naming a Contract without
	// copying them (index.EachBucketNaming); nil without a manager, as in unit tests.
	informers cache.Informers
}

// The manager lists and watches only Secrets labelled storage.osm.dev/contract (see
// cmd/manager's cache options); RBAC cannot express a label selector, so it grants the verbs.
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts/status,verbs=patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts/finalizers,verbs=update
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the provider's contract and the credentials Secret match the Contract.
func (r *ContractReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return engine.Reconciler[*storagev1alpha1.Contract, contractFound]{Client: r.Client, Kind: contractKind{r}, Finalizer: Finalizer,
		ResyncPeriod: r.ResyncPeriod, Written: &r.written, Recorder: r.Recorder}.Reconcile(ctx, req)
}

func (r *ContractReconciler) secrets() credentials.Secrets {
	return credentials.Secrets{Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder}
}

// contractKind is the Contract's part of the reconcile skeleton.
type contractKind struct{ *ContractReconciler }

type contractOutcome = engine.Outcome[contractFound]

func (k contractKind) Conclude(c *storagev1alpha1.Contract, out contractOutcome) {
	k.conclude(c, out.Found)
}

// Normal buys the contract (or reads it back), keeps its Secret, and runs its key's lifecycle.
func (k contractKind) Normal(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract]) contractOutcome {
	var buckets []string
	var usage usageSum
	if err := index.EachBucketNaming(ctx, k.informers, k.Client, c.Namespace, c.Name, func(b *storagev1alpha1.Bucket) {
		buckets = append(buckets, b.Name)
		usage.add(b)
	}); err != nil {
		return contractOutcome{Err: err}
	}
	sort.Strings(buckets)
	c.Status.Usage = usage.total()
	found := contractFound{buckets: &buckets}
	if existingAccount(c) {
		return k.useExisting(ctx, c, found)
	}
	secret, err := k.secrets().Read(ctx, c, c.SecretNameOrDefault())
	switch {
	case errors.Is(err, credentials.ErrSecretConflict):
		return k.secretConflict(found, c.SecretNameOrDefault())
	case err != nil:
		return found.end(nil, 0, err)
	case secret != nil && !secret.DeletionTimestamp.IsZero():
		// Deleted by hand: let it go, and its deletion wakes this Contract to write it again. Not
		// when the whole namespace is going: its Buckets need it until they are gone.
		if terminating, err := k.namespaceTerminating(ctx, c.Namespace); err != nil || terminating {
			return found.end(nil, 0, err)
		}
		return found.end(nil, 0, k.releaseSecret(ctx, c, secret, false))
	}
	got, after, out, done := k.contract(ctx, c, p, found)
	if done {
		return out
	}
	if err := k.removeStaleSecrets(ctx, c); err != nil {
		return found.end(nil, 0, err)
	}
	return k.keysOf(ctx, c, p, secret, got, after, found)
}

// contract buys the contract, or reads back the one bought, and records it in status. done says
// the pass ends with out: the purchase failed, or the contract is cancelled.
func (k contractKind) contract(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract],
	found contractFound) (got contractclient.Contract, after time.Duration, out contractOutcome, done bool) {
	if c.Status.ContractID == "" {
		// What cannot work is refused before anything is bought: the name labels the Secret.
		if errs := validation.IsValidLabelValue(c.Name); len(errs) > 0 {
			return got, 0, found.end(invalidName{strings.Join(errs, "; ")}, 0,
				reconcile.TerminalError(fmt.Errorf("contract name %q is not a valid label value", c.Name))), true
		}
		var err error
		if got, err = k.purchase(ctx, c, p); err != nil {
			return got, 0, k.apiFailed(found, err), true
		}
		// Nothing this controller watches changes when the provider cancels the contract behind
		// its back: look again after the resync period, as observe does.
		after = k.ResyncPeriod
	} else {
		var err error
		if got, after, err = k.observe(ctx, c); err != nil {
			if errors.Is(err, contractclient.ErrNotFound) {
				return got, 0, k.cancelled(c, found, c.Status.ContractID), true
			}
			return got, 0, k.apiFailed(found, err), true
		}
	}
	if got.Cancelled() {
		return got, 0, k.cancelled(c, found, got.ID), true
	}
	setObserved(c, got)
	return got, after, contractOutcome{}, false
}

// purchase buys the contract. The API answers a repeated Idempotency-Key (the Contract's UID)
// with the same contract and the same first key pair, so a crash between buying and recording
// never buys a second contract. The intent is recorded first: should the answer be lost and the
// Contract then be deleted, deletion knows there may be a contract to cancel or keep.
func (k contractKind) purchase(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract]) (contractclient.Contract, error) {
	if !c.Status.PurchaseRequested {
		if err := p.Record(ctx, func(o *storagev1alpha1.Contract) { o.Status.PurchaseRequested = true }); err != nil {
			return contractclient.Contract{}, fmt.Errorf("recording the purchase: %w", err)
		}
	}
	logf.FromContext(ctx).V(1).Info("Buying the contract (or replaying the purchase)")
	got, created, err := k.API.Buy(ctx, string(c.UID), purchaseRequest(c))
	if err != nil {
		return got, err
	}
	if created {
		k.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "ContractCreated", "Create", "Bought contract %s (plan %s) from the provider", got.ID, got.Plan)
	}
	c.Status.ContractID = got.ID
	k.remember(c, got)
	return got, nil
}

// observe reads the contract back, or takes the answer of a read within the resync period;
// after is when the next read is due.
func (k contractKind) observe(ctx context.Context, c *storagev1alpha1.Contract) (contractclient.Contract, time.Duration, error) {
	if got, age, ok := k.observed.Get(c.UID, k.ResyncPeriod); ok && got.ID == c.Status.ContractID {
		return got, k.ResyncPeriod - age, nil
	}
	got, err := k.API.Get(ctx, c.Status.ContractID)
	if err != nil {
		k.observed.Delete(c.UID)
		return got, 0, err
	}
	k.remember(c, got)
	return got, k.ResyncPeriod, nil
}

// remember keeps the provider's answer for a resync period; never the secret a purchase holds.
func (k contractKind) remember(c *storagev1alpha1.Contract, got contractclient.Contract) {
	if got.Cancelled() {
		k.observed.Delete(c.UID)
		return
	}
	got.Credentials = nil
	k.observed.Put(c.UID, got)
}

// purchaseRequest is what the Contract asks the provider for.
func purchaseRequest(c *storagev1alpha1.Contract) contractclient.Request {
	return contractclient.Request{Plan: c.Spec.Plan, Region: c.Spec.Region, DisplayName: c.Spec.DisplayName,
		Namespace: c.Namespace, Name: c.Name}
}

// setObserved records the contract as the provider reports it.
func setObserved(c *storagev1alpha1.Contract, got contractclient.Contract) {
	c.Status.ContractID = got.ID
	c.Status.State = got.State
	c.Status.Endpoint = got.Endpoint
	c.Status.Region = got.Region
	c.Status.Plan = got.Plan
	c.Status.QuotaBytes = got.QuotaBytes
	c.Status.SecretName = c.SecretNameOrDefault()
	c.Status.WebsiteEndpoint = got.WebsiteEndpoint
	c.Status.BucketPolicy = nil
	if f := got.PolicyForm; f != nil {
		c.Status.BucketPolicy = &storagev1alpha1.BucketPolicyForm{ResourcePrefix: f.ResourcePrefix,
			OwnerPrincipal: f.OwnerPrincipal, OwnerNeedsAllow: f.OwnerNeedsAllow}
	}
}

// SetupWithManager registers the controller. It wakes a Contract when its spec changes, when its
// Secret (its own, or the one of spec.credentials) changes, and when a Bucket naming it comes or
// goes.
func (r *ContractReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.informers = mgr.GetCache()
	return ctrl.NewControllerManagedBy(mgr).
		For(&storagev1alpha1.Contract{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(contractOfExistingSecret)).
		Watches(&storagev1alpha1.Bucket{},
			contractOfBucketAfter(tuning.BucketChurnSettle),
			builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, usageChanged))).
		WithOptions(fairqueue.ControllerOptions(r.MaxConcurrentReconciles)).
		Named("contract").
		Complete(r)
}

// bucketsNaming lists, sorted, the Buckets that name the Contract, as the API server has them.
// Before a Contract lets go, it asks the API server itself: a Bucket created a moment ago may
// not be in the cache yet, and a Contract cancelled under it would leave its bucket with no way
// to be deleted.
func (k contractKind) bucketsNaming(ctx context.Context, c *storagev1alpha1.Contract) ([]string, error) {
	return index.BucketsNamingUncached(ctx, k.APIReader, c.Namespace, c.Name)
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
