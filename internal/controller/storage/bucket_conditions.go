package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/engine/status"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// bucketFound is what a pass of the Bucket reconciler found; conclude derives every condition
// from it, once, at the end of the pass.
type bucketFound struct {
	// ready decides Ready; nil leaves it as it was (the pass stopped on an API server error,
	// or a deletion went ahead).
	ready bucketFinding
	// users are who use the Bucket, when the pass listed them (nil: no kind of user is
	// configured, or the pass did not get that far).
	users *bucketUsers
	// made is the event of the bucket the pass adopted.
	made *bucketEvent
	// holdsUp, during deletion, says what ready holds up ("Bucket x cannot be deleted yet"):
	// the deletion is blocked until it changes, not merely retried.
	holdsUp string
	// inSync decides an Observe Bucket's InSync; nil leaves it as it was.
	inSync *engine.Condition
	// usage decides QuotaNearlyFull; nil leaves it as it was.
	usage usageFinding
}

// end is how a pass that found f ends.
func (f bucketFound) end(ready bucketFinding, after time.Duration, err error) bucketOutcome {
	f.ready = ready
	return bucketOutcome{Found: f, After: after, Err: err}
}

// bucketEvent is an event's reason, action and message.
type bucketEvent struct{ reason, action, message string }

// A bucketFinding is one thing a pass can find that decides the Bucket's Ready.
type bucketFinding interface {
	ready(b *storagev1alpha1.Bucket) *engine.Condition
}

// blocker is a finding that blocks a deletion until the user acts, rather than delaying it.
type blocker interface{ blocksDeletion() }

type (
	// bucketAvailable: the bucket exists with the settings of the spec.
	bucketAvailable  struct{}
	contractMissing  struct{}
	contractNotReady struct{ why string }
	// noCredentials: the Contract's Secret holds no key pair yet.
	noCredentials struct{ secret string }
	// contractDeleting: no bucket is made for a Contract being deleted.
	contractDeleting struct{}
	// nameHeld: another Bucket of this namespace holds the bucket name.
	nameHeld struct{ other string }
	// taggedForAnother: the bucket exists in the account, tagged for another resource.
	taggedForAnother struct{ tag string }
	// nameOwnedElsewhere: another account owns the bucket name.
	nameOwnedElsewhere struct{}
	// policyDenies: the server denied the account a request on its own bucket.
	policyDenies struct{ err error }
	// deletionDenied: the server denied the account the deletion of its own bucket.
	deletionDenied struct{ err error }
	// s3Failed: an S3 call failed, transiently or by a refusal.
	s3Failed struct{ err error }
	// notEmpty: the bucket to delete still holds objects ("3 objects").
	notEmpty struct{ objects string }
	// tooManyObjects: the bucket to empty holds more versions than its cap; nothing was removed.
	tooManyObjects struct{ limit, removed int64 }
	// objectsLocked: object lock keeps versions of the bucket being emptied; held says what
	// keeps one of them.
	objectsLocked struct {
		locked int64
		held   string
	}
	// emptying: the bucket is being emptied, and the next pass goes on.
	emptying struct{}
	// settingsUnsupported: the server does not implement settings the spec asks for; made
	// says the bucket exists with the rest of the spec applied.
	settingsUnsupported struct {
		failed []bucketsettings.Failure
		made   bool
	}
	// objectLockNotEnabled: the spec asks for object lock, and the bucket was made without it.
	objectLockNotEnabled struct{}
	// loggingTargetClaimed: the logging target is a COSI bucket or another namespace's.
	loggingTargetClaimed struct{ err error }
	// claimedElsewhere: the bucket carries a tag of the operator's that is not a Bucket's (a COSI
	// bucket's), so it is never adopted (nor, by an Observe Bucket, read); tag is "key=value".
	claimedElsewhere struct {
		tag      string
		observed bool
	}
)

func (deletionDenied) blocksDeletion() {}
func (notEmpty) blocksDeletion()       {}
func (tooManyObjects) blocksDeletion() {}
func (objectsLocked) blocksDeletion()  {}

func (bucketAvailable) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.True(storagev1alpha1.ReasonAvailable, fmt.Sprintf("Bucket %s exists with the ACL and policy of its spec", b.Spec.BucketName))
}

func (contractMissing) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractNotFound,
		fmt.Sprintf("Contract %s does not exist in namespace %s", b.Spec.ContractName, b.Namespace))
}

func (f contractNotReady) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractNotReady, fmt.Sprintf("Contract %s is not Ready (%s)", b.Spec.ContractName, f.why))
}

func (f noCredentials) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractNotReady,
		fmt.Sprintf("Contract %s has no credentials in Secret %s yet", b.Spec.ContractName, f.secret))
}

