package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
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
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/status"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/keylock"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// OwnerTag marks a bucket with the Bucket resource it was created for, "<namespace>/<name>". A
// bucket that already exists is adopted only when it carries this resource's tag, so a Bucket
// deleted with Retain and applied again gets its bucket back, and nothing else does.
const OwnerTag = "storage.osm.dev/bucket"

// OwnerUIDTag records the UID of the resource that made or last adopted the bucket, which tells
// a genuine adoption from a pass that read its own resource from a cache a step behind.
const OwnerUIDTag = "storage.osm.dev/bucket-uid"

// StoreFactory returns a Store for one account on one S3 endpoint.
type StoreFactory func(endpoint, region, accessKeyID, secretAccessKey string) objectstore.Store

// BucketUsers are resources of one kind that use Buckets (Applications link them). A Bucket is
// not deleted while any of them uses it.
type BucketUsers struct {
	// Kind names them in conditions: "Application".
	Kind string
	// List returns, sorted, the names of those in namespace that use the Bucket named bucket.
	List func(ctx context.Context, reader client.Reader, namespace, bucket string) ([]string, error)
	// Object is their type, and Buckets maps one of them to the Buckets it uses, so that a Bucket
	// is woken when a user comes or goes.
	Object  client.Object
	Buckets handler.MapFunc
	// LifecycleRules, when set, returns the lifecycle rules those in namespace ask of the Bucket
	// named bucket (an Application's backup retention), with ids that start with
	// storagev1alpha1.GeneratedLifecycleRulePrefix; they are applied with the spec's.
	LifecycleRules func(ctx context.Context, reader client.Reader, namespace, bucket string) ([]storagev1alpha1.LifecycleRule, error)
	// PolicyGrants, when set, returns what those in namespace are granted in the policy of the
	// Bucket named bucket (BucketAccesses); their statements are added to the spec's.
	PolicyGrants func(ctx context.Context, reader client.Reader, namespace, bucket string) ([]objectstore.AccessGrant, error)
	// Changed filters the events of Object that wake its Buckets; by default a change of
	// generation.
	Changed predicate.Predicate
}

// BucketReconciler makes a bucket, with its ACL and policy, for each Bucket.
type BucketReconciler struct {
	client.Client
	// Stores opens the S3 endpoint of a Contract with its credentials.
	Stores StoreFactory
	// Recorder emits events on the Bucket.
	Recorder events.EventRecorder
	// ResyncPeriod is how often a Ready Bucket is compared with the server again, which is
	// what finds changes made behind the operator's back.
	ResyncPeriod time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int
	// Users are the kinds whose resources keep a Bucket from being deleted.
	Users []BucketUsers
	// APIReader reads from the API server directly: who else claims a bucket name is decided
	// from there, never from a cache a step behind.
	APIReader client.Reader

	// names serialises the passes that take a bucket name, so that of two Buckets naming the
	// same bucket exactly one records it (the manager is a single leader).
	names keylock.Map
}

// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets/status,verbs=patch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// Reconcile makes the bucket at the provider match the Bucket.
func (r *BucketReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	b := &storagev1alpha1.Bucket{}
	if err := r.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if b.DeletionTimestamp.IsZero() {
		if err := status.SetFinalizer(ctx, r.Client, b, Finalizer, true); err != nil {
			return status.IgnoreConflict(ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err))
		}
	}

	before := b.DeepCopy()
	p := &bucketPass{stored: &before.Status}
	defer func() {
		r.setConditions(b, p)
		if err := status.Patch(ctx, r.Client, b, &before.Status, &b.Status); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
		}
	}()

	if !b.DeletionTimestamp.IsZero() {
		return status.IgnoreConflict(lookAgainAfterRefusal(ctx, r.ResyncPeriod)(r.reconcileDelete(ctx, b, p)))
	}
	return status.IgnoreConflict(lookAgainAfterRefusal(ctx, r.ResyncPeriod)(r.reconcileNormal(ctx, b, p)))
}

