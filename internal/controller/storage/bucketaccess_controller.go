package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/fairqueue"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
)

// BucketAccessReconciler issues, for each BucketAccess, a principal of the Bucket's account with
// a key of its own, writes the key to a Secret, rotates it, and checks with the key itself that
// it can do what its access allows. The rights come from statements the Bucket's controller adds
// to the bucket policy for it (AccessGrants).
type BucketAccessReconciler struct {
	client.Client
	// Principals is the provider's contract API for principals.
	Principals contractclient.Principals
	// Roles is the provider's contract API for roles, which BucketAccesses with
	// authentication ServiceAccount get instead of a principal.
	Roles contractclient.Roles
	// Issuer is the cluster's ServiceAccount token issuer those roles trust; without a URL they
	// are refused (AuthenticationUnsupported).
	Issuer TokenIssuer
	// Stores opens the S3 endpoint with a key, to check what the key can do.
	Stores StoreFactory
	// Recorder emits events on the BucketAccess.
	Recorder events.EventRecorder
	// ResyncPeriod is how often a key is checked again.
	ResyncPeriod time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int
	// APIReader reads from the API server directly: whose a Secret is, and whether the
	// resource a BucketAccess serves still exists, are not in the cache. The cached client
	// when nil.
	APIReader client.Reader
	// Now is the clock rotation follows; the wall clock when nil.
	Now engine.Clock
	// Owners are the kinds that make BucketAccesses for themselves (Applications): a
	// BucketAccess of theirs being deleted waits for its owner to go, and is woken when it does.
	Owners []client.Object

	// written is this controller's record of its own last writes (engine.Writes).
	written engine.Writes
	// checked holds the last check of each BucketAccess's key in each of its buckets, so a pass
	// woken by a Bucket within ResyncPeriod does not send the same requests again.
	checked ttlcache.Cache[types.UID, []keyCheck]
	// progress holds the checks of a pass that failed before it checked every bucket.
	progress ttlcache.Cache[types.UID, []partialCheck]
	// refusals holds a provider's refusal of a second key, asked again once a resync period.
	refusals ttlcache.Cache[types.UID, string]
}

// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=paas.osm.dev,resources=applications,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses/status,verbs=patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses/finalizers,verbs=update
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete

// Reconcile makes the principal, its key and the Secret match the BucketAccess.
func (r *BucketAccessReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return engine.Reconciler[*storagev1alpha1.BucketAccess, accessFound]{Client: r.Client, Kind: accessKind{r}, Finalizer: Finalizer,
		ResyncPeriod: r.ResyncPeriod, Written: &r.written, Recorder: r.Recorder}.Reconcile(ctx, req)
}

func (r *BucketAccessReconciler) secrets() credentials.Secrets {
	return credentials.Secrets{Client: r.Client, APIReader: r.apiReader(), Recorder: r.Recorder}
}

func (r *BucketAccessReconciler) apiReader() client.Reader {
	if r.APIReader == nil {
		return r.Client
	}
	return r.APIReader
}

// accessKind is the BucketAccess's part of the reconcile skeleton.
type accessKind struct{ *BucketAccessReconciler }

type accessOutcome = engine.Outcome[accessFound]

func (k accessKind) Conclude(a *storagev1alpha1.BucketAccess, out accessOutcome) {
	k.conclude(a, out.Found)
}

// Normal issues the principal and its first key, runs the key's lifecycle, and checks the key
// in the Secret with itself.
func (k accessKind) Normal(ctx context.Context, a *storagev1alpha1.BucketAccess, p *engine.Pass[*storagev1alpha1.BucketAccess]) accessOutcome {
	var found accessFound
	// What cannot work is refused before anything is issued: the name labels the Secret.
	if errs := validation.IsValidLabelValue(a.Name); len(errs) > 0 {
		return found.end(accessInvalidName{strings.Join(errs, "; ")}, 0,
			reconcile.TerminalError(fmt.Errorf("name %q is not a valid label value", a.Name)))
	}
	if a.Keyless() && k.Issuer.URL == "" {
		// Nothing changes this but the manager's flags, and a restart reconciles everything.
		return found.end(authenticationUnsupported{}, 0, nil)
	}
	target, out, done := k.connect(ctx, a, found)
	if done {
		return out
	}
	if !a.MultiBucket() {
		a.Status.BucketName = target.buckets[0].bucket.Status.BucketName
	}
	a.Status.SecretName = a.SecretNameOrDefault()
	if a.Keyless() {
		return k.keyless(ctx, a, p, target, found)
	}
	var first *contractclient.Credentials
	if a.Status.PrincipalID == "" {
		if first, out, done = k.principal(ctx, a, p, target.contract, found); done {
			return out
		}
	}
	keys, held := k.keys(a, p, target, first)
	if target.secret != nil {
		if err := held.write(ctx, nil); err != nil {
			return k.secretFailed(found, a, err)
		}
	}
	res := keys.Reconcile(ctx)
	found.keys = res.Found
	if out, done := k.keysFailed(found, a, res); done {
		return out
	}
	return k.verify(ctx, a, target, held, found, res.After)
}

