package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/fairqueue"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/keylock"
	"github.com/object-storage-manager/object-storage-manager/internal/metrics"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/resyncbudget"
)

// StoreFactory returns a Store for one account on one S3 endpoint.
type StoreFactory func(objectstore.Account) objectstore.Store

// accountOf is the account of contract's status, with key. The endpoint of an existing account
// is a tenant's word, so every connection to it is held to the platform's allowlist.
func accountOf(contract *storagev1alpha1.Contract, key contractclient.Credentials) objectstore.Account {
	st := &contract.Status
	return objectstore.Account{Endpoint: st.Endpoint, Region: st.Region, AccessKeyID: key.AccessKeyID,
		SecretAccessKey: key.SecretAccessKey, VirtualHosted: st.VirtualHostedStyle, TenantEndpoint: existingAccount(contract)}
}

// BucketReconciler makes a bucket, with the settings of its spec, for each Bucket.
type BucketReconciler struct {
	client.Client
	// Stores opens the S3 endpoint of a Contract with its credentials.
	Stores StoreFactory
	// Recorder emits events on the Bucket.
	Recorder events.EventRecorder
	// ResyncPeriod is how often a Ready Bucket is compared with the server again, which is
	// what finds changes made behind the operator's back.
	ResyncPeriod time.Duration
	// Resyncs books those checks within the resync budget; nil: every ResyncPeriod.
	Resyncs *resyncbudget.Scheduler
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int
	// Users are the kinds whose resources keep a Bucket from being deleted.
	Users []BucketUsers
	// APIReader reads from the API server directly: who else claims a bucket name is decided
	// from there, never from a cache a step behind.
	APIReader client.Reader
	// Settings are the bucket settings the spec manages; bucketsettings.All when nil.
	Settings []bucketsettings.Syncer
	// Topics makes the provider's topics the spec's notifications publish to; without it,
	// notifications are Unsupported.
	Topics contractclient.Topics
	// NotificationEndpoints are where notifications may push events; the empty list allows
	// none.
	NotificationEndpoints egress.Allowlist
	// Usage is the provider's contract API, for what each bucket holds and its quota; nil:
	// no provider to ask (usage and quotas are then unsupported).
	Usage contractclient.Usage
	// EmptyBatchesPerPass bounds the batches a pass deletes from a bucket it empties;
	// tuning.EmptyBatchesPerPass when 0.
	EmptyBatchesPerPass int

	// written is this controller's record of its own last writes (engine.Writes).
	written engine.Writes
	// ownSecrets reads the keys of Contracts over an account the user has (spec.credentials).
	ownSecrets accountSecrets
	// usage is the provider's last answer about the buckets of each contract.
	usage providerUsage
	// names serialises the passes that take a bucket name, so that of two Buckets naming the
	// same bucket exactly one records it (the manager is a single leader).
	names keylock.Map
}

// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets/status,verbs=patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// Reconcile makes the bucket at the provider match the Bucket.
func (r *BucketReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx = metrics.WithCalls(ctx) // what the pass costs the provider, for the resync budget
	return engine.Reconciler[*storagev1alpha1.Bucket, bucketFound]{Client: r.Client, Kind: bucketKind{r}, Finalizer: Finalizer,
		ResyncPeriod: r.ResyncPeriod, Written: &r.written, Recorder: r.Recorder}.Reconcile(ctx, req)
}

// bucketKind is the Bucket's part of the reconcile skeleton.
type bucketKind struct{ *BucketReconciler }

type bucketOutcome = engine.Outcome[bucketFound]

func (k bucketKind) Conclude(b *storagev1alpha1.Bucket, out bucketOutcome) { k.conclude(b, out.Found) }

// Normal makes the bucket, or finds it, and brings its settings to the spec.
func (k bucketKind) Normal(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket]) bucketOutcome {
	users, err := k.listUsers(ctx, b)
	if err != nil {
		return bucketOutcome{Err: err}
	}
	found := bucketFound{users: users}
	acct, out, done := k.connect(ctx, b, found)
	if done {
		return out
	}
	if observing(b) {
		return k.observe(ctx, b, acct, found)
	}
	if !acct.contract.DeletionTimestamp.IsZero() && b.Status.BucketName != b.Spec.BucketName {
		// A bucket made now would outlive the account it is made in.
		return found.end(contractDeleting{}, 0, nil)
	}
	// Whether the spec was already applied once as it stands: then the server's current state
	// is compared with what it showed after that, not only with the spec.
	in := k.settingsInput(b, acct, users, specApplied(b))
	if b.Status.ManagementPolicy == storagev1alpha1.ManagementObserve {
		// Observed, never written by the operator: nothing in status is its own to remove.
		bucketsettings.Forget(in, &b.Status, k.settings())
		b.Status.ManagementPolicy, in.Applied = "", false
	}
	if out, done := k.ensureBucket(ctx, b, p, acct.store, &found); done {
		return out
	}
	contractID := acct.contract.Status.ContractID
	if out, done := k.ensureTopics(ctx, b, p, contractID, in, found); done {
		return out
	}
	failed := bucketsettings.Sync(ctx, in, k.emitter(b), k.settings()).Failed
	if slices.ContainsFunc(failed, func(f bucketsettings.Failure) bool { return errors.Is(f.Err, objectstore.ErrNoSuchBucket) }) {
		// Deleted behind the operator's back: make it again, then give it the spec, which
		// nothing that was observed before describes any more.
		b.Status.BucketName = ""
		if out, done := k.ensureBucket(ctx, b, p, acct.store, &found); done {
			return out
		}
		in.Applied = false
		failed = bucketsettings.Sync(ctx, in, k.emitter(b), k.settings()).Failed
	}
	found.usage = k.observeUsage(ctx, b, k.provider(acct.contract))
	if out, done := k.settleTopics(ctx, b, contractID, in.Applied, failed, found); done {
		return out
	}
	return k.settled(ctx, b, found, failed)
}