// setConditions sets the conditions bucketConditions derives from the pass, with an event when
// the pass made or adopted the bucket, when Ready's reason changes (unless to True in a pass that
// made or adopted the bucket, which that event already says), or when a deletion becomes
// blocked.
func (r *BucketReconciler) setConditions(b *storagev1alpha1.Bucket, p *bucketPass) {
	ready, inUse, blocked := bucketConditions(b, p)
	if p.made != nil {
		r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, p.made.reason, p.made.action, "%s", p.made.message)
	}
	if inUse != nil {
		setCondition(&b.Status.Conditions, b.Generation, storagev1alpha1.InUseCondition, *inUse)
	}
	if blocked != nil {
		wasBlocked := meta.IsStatusConditionTrue(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
		oldReason := status.Reason(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
		setCondition(&b.Status.Conditions, b.Generation, storagev1alpha1.DeletionBlockedCondition, *blocked)
		if !wasBlocked || oldReason != blocked.Reason {
			r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "DeletionBlocked", "Delete", "%s", blocked.Message)
		}
	}
	if ready != nil {
		b.Status.ObservedGeneration = b.Generation
		if p.made != nil && ready.Status == metav1.ConditionTrue {
			// The event of the bucket made or adopted says it all: one event, not two.
			setCondition(&b.Status.Conditions, b.Generation, storagev1alpha1.ReadyCondition, *ready)
		} else {
			setReady(r.Recorder, b, &b.Status.Conditions, b.Generation, *ready)
		}
	}
}

func (r *BucketReconciler) reconcileNormal(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) (ctrl.Result, error) {
	if err := r.listUsers(ctx, b, p); err != nil {
		return ctrl.Result{}, err
	}
	store, contract, waiting := r.connect(ctx, b, p)
	if store == nil {
		return ctrl.Result{}, waiting
	}
	if !contract.DeletionTimestamp.IsZero() && b.Status.BucketName != b.Spec.BucketName {
		// A bucket made now would outlive the account it is made in.
		p.found = foundContractDeleting
		return ctrl.Result{}, nil
	}
	// Whether the spec was already applied once as it stands: then the server's current state
	// is compared with what it showed after that, not only with the spec.
	applied := r.specApplied(b)

	if res, err := r.ensureBucket(ctx, b, p, store); err != nil || !res.IsZero() {
		return res, err
	}
	desiredPolicy := effectivePolicy(b, contract.Status.BucketPolicy, p.grants)
	acl, policy, err := r.syncACLAndPolicy(ctx, b, store, applied, desiredPolicy)
	if errors.Is(err, objectstore.ErrNoSuchBucket) {
		// Deleted behind the operator's back: make it again, then give it the spec's ACL and
		// policy, which nothing that was observed before describes any more.
		b.Status.BucketName = ""
		if res, err := r.ensureBucket(ctx, b, p, store); err != nil || !res.IsZero() {
			return res, err
		}
		applied = false
		acl, policy, err = r.syncACLAndPolicy(ctx, b, store, applied, desiredPolicy)
	}
	if err != nil {
		return r.s3Failed(b, p, err)
	}
	b.Status.ACL = acl
	b.Status.Policy = policy
	if err := r.syncFeatures(ctx, b, p, store, applied); err != nil {
		return r.s3Failed(b, p, err)
	}
	switch {
	case p.lockMissing:
		p.found = foundObjectLockNotEnabled
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("bucket %q: %w", b.Spec.BucketName, errObjectLockNotEnabled))
	case len(p.unsupported) > 0:
		// Asked again once a resync period (lookAgainAfterRefusal): a server may be upgraded.
		p.found = foundUnsupported
		return ctrl.Result{}, reconcile.TerminalError(p.unsupported[0].err)
	}
	p.found = foundAvailable
	return ctrl.Result{RequeueAfter: resyncAfter(r.ResyncPeriod)}, nil
}