// target is what a BucketAccess's key reaches: its Buckets, in the order of spec.buckets, their
// Contract, and the Secret the key goes to (nil: not written yet).
type target struct {
	buckets  []targetBucket
	contract *storagev1alpha1.Contract
	secret   *corev1.Secret
}

// targetBucket is one Bucket the key reaches, with the access and prefix it has there.
type targetBucket struct {
	storagev1alpha1.AccessBucket
	bucket *storagev1alpha1.Bucket
}

// connect finds the Buckets, their Contract and the Secret; done says the pass ends with out,
// waiting for one of them. Of a BucketAccess over several Buckets, each that cannot be reached
// (missing, not ready, of another Contract than the first) is named in found.buckets, and the
// first of them in the list decides Ready.
func (k accessKind) connect(ctx context.Context, a *storagev1alpha1.BucketAccess, found accessFound) (*target, accessOutcome, bool) {
	t := &target{}
	var problem accessFinding
	for _, item := range a.AccessBuckets() {
		bucket, why, err := k.bucketOf(ctx, a, string(item.Name))
		if err != nil {
			return nil, found.end(nil, 0, err), true
		}
		if why == nil && len(t.buckets) > 0 && bucket.Spec.ContractName != t.buckets[0].bucket.Spec.ContractName {
			first := t.buckets[0].bucket
			why = accessContractMismatch{bucket: bucket.Name, contract: bucket.Spec.ContractName, first: first.Name, firstContract: first.Spec.ContractName}
		}
		if why != nil {
			if found.buckets == nil {
				found.buckets = map[string]accessFinding{}
			}
			found.buckets[string(item.Name)] = why
			if problem == nil {
				problem = why
			}
			continue
		}
		t.buckets = append(t.buckets, targetBucket{AccessBucket: item, bucket: bucket})
	}
	if len(a.AccessBuckets()) == 0 {
		problem = accessBucketMissing{} // only past the CRD's rules: neither form
	}
	if problem != nil {
		return nil, found.end(problem, 0, nil), true
	}
	first := t.buckets[0].bucket
	contract, why, err := k.contractOf(ctx, a, first)
	if contract == nil {
		return nil, found.end(accessContractNotReady{first.Name, why}, 0, err), true
	}
	if existingAccount(contract) {
		// Principals are the provider's to make; nothing changes that but a new Contract.
		return nil, found.end(accessExistingAccount{contract.Name}, 0, nil), true
	}
	secret, err := k.secrets().Read(ctx, a, a.SecretNameOrDefault())
	switch {
	case errors.Is(err, credentials.ErrSecretConflict):
		return nil, k.secretFailed(found, a, err), true
	case err != nil:
		return nil, found.end(nil, 0, err), true
	}
	t.contract, t.secret = contract, secret
	return t, accessOutcome{}, false
}

// bucketOf reads Bucket name and says why the key cannot reach it yet (nil: it can), or err.
func (k accessKind) bucketOf(ctx context.Context, a *storagev1alpha1.BucketAccess, name string) (*storagev1alpha1.Bucket, accessFinding, error) {
	bucket := &storagev1alpha1.Bucket{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, bucket); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, accessBucketMissing{name}, nil
		}
		return nil, nil, fmt.Errorf("reading Bucket %q: %w", name, err)
	}
	if observing(bucket) {
		// Its policy, which grants the keys access, is never written.
		why := "its spec.managementPolicy is Observe, so the operator writes nothing to its bucket and cannot give keys access to it: set it to Manage"
		return nil, accessBucketNotReady{name, why}, nil
	}
	if bucket.Status.BucketName == "" || bucket.Status.BucketName != bucket.Spec.BucketName {
		why := "its bucket is not made yet"
		if c := meta.FindStatusCondition(bucket.Status.Conditions, storagev1alpha1.ReadyCondition); c != nil {
			why = fmt.Sprintf("%s: %s", c.Reason, strings.TrimSuffix(c.Message, "."))
		}
		return nil, accessBucketNotReady{name, why}, nil
	}
	return bucket, nil, nil
}