func (contractDeleting) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractDeleting, fmt.Sprintf(
		"Contract %s is being deleted, so no bucket is created for it; it waits for this Bucket: delete this Bucket, or recreate it once a new Contract is Ready",
		b.Spec.ContractName))
}

func (f nameHeld) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketNameConflict, fmt.Sprintf(
		"Bucket %s in this namespace already manages bucket %s of Contract %s; exactly one may: choose another bucketName, or delete one of the two",
		f.other, b.Spec.BucketName, b.Spec.ContractName))
}

func (f taggedForAnother) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	if f.tag == "" {
		return engine.False(storagev1alpha1.ReasonBucketAlreadyExists, fmt.Sprintf(
			"Bucket %s already exists in the account of Contract %s and carries no %s tag: it was made outside the operator, "+
				"and is left alone: set spec.adopt to true to take it over (it is then tagged for this resource and managed), "+
				"or choose another bucketName", b.Spec.BucketName, b.Spec.ContractName, OwnerTag))
	}
	return engine.False(storagev1alpha1.ReasonBucketAlreadyExists, fmt.Sprintf(
		"Bucket %s already exists in the account of Contract %s but was not made for this resource "+
			"(its %s tag is %q, not %q); it is left alone: choose another bucketName",
		b.Spec.BucketName, b.Spec.ContractName, OwnerTag, f.tag, ownerTagValue(b)))
}

func (nameOwnedElsewhere) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketNameTaken, fmt.Sprintf(
		"Another account owns a bucket named %s; bucket names are global: choose another bucketName", b.Spec.BucketName))
}

func (f policyDenies) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonAccessDeniedByPolicy, fmt.Sprintf(
		"Bucket %s belongs to the account of Contract %s, but the server denies that account a request on it (%s): "+
			"a bucket policy that denies its owner (a Deny for every principal, or, on servers that judge the owner by the "+
			"policy alone, one that does not allow it) locks the operator out; change spec.policy, "+
			"or ask the provider to remove the bucket's policy", b.Spec.BucketName, b.Spec.ContractName, objectstore.Describe(f.err)))
}

func (f deletionDenied) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonAccessDeniedByPolicy, fmt.Sprintf(
		"Bucket %s cannot be deleted: the server denies its own account (%s), so its policy locks the owner out; "+
			"ask the provider to remove the bucket's policy, or set spec.bucketReclaimPolicy to Retain to keep the bucket",
		b.Status.BucketName, objectstore.Describe(f.err)))
}

func (f s3Failed) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	switch {
	case errors.Is(f.err, egress.ErrNotAllowed):
		return engine.False(storagev1alpha1.ReasonEndpointNotAllowed, fmt.Sprintf(
			"%s: the platform decides which endpoints the operator calls for a tenant (the manager's --%s); Contract %s's endpoint is not among them",
			objectstore.Describe(f.err), egress.EndpointsFlag, b.Spec.ContractName))
	case egress.Refused(f.err) || errors.Is(f.err, objectstore.ErrNotAnAnswer):
		return engine.False(storagev1alpha1.ReasonAnswerRefused, fmt.Sprintf(
			"The S3 endpoint %s answered with what the operator does not accept (%s); nothing of it is kept, and it is asked again after the resync period",
			b.Status.Endpoint, objectstore.Describe(f.err)))
	}
	if objectstore.IsTransient(f.err) {
		return engine.False(storagev1alpha1.ReasonS3Unavailable,
			fmt.Sprintf("The S3 endpoint %s failed: %s; retrying", b.Status.Endpoint, objectstore.Describe(f.err)))
	}
	return engine.False(storagev1alpha1.ReasonS3Rejected,
		fmt.Sprintf("The S3 endpoint %s refused a request the spec needs: %s", b.Status.Endpoint, objectstore.Describe(f.err)))
}

func (f notEmpty) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketNotEmpty, fmt.Sprintf(
		"Bucket %s still holds %s and is not emptied without spec.deletion.emptyOnDelete: delete its objects, "+
			"or set spec.bucketReclaimPolicy to Retain to keep the bucket", b.Status.BucketName, f.objects))
}

func (f tooManyObjects) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	removed := "nothing was removed"
	if f.removed > 0 {
		removed = fmt.Sprintf("%d were removed before more were written, and nothing more is", f.removed)
	}
	return engine.False(storagev1alpha1.ReasonTooManyObjects, fmt.Sprintf(
		"Bucket %s holds more than %d object versions and delete markers, the most spec.deletion.maxObjects lets its deletion remove; "+
			"%s: delete objects yourself, raise spec.deletion.maxObjects (at most %d), "+
			"or set spec.bucketReclaimPolicy to Retain to keep the bucket", b.Status.BucketName, f.limit, removed, storagev1alpha1.MaxObjectsToEmpty))
}