// connect opens the S3 endpoint of the Bucket's Contract, in the Bucket's namespace. When the
// Contract is missing or not Ready it records that in the pass and returns a nil Store; the
// Contract watch wakes the Bucket when that changes.
func (r *BucketReconciler) connect(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) (objectstore.Store, *storagev1alpha1.Contract, error) {
	contract := &storagev1alpha1.Contract{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	if apierrors.IsNotFound(err) {
		p.found = foundContractMissing
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading Contract %q: %w", b.Spec.ContractName, err)
	}
	// Usable, not Ready: a Contract that is deleting, or whose API is briefly down, still has
	// working credentials, and its Buckets must be able to finish their own deletion.
	if contract.Status.State != "active" || contract.Status.SecretName == "" || contract.Status.Endpoint == "" {
		p.found, p.why = foundContractNotReady, "it has no status yet"
		if ready := meta.FindStatusCondition(contract.Status.Conditions, storagev1alpha1.ReadyCondition); ready != nil {
			p.why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		return nil, nil, nil
	}
	secret := &corev1.Secret{}
	err = r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: contract.Status.SecretName}, secret)
	if err != nil || !hasCredentials(secret) {
		if client.IgnoreNotFound(err) != nil {
			return nil, nil, fmt.Errorf("reading Secret %q: %w", contract.Status.SecretName, err)
		}
		p.found, p.secret = foundNoCredentials, contract.Status.SecretName
		return nil, nil, nil
	}
	b.Status.Endpoint = contract.Status.Endpoint
	b.Status.Region = contract.Status.Region
	return r.Stores(contract.Status.Endpoint, contract.Status.Region,
		string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]),
		string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey])), contract, nil
}

// ensureBucket makes sure the bucket exists and is this resource's. A zero result and nil error
// mean it is.
func (r *BucketReconciler) ensureBucket(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass, store objectstore.Store) (ctrl.Result, error) {
	name := b.Spec.BucketName
	if b.Status.BucketName == name {
		// Made or adopted by an earlier pass; the ACL read notices if it has vanished.
		return ctrl.Result{}, nil
	}
	unlock := r.names.Lock(b.Namespace + "/" + b.Spec.ContractName + "/" + name)
	defer unlock()
	if other, err := r.otherClaimant(ctx, b); err != nil || other != "" {
		if err != nil {
			return ctrl.Result{}, err
		}
		logf.FromContext(ctx).V(1).Info("Another Bucket holds the bucket name", "bucket", name, "holder", other)
		p.found, p.other = foundNameHeld, other
		// Nothing this Bucket watches says when the other lets go.
		return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
	}
	// Look before creating: Ceph RGW answers 200 to a CreateBucket of a bucket that exists.
	err := store.HeadBucket(ctx, name)
	switch {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return r.createBucket(ctx, b, p, store)
	case errors.Is(err, objectstore.ErrAccessDenied):
		// HEAD has no body, so a 403 may also mean these credentials work nowhere, or that a
		// policy denies the account its own bucket: only if the account can list its buckets,
		// and this one is not among them, is the name someone else's.
		names, listErr := store.BucketNames(ctx)
		if listErr != nil {
			return r.s3Failed(b, p, listErr)
		}
		if slices.Contains(names, name) {
			return deniedByPolicy(p, err)
		}
		return nameTaken(b, p)
	case err != nil:
		return r.s3Failed(b, p, err)
	}

	// The bucket exists and this account may use it.
	names, err := store.BucketNames(ctx)
	if err != nil {
		return r.s3Failed(b, p, err)
	}
	if !slices.Contains(names, name) {
		return nameTaken(b, p)
	}
	return r.claim(ctx, b, p, store)
}