// settled ends a pass that brought the settings to the spec, but for failed: a failure the
// server will not get over (a setting it does not implement, object lock the bucket lacks) is
// reported and looked at again after the resync period, the rest of the spec applied.
func (k bucketKind) settled(ctx context.Context, b *storagev1alpha1.Bucket, found bucketFound, failed []bucketsettings.Failure) bucketOutcome {
	var unsupported []bucketsettings.Failure
	lockMissing := false
	for _, f := range failed {
		switch {
		case errors.Is(f.Err, bucketsettings.ErrObjectLockNotEnabled):
			lockMissing = true
		case errors.Is(f.Err, bucketsettings.ErrLoggingTargetClaimed):
			return found.end(loggingTargetClaimed{f.Err}, 0, reconcile.TerminalError(f.Err))
		case f.Unsupported:
			unsupported = append(unsupported, f)
		case isAPIError(f.Err):
			return endOnAPIFailure(found, f.Err)
		default:
			return k.s3Failed(b, found, f.Err)
		}
	}
	switch {
	case lockMissing:
		return found.end(objectLockNotEnabled{}, 0,
			reconcile.TerminalError(fmt.Errorf("bucket %q: %w", b.Spec.BucketName, bucketsettings.ErrObjectLockNotEnabled)))
	case len(unsupported) > 0:
		// Asked again once a resync period: a server may be upgraded.
		return found.end(settingsUnsupported{unsupported, true}, 0, reconcile.TerminalError(unsupported[0].Err))
	}
	return found.end(bucketAvailable{}, k.nextCheck(ctx, b), nil)
}

// nextCheck is how soon b, Ready, is compared with the server again: within the resync budget,
// sooner after a change of spec, a correction or a failure, later while it stays calm
// (resyncbudget); after the resync period without a budget.
func (k bucketKind) nextCheck(ctx context.Context, b *storagev1alpha1.Bucket) time.Duration {
	if k.Resyncs == nil {
		return engine.ResyncAfter(k.ResyncPeriod)
	}
	calls := metrics.CallsOf(ctx)
	return k.Resyncs.Next(resyncbudget.Check{UID: b.UID, Share: b.Namespace + "/" + b.Spec.ContractName,
		Cost: calls.All(), Calm: specApplied(b) && calls.Writes() == 0})
}

func (k bucketKind) settings() []bucketsettings.Syncer {
	if k.Settings != nil {
		return k.Settings
	}
	return bucketsettings.All
}

// emitter emits the settings' events on b.
func (k bucketKind) emitter(b *storagev1alpha1.Bucket) bucketsettings.Emit {
	return func(eventType, reason, message string) {
		k.Recorder.Eventf(b, nil, eventType, reason, "Update", "%s", message)
	}
}

// settingsInput is what the settings of b are brought to: its spec, with what its users and
// its Contract's endpoint add.
func (k bucketKind) settingsInput(b *storagev1alpha1.Bucket, acct *account, users *bucketUsers, applied bool) *bucketsettings.Input {
	in := &bucketsettings.Input{Bucket: b, Store: acct.store, Applied: applied, Grants: users.policyGrants(),
		LifecycleRules: users.lifecycleRules(), PolicyForm: acct.contract.Status.BucketPolicy, OwnerTags: ownerTags(b),
		WebsiteEndpoint: acct.contract.Status.WebsiteEndpoint}
	if p := k.provider(acct.contract); p != nil {
		in.Provider = p
	}
	return in
}

// specApplied reports whether the current spec was applied by an earlier pass that ended Ready.
func specApplied(b *storagev1alpha1.Bucket) bool {
	c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == b.Generation &&
		b.Status.BucketName == b.Spec.BucketName
}

// account is a Bucket's Contract, and its S3 endpoint opened with the Contract's key.
type account struct {
	contract *storagev1alpha1.Contract
	store    objectstore.Store
}