func (f objectsLocked) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonObjectsLocked, fmt.Sprintf(
		"Bucket %s still holds %s that object lock keeps, such as %s; the emptying never bypasses retention or legal hold, "+
			"and tries again every resync period: wait for the retention to end, remove the legal hold, "+
			"or set spec.bucketReclaimPolicy to Retain to keep the bucket", b.Status.BucketName, plural(int(f.locked), "object version"), f.held))
}

func (emptying) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	e := b.Status.Emptying
	if e == nil {
		return engine.False(storagev1alpha1.ReasonEmptying, fmt.Sprintf("Bucket %s is being emptied for its deletion", b.Status.BucketName))
	}
	return engine.False(storagev1alpha1.ReasonEmptying, fmt.Sprintf(
		"Bucket %s is being emptied for its deletion (spec.deletion.emptyOnDelete): %d of the %d object versions and delete markers counted are removed",
		b.Status.BucketName, e.RemovedVersions+e.RemovedDeleteMarkers, e.Counted))
}

func (f settingsUnsupported) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	missing := make([]string, 0, len(f.failed))
	for _, u := range f.failed {
		missing = append(missing, fmt.Sprintf("%s (spec.%s: %s)", u.Info.Title, u.Info.Field, objectstore.Describe(u.Err)))
	}
	outcome := "the rest of the spec is applied"
	if !f.made {
		outcome = "so the bucket was not created"
	}
	return engine.False(f.failed[0].Info.Unsupported, fmt.Sprintf(
		"The S3 endpoint %s does not implement %s; %s: remove those fields, "+
			"or use a provider that implements them (asked again every resync period)",
		b.Status.Endpoint, strings.Join(missing, ", nor "), outcome))
}

func (f loggingTargetClaimed) ready(*storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonLoggingTargetNotAllowed, fmt.Sprintf(
		"spec.logging.targetBucket: %s: access logs go only to a bucket of a Bucket of this namespace, or to one the operator never "+
			"claimed; choose another target", f.err))
}

func (f claimedElsewhere) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	if f.observed {
		return engine.False(storagev1alpha1.ReasonBucketAlreadyExists, fmt.Sprintf(
			"Bucket %s carries the operator's tag %s: it is another resource's (a Bucket's, or a COSI bucket), and an Observe Bucket "+
				"reads only a bucket that is its own or no one's; nothing was read", b.Spec.BucketName, f.tag))
	}
	return engine.False(storagev1alpha1.ReasonBucketAlreadyExists, fmt.Sprintf(
		"Bucket %s already exists in the account of Contract %s and carries the operator's tag %s: it is someone else's "+
			"(a COSI bucket, with its grants to other namespaces), never adopted whatever spec.adopt says; it is left alone: "+
			"choose another bucketName", b.Spec.BucketName, b.Spec.ContractName, f.tag))
}

func (objectLockNotEnabled) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonObjectLockNotEnabled, fmt.Sprintf(
		"Bucket %s has no object lock: S3 turns it on only when a bucket is created, and this one was created without it "+
			"(it was adopted, or the server ignored the request); the rest of the spec is applied: "+
			"to get a locked bucket, create a Bucket with another bucketName", b.Spec.BucketName))
}

// conclude sets the Bucket's conditions from what the pass found, with an event when the pass
// adopted the bucket, when Ready's reason changes (unless to True in a pass that adopted the
// bucket, which that event already says, or to a new Bucket's first Ready), or when a deletion
// becomes blocked.
func (k bucketKind) conclude(b *storagev1alpha1.Bucket, f bucketFound) {
	if f.made != nil {
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, f.made.reason, f.made.action, "%s", f.made.message)
	}
	ready, inUse, blocked := bucketConditions(b, f)
	k.setInSync(b, f.inSync)
	k.concludeUsage(b, f.usage)
	if inUse != nil {
		engine.Set(&b.Status.Conditions, b.Generation, storagev1alpha1.InUseCondition, *inUse)
	}
	if blocked != nil {
		wasBlocked := meta.IsStatusConditionTrue(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
		oldReason := status.Reason(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
		engine.Set(&b.Status.Conditions, b.Generation, storagev1alpha1.DeletionBlockedCondition, *blocked)
		if !wasBlocked || oldReason != blocked.Reason {
			k.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "DeletionBlocked", "Delete", "%s", blocked.Message)
		}
	}
	if ready == nil {
		return
	}
	b.Status.ObservedGeneration = b.Generation
	if f.made != nil && ready.Status == metav1.ConditionTrue {
		// The event of the bucket adopted says it all: one event, not two.
		engine.Set(&b.Status.Conditions, b.Generation, storagev1alpha1.ReadyCondition, *ready)
		return
	}
	engine.SetReady(k.Recorder, b, &b.Status.Conditions, b.Generation, *ready)
}