// claim takes a bucket that exists in the contract's account, but only if it is this resource's:
// tagged for it, or untagged and named in this resource's record of a creation it had not
// finished. No one else's data is taken over by a name clash.
func (r *BucketReconciler) claim(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass, store objectstore.Store) (ctrl.Result, error) {
	name := b.Spec.BucketName
	tags, err := store.BucketTags(ctx, name)
	if err != nil {
		return r.s3Failed(b, p, err)
	}
	unfinished := tags[OwnerTag] == "" && b.Status.CreatingBucket == name
	logf.FromContext(ctx).V(1).Info("Claiming an existing bucket", "bucket", name, "ownerTag", tags[OwnerTag], "unfinishedCreation", unfinished)
	if tag := tags[OwnerTag]; tag != ownerTagValue(b) && !unfinished {
		p.found, p.tag = foundTaggedForAnother, tag
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("bucket %q %w (%q)", name, errTaggedForAnother, tag))
	}
	if tags[OwnerUIDTag] == string(b.UID) && !unfinished {
		// Made by an earlier pass that stopped before its end-of-pass write, or whose status
		// this pass's cache did not show yet.
		p.recordMade(b, name)
		return ctrl.Result{}, nil
	}
	tags[OwnerTag], tags[OwnerUIDTag] = ownerTagValue(b), string(b.UID)
	if err := store.PutBucketTags(ctx, name, tags); err != nil {
		return r.s3Failed(b, p, err)
	}
	p.recordMade(b, name)
	if unfinished {
		p.made = &bucketEvent{"BucketCreated", "Create",
			fmt.Sprintf("Finished creating bucket %s in the account of Contract %s", name, b.Spec.ContractName)}
		return ctrl.Result{}, nil
	}
	p.made = &bucketEvent{"BucketAdopted", "Adopt", fmt.Sprintf("Adopted existing bucket %s, which is tagged for this resource", name)}
	return ctrl.Result{}, nil
}

func (r *BucketReconciler) createBucket(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass, store objectstore.Store) (ctrl.Result, error) {
	name := b.Spec.BucketName
	// Record the intent first: should this pass stop between creating the bucket and tagging
	// it, the next one (or a deletion) knows the untagged bucket is its own.
	if b.Status.CreatingBucket != name {
		if err := r.record(ctx, b, p, func(s *storagev1alpha1.BucketStatus) { s.CreatingBucket = name }); err != nil {
			return ctrl.Result{}, fmt.Errorf("recording the creation of bucket %q: %w", name, err)
		}
	}
	logf.FromContext(ctx).V(1).Info("Creating bucket", "bucket", name)
	tags := map[string]string{OwnerTag: ownerTagValue(b), OwnerUIDTag: string(b.UID)}
	tagged, err := store.CreateBucket(ctx, name, objectstore.CreateOptions{ObjectLock: b.Spec.ObjectLock != nil, Tags: tags})
	switch {
	case b.Spec.ObjectLock != nil && objectstore.IsNotImplemented(err):
		p.found = foundUnsupported
		p.unsupported = []unsupportedFeature{{field: "objectLock", reason: storagev1alpha1.ReasonObjectLockUnsupported, err: err}}
		return ctrl.Result{}, reconcile.TerminalError(err)
	case errors.Is(err, objectstore.ErrBucketTakenElsewhere):
		return nameTaken(b, p)
	case objectstore.ErrorCode(err) == "BucketAlreadyOwnedByYou":
		// An earlier attempt whose answer was lost, or another resource of this account.
		return r.claim(ctx, b, p, store)
	case err != nil:
		return r.s3Failed(b, p, err)
	}
	// The tag is what lets this resource, and only it, adopt the bucket later: where the server
	// took no tags at creation, tag at once.
	if !tagged {
		if err := store.PutBucketTags(ctx, name, tags); err != nil {
			return r.s3Failed(b, p, err)
		}
	}
	p.recordMade(b, name)
	p.made = &bucketEvent{"BucketCreated", "Create", fmt.Sprintf("Created bucket %s in the account of Contract %s", name, b.Spec.ContractName)}
	return ctrl.Result{}, nil
}

// errTaggedForAnother: the bucket exists in the account and is tagged for another resource.
var errTaggedForAnother = errors.New("exists and is tagged for another resource")

// record writes one change of status at once, before the external call whose intent it records
// (status.Record), and makes the same change in the pass's snapshot of the stored status: the
// end-of-pass write sends what differs from that snapshot, and so can change the record again.
func (r *BucketReconciler) record(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass, mutate func(*storagev1alpha1.BucketStatus)) error {
	if err := status.Record(ctx, r.Client, b, func(o client.Object) { mutate(&o.(*storagev1alpha1.Bucket).Status) }); err != nil {
		return err
	}
	mutate(p.stored)
	return nil
}