// connect opens the S3 endpoint of the Bucket's Contract, in the Bucket's namespace. When the
// Contract is missing or not usable it ends the pass (done); the Contract watch wakes the
// Bucket when that changes.
func (k bucketKind) connect(ctx context.Context, b *storagev1alpha1.Bucket, found bucketFound) (*account, bucketOutcome, bool) {
	contract := &storagev1alpha1.Contract{}
	err := k.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	if apierrors.IsNotFound(err) {
		return nil, found.end(contractMissing{}, 0, nil), true
	}
	if err != nil {
		return nil, found.end(nil, 0, fmt.Errorf("reading Contract %q: %w", b.Spec.ContractName, err)), true
	}
	// Usable, not Ready: a Contract that is deleting, or whose API is briefly down, still has
	// working credentials, and its Buckets must be able to finish their own deletion.
	if contract.Status.State != activeState || contract.Status.SecretName == "" || contract.Status.Endpoint == "" {
		why := "it has no status yet"
		if ready := meta.FindStatusCondition(contract.Status.Conditions, storagev1alpha1.ReadyCondition); ready != nil {
			why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		return nil, found.end(contractNotReady{why}, 0, nil), true
	}
	secret := &corev1.Secret{}
	secretKey := client.ObjectKey{Namespace: b.Namespace, Name: contract.Status.SecretName}
	if existingAccount(contract) {
		err = k.ownSecrets.get(ctx, k.Client, k.APIReader, secretKey, secret)
	} else {
		err = k.Get(ctx, secretKey, secret)
	}
	key := credentials.KeyOf(secret)
	if err != nil || key.AccessKeyID == "" || key.SecretAccessKey == "" {
		if client.IgnoreNotFound(err) != nil {
			return nil, found.end(nil, 0, fmt.Errorf("reading Secret %q: %w", contract.Status.SecretName, err)), true
		}
		return nil, found.end(noCredentials{contract.Status.SecretName}, 0, nil), true
	}
	b.Status.Endpoint = contract.Status.Endpoint
	b.Status.Region = contract.Status.Region
	store := k.Stores(accountOf(contract, key))
	return &account{contract: contract, store: store}, bucketOutcome{}, false
}

// s3Failed ends a pass on a failed S3 call. Transient failures are retried with backoff; a
// refusal waits for the spec to change (or a resync).
func (k bucketKind) s3Failed(b *storagev1alpha1.Bucket, found bucketFound, err error) bucketOutcome {
	if errors.Is(err, objectstore.ErrAccessDenied) && b.Status.BucketName == b.Spec.BucketName {
		return deniedByPolicy(found, err) // a bucket this resource owns
	}
	if objectstore.IsTransient(err) {
		return found.end(s3Failed{err}, 0, err)
	}
	return found.end(s3Failed{err}, 0, reconcile.TerminalError(err))
}

// deniedByPolicy ends a pass in which the server denied the account a request on its own
// bucket: a bucket policy (the spec's, or one set behind the operator's back) locks the owner
// out.
func deniedByPolicy(found bucketFound, err error) bucketOutcome {
	return found.end(policyDenies{err}, 0, reconcile.TerminalError(err))
}

// SetupWithManager registers the controller. A Bucket wakes when its spec changes, when its
// Contract or the Contract's Secret changes, and every ResyncPeriod.
func (r *BucketReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.usage.api = r.Usage
	b := ctrl.NewControllerManagedBy(mgr).
		For(&storagev1alpha1.Bucket{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&storagev1alpha1.Contract{}, handler.EnqueueRequestsFromMapFunc(r.bucketsOfContract),
			builder.WithPredicates(contractChangedForBuckets)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.bucketsOfSecret))
	for _, u := range r.Users {
		var changed predicate.Predicate = predicate.GenerationChangedPredicate{}
		if u.Changed != nil {
			changed = u.Changed
		}
		b = b.Watches(u.Object, handler.EnqueueRequestsFromMapFunc(u.Buckets), builder.WithPredicates(changed))
	}
	return b.WithOptions(fairqueue.ControllerOptions(r.MaxConcurrentReconciles)).
		Named("bucket").
		Complete(r)
}

func (r *BucketReconciler) bucketsOfContract(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.bucketsNamingContract(ctx, obj.GetNamespace(), obj.GetName())
}

// bucketsOfSecret maps a credentials Secret, by its label, to the Buckets of its Contract.
func (r *BucketReconciler) bucketsOfSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	contract, ok := obj.GetLabels()[storagev1alpha1.ContractLabel]
	if _, access := obj.GetLabels()[storagev1alpha1.BucketAccessLabel]; !ok || access {
		return nil // a BucketAccess's Secret: no Bucket uses its key
	}
	return r.bucketsNamingContract(ctx, obj.GetNamespace(), contract)
}

func (r *BucketReconciler) bucketsNamingContract(ctx context.Context, namespace, contract string) []reconcile.Request {
	names, err := index.BucketsNaming(ctx, r.Client, namespace, contract)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Mapping a Contract to its Buckets", "namespace", namespace, "contract", contract)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(names))
	for _, name := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: namespace, Name: name}})
	}
	return reqs
}