// contractOf finds the Bucket's Contract, active, and the contract whose account holds the
// principal; nil with why when it is not usable (or err).
func (k accessKind) contractOf(ctx context.Context, a *storagev1alpha1.BucketAccess, bucket *storagev1alpha1.Bucket) (
	*storagev1alpha1.Contract, string, error) {
	contract := &storagev1alpha1.Contract{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: bucket.Spec.ContractName}, contract); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("Contract %q does not exist", bucket.Spec.ContractName), nil
		}
		return nil, "", fmt.Errorf("reading Contract %q: %w", bucket.Spec.ContractName, err)
	}
	switch {
	case existingAccount(contract):
		return contract, "", nil
	case contract.Status.ContractID == "" || contract.Status.State != activeState || contract.Status.Endpoint == "":
		return nil, fmt.Sprintf("Contract %q is not active", contract.Name), nil
	case a.Status.ContractID != "" && a.Status.ContractID != contract.Status.ContractID:
		return nil, fmt.Sprintf("Contract %q is now contract %s, not %s whose account holds this BucketAccess's principal",
			contract.Name, contract.Status.ContractID, a.Status.ContractID), nil
	}
	return contract, "", nil
}

// principal makes the BucketAccess's principal (or, after a lost answer, gets it again with the
// same idempotency key), and returns its first key pair. The request is recorded first, with
// its contract, so a deletion finds a principal whose answer was lost even when the Bucket is
// gone. done says the pass ends with out.
func (k accessKind) principal(ctx context.Context, a *storagev1alpha1.BucketAccess, p *engine.Pass[*storagev1alpha1.BucketAccess],
	contract *storagev1alpha1.Contract, found accessFound) (*contractclient.Credentials, accessOutcome, bool) {
	if err := recordRequest(ctx, a, p, contract); err != nil {
		return nil, found.end(nil, 0, fmt.Errorf("recording the request for a principal: %w", err)), true
	}
	got, created, err := k.Principals.CreatePrincipal(ctx, a.Status.ContractID, string(a.UID))
	if err != nil {
		return nil, k.principalFailed(found, err), true
	}
	if got.Credentials == nil {
		return nil, found.end(nil, 0, errors.New("the contract API made a principal but returned no key")), true
	}
	if created {
		k.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "PrincipalCreated", "Create",
			"Made principal %s in the account of contract %s, with key %s", got.ID, a.Status.ContractID, got.Credentials.AccessKeyID)
	}
	a.Status.PrincipalID = got.ID
	a.Status.PolicyPrincipal = policyPrincipalRaw(got.PolicyPrincipal)
	return got.Credentials, accessOutcome{}, false
}

// recordRequest records, once, that the provider is about to be asked for the BucketAccess's
// principal or role, with the contract whose account holds it: deletion then finds one whose
// answer was lost, even when the Bucket is gone.
func recordRequest(ctx context.Context, a *storagev1alpha1.BucketAccess, p *engine.Pass[*storagev1alpha1.BucketAccess],
	contract *storagev1alpha1.Contract) error {
	if a.Status.PrincipalRequested {
		return nil
	}
	contractID := contract.Status.ContractID
	return p.Record(ctx, func(o *storagev1alpha1.BucketAccess) {
		o.Status.PrincipalRequested, o.Status.ContractID = true, contractID
	})
}

// SetupWithManager registers the controller. A BucketAccess wakes when its spec or the
// rotate-key annotation changes, when its Secret changes, and when its Bucket's status changes
// (the bucket is made, or its policy now carries the access).
func (r *BucketAccessReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&storagev1alpha1.BucketAccess{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&storagev1alpha1.Bucket{}, handler.EnqueueRequestsFromMapFunc(r.accessesOfBucket))
	for _, owner := range r.Owners {
		b = b.Watches(owner, handler.EnqueueRequestsFromMapFunc(r.deletingAccessesOf),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil
			}}))
	}
	return b.WithOptions(fairqueue.ControllerOptions(r.MaxConcurrentReconciles)).
		Named("bucketaccess").
		Complete(r)
}

// deletingAccessesOf maps an owner that goes (deleted, or starting deletion) to its
// BucketAccesses that wait for it to go.
func (r *BucketAccessReconciler) deletingAccessesOf(ctx context.Context, owner client.Object) []reconcile.Request {
	var list storagev1alpha1.BucketAccessList
	if err := r.List(ctx, &list, client.InNamespace(owner.GetNamespace())); err != nil {
		logf.FromContext(ctx).Error(err, "Mapping an owner to its BucketAccesses", "owner", klog.KObj(owner))
		return nil
	}
	var reqs []reconcile.Request
	for _, a := range list.Items {
		if ref := metav1.GetControllerOfNoCopy(&a); ref != nil && ref.UID == owner.GetUID() && !a.DeletionTimestamp.IsZero() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&a)})
		}
	}
	return reqs
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