// forgetCreation clears the record of a creation that made nothing this resource may touch.
func (r *BucketReconciler) forgetCreation(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) (ctrl.Result, error) {
	if err := r.record(ctx, b, p, func(s *storagev1alpha1.BucketStatus) { s.CreatingBucket = "" }); err != nil {
		return ctrl.Result{}, fmt.Errorf("clearing the record of creating bucket: %w", err)
	}
	return ctrl.Result{}, nil
}

func nameTaken(b *storagev1alpha1.Bucket, p *bucketPass) (ctrl.Result, error) {
	p.found = foundNameTaken
	return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("bucket name %q is taken", b.Spec.BucketName))
}

// syncACLAndPolicy runs syncACL and syncPolicy side by side: they touch different
// sub-resources, and every pass, a resync included, waits for both. Of two errors, the ACL's
// is returned.
func (r *BucketReconciler) syncACLAndPolicy(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool,
	desiredPolicy string) (*storagev1alpha1.ObservedACL, *runtime.RawExtension, error) {
	var (
		policy    *runtime.RawExtension
		policyErr error
		done      = make(chan struct{})
	)
	go func() {
		defer close(done)
		policy, policyErr = r.syncPolicy(ctx, b, store, applied, desiredPolicy)
	}()
	acl, aclErr := r.syncACL(ctx, b, store, applied)
	<-done
	if aclErr != nil {
		return nil, nil, aclErr
	}
	return acl, policy, policyErr
}

// syncACL writes the spec's ACL when the bucket's differs, and returns the ACL as observed.
func (r *BucketReconciler) syncACL(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool) (*storagev1alpha1.ObservedACL, error) {
	name := b.Spec.BucketName
	observed, err := store.ACL(ctx, name)
	if err != nil {
		return nil, err
	}
	desired := objectstore.DesiredACL(observed.Owner, string(b.Spec.CannedACL), specGrants(&b.Spec))
	if desired.Equal(observed) || (applied && observedACLEqual(b.Status.ACL, observed)) {
		return toObservedACL(observed), nil
	}
	if err := store.PutACL(ctx, name, desired); err != nil {
		return nil, err
	}
	r.recordWrite(b, applied, "ACL", "Set the ACL of bucket %s to its spec (%d grants)", name, len(desired.Grants))
	if observed, err = store.ACL(ctx, name); err != nil {
		return nil, err
	}
	return toObservedACL(observed), nil
}

// syncPolicy writes or deletes the bucket policy when it differs from the spec, and returns the
// policy as observed, in canonical form.
func (r *BucketReconciler) syncPolicy(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, applied bool,
	desired string) (*runtime.RawExtension, error) {
	name := b.Spec.BucketName
	observed, err := store.Policy(ctx, name)
	if err != nil {
		return nil, err
	}
	// The statements generated for BucketAccesses change without the spec: they count as
	// applied only when the policy last observed carries exactly the ones wanted now.
	applied = applied && objectstore.GeneratedStatements(rawString(b.Status.Policy)) == objectstore.GeneratedStatements(desired)
	if samePolicy(desired, observed) || (applied && samePolicy(rawString(b.Status.Policy), observed)) {
		if samePolicy(rawString(b.Status.Policy), observed) {
			// Already recorded: the API server may have re-encoded numbers in it, which must not
			// count as a change of status.
			return b.Status.Policy, nil
		}
		return canonicalRaw(observed), nil
	}
	if desired == "" {
		if err := store.DeletePolicy(ctx, name); err != nil {
			return nil, err
		}
		r.recordWrite(b, applied, "Policy", "Deleted the policy of bucket %s, which its spec no longer has", name)
		return nil, nil
	}
	if err := store.PutPolicy(ctx, name, desired); err != nil {
		return nil, err
	}
	r.recordWrite(b, applied, "Policy", "Set the policy of bucket %s to its spec", name)
	if observed, err = store.Policy(ctx, name); err != nil {
		return nil, err
	}
	return canonicalRaw(observed), nil
}