// bucketConditions derives the Bucket's conditions from what a pass found. A nil condition is
// left as it was.
func bucketConditions(b *storagev1alpha1.Bucket, f bucketFound) (ready, inUse, deletionBlocked *engine.Condition) {
	if f.users != nil {
		inUse = engine.False(storagev1alpha1.ReasonNotInUse, "Nothing uses this Bucket")
		if f.users.inUse() {
			inUse = engine.True(storagev1alpha1.ReasonInUse, "Used by "+strings.Join(f.users.names, "; "))
		}
	}
	if f.ready != nil {
		ready = f.ready.ready(b)
	}
	if b.DeletionTimestamp.IsZero() {
		return ready, inUse, nil
	}
	_, blocks := f.ready.(blocker)
	switch {
	case f.users.inUse():
		// The users' watch wakes the Bucket when they let go: waiting is not being blocked.
		return engine.False(storagev1alpha1.ReasonDeleting, "Deletion waits until nothing uses this Bucket (see the InUse condition)"), inUse, nil
	case ready != nil && (blocks || f.holdsUp != ""):
		blocked := engine.True(ready.Reason, ready.Message)
		if f.holdsUp != "" {
			blocked.Message = f.holdsUp + ": " + ready.Message
		}
		return engine.False(storagev1alpha1.ReasonDeleting, "Deletion is blocked (see DeletionBlocked)"), inUse, blocked
	}
	return ready, inUse, nil
}

// providerFailed: a contract API call the pass needed (a quota) failed; said as a Contract's
// failed call is.
type providerFailed apiFailed

func (f providerFailed) ready(*storagev1alpha1.Bucket) *engine.Condition {
	return apiFailed(f).ready(nil)
}

// A usageFinding is what a pass learnt of what its bucket holds; it decides QuotaNearlyFull
// while the spec sets a quota.
type usageFinding interface {
	nearlyFull(b *storagev1alpha1.Bucket) *engine.Condition
}

type (
	// usageKnown: the provider told; status.usage shows it.
	usageKnown struct{}
	// usageUnsupported: the provider cannot tell, for the reason why.
	usageUnsupported struct{ why string }
)

func (usageKnown) nearlyFull(b *storagev1alpha1.Bucket) *engine.Condition {
	spec, u := b.Spec.Quota, b.Status.Usage
	percent := spec.NearlyFullPercent
	if percent == 0 {
		percent = storagev1alpha1.DefaultNearlyFullPercent
	}
	q := bucketsettings.WantedQuota(spec)
	held := fmt.Sprintf("Bucket %s holds %s in %s, against a quota of %s", b.Spec.BucketName, u.Size,
		plural(int(u.Objects), "object"), bucketsettings.DescribeQuota(q))
	if fill := quotaFill(u.Bytes, u.Objects, q); fill >= float64(percent) {
		return engine.True(storagev1alpha1.ReasonQuotaNearlyFull, fmt.Sprintf(
			"%s: %.0f%% full, past the %d%% of spec.quota.nearlyFullPercent; the provider refuses writes past the quota: "+
				"delete objects, or raise spec.quota", held, fill, percent))
	}
	return engine.False(storagev1alpha1.ReasonBelowThreshold, fmt.Sprintf("%s: below %d%%", held, percent))
}

// quotaFill is how full a quota is, in percent of the limit nearest to being reached.
func quotaFill(bytes, objects int64, q storagev1alpha1.ObservedQuota) float64 {
	var fill float64
	if q.MaxSizeBytes > 0 {
		fill = max(fill, float64(bytes)*100/float64(q.MaxSizeBytes))
	}
	if q.MaxObjects > 0 {
		fill = max(fill, float64(objects)*100/float64(q.MaxObjects))
	}
	return fill
}

func (f usageUnsupported) nearlyFull(b *storagev1alpha1.Bucket) *engine.Condition {
	return &engine.Condition{Status: metav1.ConditionUnknown, Reason: storagev1alpha1.ReasonUsageUnsupported, Message: fmt.Sprintf(
		"How full bucket %s is cannot be known: %s, so status.usage stays empty", b.Spec.BucketName, f.why)}
}

// concludeUsage sets QuotaNearlyFull from what the pass learnt of the bucket's usage, with a
// warning event when it turns True; without a quota in the spec the condition goes.
func (k bucketKind) concludeUsage(b *storagev1alpha1.Bucket, f usageFinding) {
	if b.Spec.Quota == nil {
		meta.RemoveStatusCondition(&b.Status.Conditions, storagev1alpha1.QuotaNearlyFullCondition)
		return
	}
	if f == nil {
		return
	}
	engine.SetAnnounced(k.Recorder, b, &b.Status.Conditions, b.Generation, storagev1alpha1.QuotaNearlyFullCondition,
		*f.nearlyFull(b), func(c engine.Condition) string {
			if c.Status == metav1.ConditionTrue {
				return corev1.EventTypeWarning
			}
			return ""
		})
}