// recordWrite emits the event for a write: an update when the spec changed, a correction of
// drift when the spec had been applied and someone changed the bucket since.
func (r *BucketReconciler) recordWrite(b *storagev1alpha1.Bucket, applied bool, what, format string, args ...any) {
	if applied {
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, what+"DriftCorrected", "Update",
			"Changed outside the operator; restored. "+format, args...)
		return
	}
	r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, what+"Updated", "Update", format, args...)
}

// specApplied reports whether the current spec was applied by an earlier pass that ended Ready.
func (r *BucketReconciler) specApplied(b *storagev1alpha1.Bucket) bool {
	c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == b.Generation &&
		b.Status.BucketName == b.Spec.BucketName
}

func (r *BucketReconciler) reconcileDelete(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(b, Finalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.listUsers(ctx, b, p); err != nil {
		return ctrl.Result{}, err
	}
	if len(p.users) > 0 {
		return ctrl.Result{}, nil // the users' watch wakes this Bucket when they let go
	}
	// A creation whose end was never recorded (a lost answer, a failed tag, a crash) is
	// finished first, so the bucket is deleted or kept like any other, never leaked.
	if b.Status.BucketName == "" && b.Status.CreatingBucket != "" {
		if res, err := r.finishCreation(ctx, b, p); err != nil || !res.IsZero() {
			return res, err
		}
	}
	if b.Spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete && b.Status.BucketName != "" {
		if res, err := r.deleteBucket(ctx, b, p); err != nil || !res.IsZero() {
			return res, err
		}
	} else if b.Status.BucketName != "" {
		r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketRetained", "Delete",
			"Left bucket %s in place (bucketReclaimPolicy Retain)", b.Status.BucketName)
	}
	return ctrl.Result{}, status.SetFinalizer(ctx, r.Client, b, Finalizer, false)
}

// finishCreation settles, during deletion, a bucket this resource recorded creating but never
// recorded as made: if it exists and is this resource's (tagged for it, or untagged), it is
// tagged and recorded, so deletion deletes or keeps it; the record is dropped only when the
// server shows that nothing this resource may touch was made. Anything it cannot tell yet
// blocks the deletion and says why.
func (r *BucketReconciler) finishCreation(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) (ctrl.Result, error) {
	name := b.Status.CreatingBucket
	contract := &storagev1alpha1.Contract{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	switch {
	case apierrors.IsNotFound(err):
		// Nothing is left to look with (a Contract waits for its Buckets, so it was forced).
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "BucketMayRemain", "Delete",
			"Bucket %s may have been created; Contract %s is gone, so it cannot be checked or deleted", name, b.Spec.ContractName)
		return r.forgetCreation(ctx, b, p)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Contract %q: %w", b.Spec.ContractName, err)
	case contract.Status.State == string(contractapi.Cancelled):
		return r.forgetCreation(ctx, b, p) // the account went with its buckets
	}
	store, _, err := r.connect(ctx, b, p)
	if store == nil {
		if err == nil {
			p.holdsUp = fmt.Sprintf("Bucket %s may have been created and cannot be checked yet", name)
			return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
		}
		return ctrl.Result{}, err
	}
	switch err := store.HeadBucket(ctx, name); {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return r.forgetCreation(ctx, b, p) // never made
	case errors.Is(err, objectstore.ErrAccessDenied):
		// A HEAD has no body: only the account's own list tells "not ours" from "ours, denied".
		names, listErr := store.BucketNames(ctx)
		if listErr != nil {
			return r.creationUnsettled(b, p, listErr)
		}
		if !slices.Contains(names, name) {
			return r.forgetCreation(ctx, b, p)
		}
	case err != nil:
		return r.creationUnsettled(b, p, err)
	}
	res, err := r.claim(ctx, b, p, store)
	switch {
	case errors.Is(err, errTaggedForAnother):
		return r.forgetCreation(ctx, b, p) // someone else's: left alone
	case err != nil:
		return r.creationUnsettled(b, p, err)
	}
	return res, nil
}

// creationUnsettled keeps a deletion waiting while whether its bucket was made cannot be told:
// retried with backoff when the server may answer later, blocked with the reason otherwise.
func (r *BucketReconciler) creationUnsettled(b *storagev1alpha1.Bucket, p *bucketPass, err error) (ctrl.Result, error) {
	res, err := r.s3Failed(b, p, err)
	if !errors.Is(err, reconcile.TerminalError(nil)) {
		return res, err
	}
	p.holdsUp = fmt.Sprintf("Bucket %s may have been created for this resource and cannot be checked", b.Status.CreatingBucket)
	return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
}

// listUsers records in the pass who uses the Bucket, one entry per kind, and the lifecycle
// rules they ask for.
func (r *BucketReconciler) listUsers(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) error {
	for _, u := range r.Users {
		names, err := u.List(ctx, r.Client, b.Namespace, b.Name)
		if err != nil {
			return err
		}
		if u.LifecycleRules != nil && len(names) > 0 {
			rules, err := u.LifecycleRules(ctx, r.Client, b.Namespace, b.Name)
			if err != nil {
				return err
			}
			p.generatedRules = append(p.generatedRules, rules...)
		}
		if u.PolicyGrants != nil && len(names) > 0 {
			grants, err := u.PolicyGrants(ctx, r.Client, b.Namespace, b.Name)
			if err != nil {
				return err
			}
			p.grants = append(p.grants, grants...)
		}
		if len(names) > 0 {
			p.users = append(p.users, fmt.Sprintf("%s: %s", plural(len(names), u.Kind), strings.Join(names, ", ")))
		}
	}
	p.usersListed = len(r.Users) > 0
	return nil
}

// deleteBucket deletes an empty bucket. A zero result and nil error mean it is gone. A bucket
// with objects is never emptied: deletion waits, and DeletionBlocked says why and what to do.
func (r *BucketReconciler) deleteBucket(ctx context.Context, b *storagev1alpha1.Bucket, p *bucketPass) (ctrl.Result, error) {
	name := b.Status.BucketName
	contract := &storagev1alpha1.Contract{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	if err == nil && contract.Status.State == string(contractapi.Cancelled) {
		// A cancelled account has no buckets left: there is nothing to delete, and no working
		// key to delete it with.
		r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketGone", "Delete",
			"Bucket %s went with cancelled contract %s", name, contract.Status.ContractID)
		return ctrl.Result{}, nil
	}
	store, _, err := r.connect(ctx, b, p)
	if store == nil {
		if err == nil {
			p.holdsUp = fmt.Sprintf("Bucket %s cannot be deleted yet", name)
		}
		return ctrl.Result{}, err
	}
	// Only a bucket tagged for this resource is ever deleted by it.
	tags, err := store.BucketTags(ctx, name)
	switch {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return ctrl.Result{}, nil
	case errors.Is(err, objectstore.ErrAccessDenied):
		return r.deletionDenied(p, err)
	case err != nil:
		return r.s3Failed(b, p, err)
	case tags[OwnerTag] != ownerTagValue(b):
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "BucketRetained", "Delete",
			"Left bucket %s in place: it is tagged for %q, not for this resource", name, tags[OwnerTag])
		return ctrl.Result{}, nil
	}
	logf.FromContext(ctx).V(1).Info("Deleting bucket", "bucket", name)
	err = store.DeleteBucket(ctx, name)
	switch {
	case err == nil, errors.Is(err, objectstore.ErrNoSuchBucket):
		r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketDeleted", "Delete",
			"Deleted bucket %s (bucketReclaimPolicy Delete)", name)
		return ctrl.Result{}, nil
	case errors.Is(err, objectstore.ErrBucketNotEmpty):
		n, more, countErr := store.CountObjects(ctx, name, 1000)
		if countErr != nil {
			return r.s3Failed(b, p, countErr)
		}
		p.found, p.objects = foundNotEmpty, plural(n, "object")
		if more {
			p.objects = "more than " + p.objects
		}
		return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
	case errors.Is(err, objectstore.ErrAccessDenied):
		return r.deletionDenied(p, err)
	default:
		return r.s3Failed(b, p, err)
	}
}

// deletionDenied blocks a deletion the bucket's policy denies its own account.
func (r *BucketReconciler) deletionDenied(p *bucketPass, err error) (ctrl.Result, error) {
	p.found, p.err = foundDeletionDenied, err
	return ctrl.Result{RequeueAfter: waitingRetry(r.ResyncPeriod)}, nil
}

// deniedByPolicy records that the server denied the account a request on its own bucket: a
// bucket policy (the spec's, or one set behind the operator's back) locks the owner out.
func deniedByPolicy(p *bucketPass, err error) (ctrl.Result, error) {
	p.found, p.err = foundDeniedByPolicy, err
	return ctrl.Result{}, reconcile.TerminalError(err)
}

// s3Failed records a failed S3 call. Transient failures are retried with backoff; a refusal
// waits for the spec to change.
func (r *BucketReconciler) s3Failed(b *storagev1alpha1.Bucket, p *bucketPass, err error) (ctrl.Result, error) {
	if errors.Is(err, objectstore.ErrAccessDenied) && b.Status.BucketName == b.Spec.BucketName {
		return deniedByPolicy(p, err) // a bucket this resource owns
	}
	p.found, p.err = foundS3Failed, err
	if objectstore.IsTransient(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, reconcile.TerminalError(err)
}

// SetupWithManager registers the controller. A Bucket wakes when its spec changes, when its
// Contract or the Contract's Secret changes, and every ResyncPeriod.
func (r *BucketReconciler) SetupWithManager(mgr ctrl.Manager) error {
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
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles)}).
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

// ownerTagValue is "<namespace>/<name>", or, when that is longer than the 256 characters S3
// allows in a tag value, a digest of it: the same resource always gets the same value, so a
// Bucket applied again after Retain still finds its bucket.
func ownerTagValue(b *storagev1alpha1.Bucket) string {
	v := b.Namespace + "/" + b.Name
	if len(v) <= maxTagValue {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// maxTagValue is the longest tag value S3 accepts.
const maxTagValue = 256

// otherClaimant names another Bucket in the namespace, of the same Contract and bucket name, that
// has already taken the bucket (made, adopted or being created), or "" when there is none.
//
// The record another pass wrote a moment ago decides, so it is read from the API server, not
// the cache; but only when the cache shows such a Bucket at all. Any Bucket whose pass took the
// name before this one is in the cache already: it was there before its own pass ran, and that
// pass let go of r.names before this one got it (a Bucket of an earlier process was in the
// cache's first list). Most Buckets have no namesake, and a burst of N new ones then costs no
// API reads, where a read each would cost the API server O(N) filtering each, O(N²) in all.
func (r *BucketReconciler) otherClaimant(ctx context.Context, b *storagev1alpha1.Bucket) (string, error) {
	cached, err := index.BucketsNamingBucket(ctx, r.Client, b.Namespace, b.Spec.BucketName)
	if err != nil || !slices.ContainsFunc(cached, func(o storagev1alpha1.Bucket) bool { return namesake(b, &o) }) {
		return "", err
	}
	list, err := index.BucketsNamingBucketUncached(ctx, r.APIReader, b.Namespace, b.Spec.BucketName)
	if err != nil {
		return "", err
	}
	for _, o := range list {
		if namesake(b, &o) && (o.Status.BucketName == b.Spec.BucketName || o.Status.CreatingBucket == b.Spec.BucketName) {
			return o.Name, nil
		}
	}
	return "", nil
}

// namesake says whether o is another Bucket naming the same bucket of the same Contract as b.
func namesake(b, o *storagev1alpha1.Bucket) bool {
	return o.UID != b.UID && o.Spec.ContractName == b.Spec.ContractName && o.Spec.BucketName == b.Spec.BucketName
}
