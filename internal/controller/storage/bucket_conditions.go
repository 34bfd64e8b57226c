package storage

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// bucketFinding is what ended a pass of the Bucket reconciler: Ready, or what stopped it short.
type bucketFinding int

const (
	// foundNothing: the pass learned nothing that changes Ready (it stopped on an API server
	// error, or a deletion went ahead): Ready stays as it was.
	foundNothing bucketFinding = iota
	// foundAvailable: the bucket exists with the ACL and policy of the spec.
	foundAvailable
	foundContractMissing
	// foundContractNotReady: the Contract has no usable status; why says what its Ready says.
	foundContractNotReady
	// foundNoCredentials: the Contract's Secret (secret) holds no key pair yet.
	foundNoCredentials
	// foundContractDeleting: no bucket is made for a Contract being deleted.
	foundContractDeleting
	// foundNameHeld: another Bucket (other) of this namespace holds the bucket name.
	foundNameHeld
	// foundTaggedForAnother: the bucket exists in the account, tagged (tag) for another resource.
	foundTaggedForAnother
	// foundNameTaken: another account owns the bucket name.
	foundNameTaken
	// foundDeniedByPolicy: the server denied the account a request (err) on its own bucket.
	foundDeniedByPolicy
	// foundDeletionDenied: the server denied the account the deletion (err) of its own bucket.
	foundDeletionDenied
	// foundS3Failed: an S3 call failed (err), transiently or by a refusal.
	foundS3Failed
	// foundNotEmpty: the bucket to delete still holds objects (a count, "3 objects").
	foundNotEmpty
	// foundUnsupported: the server does not implement features the spec asks for
	// (unsupported); the rest of the spec is applied.
	foundUnsupported
	// foundObjectLockNotEnabled: the spec asks for object lock, and the bucket was created
	// without it.
	foundObjectLockNotEnabled
)

// unsupportedFeature is a feature of the spec (its field) the server answered 501 (err).
type unsupportedFeature struct {
	field, reason string
	err           error
}

// featureNames say in a condition message what each spec field is.
var featureNames = map[string]string{
	"versioning": "bucket versioning",
	"objectLock": "object lock",
	"lifecycle":  "lifecycle rules",
	"cors":       "CORS rules",
}

// bucketPass is what one pass of the Bucket reconciler found. The reconciler records findings as
// it goes; bucketConditions derives every condition from them, once, at the end of the pass.
type bucketPass struct {
	found   bucketFinding
	why     string
	secret  string
	other   string
	tag     string
	objects string
	err     error

	// unsupported lists the features the server does not implement, in the order tried;
	// lockMissing says the bucket lacks the object lock the spec asks for.
	unsupported []unsupportedFeature
	lockMissing bool

	// generatedRules are the lifecycle rules the Bucket's users ask for (see
	// BucketUsers.LifecycleRules).
	generatedRules []storagev1alpha1.LifecycleRule
	// grants are what BucketAccesses are granted in the policy (see BucketUsers.PolicyGrants).
	grants []objectstore.AccessGrant

	// usersListed says the users of the Bucket were listed (InUse is derived only then);
	// users lists them, one entry per kind ("2 Applications: a, b").
	usersListed bool
	users       []string
	// holdsUp, during deletion, says what the finding holds up ("Bucket x cannot be deleted
	// yet"): the deletion is blocked until it changes, not merely retried.
	holdsUp string

	// made is the event of the bucket the pass made or adopted, emitted when the pass ends
	// (BucketReconciler.setConditions).
	made *bucketEvent

	// stored is the status as the API server holds it, as far as the pass knows: the snapshot
	// taken when it began, with the records it wrote since (BucketReconciler.record). The
	// end-of-pass write sends what differs from it.
	stored *storagev1alpha1.BucketStatus
}

// bucketEvent is an event's reason, action and message.
type bucketEvent struct{ reason, action, message string }

// recordMade records that bucket name is this resource's, and clears the record of its
// creation, both in the end-of-pass write rather than in a write of their own: intent is
// recorded before a call that creates or destroys something, and this records a result. Should
// the pass stop before its last write, the record of the creation is still there and the bucket
// is tagged for this resource: the next pass claims it (claim), and a deletion finishes the
// creation first (finishCreation). The record must not be left behind once the bucket is
// recorded, or a later untagged bucket of that name could be taken as this resource's: the
// snapshot is marked as holding it, so the end-of-pass write clears it even when this pass read
// the Bucket from a cache that had not seen it.
func (p *bucketPass) recordMade(b *storagev1alpha1.Bucket, name string) {
	b.Status.BucketName, b.Status.CreatingBucket = name, ""
	p.stored.CreatingBucket = name
}

// bucketConditions derives the Bucket's conditions from what a pass found. A nil condition is
// left as it was.
func bucketConditions(b *storagev1alpha1.Bucket, p *bucketPass) (ready, inUse, deletionBlocked *condition) {
	if p.usersListed {
		inUse = falseCondition(storagev1alpha1.ReasonNotInUse, "Nothing uses this Bucket")
		if len(p.users) > 0 {
			inUse = &condition{metav1.ConditionTrue, storagev1alpha1.ReasonInUse, "Used by " + strings.Join(p.users, "; ")}
		}
	}
	cause := bucketCause(b, p)
	if b.DeletionTimestamp.IsZero() {
		return cause, inUse, nil
	}
	blocks := p.holdsUp != "" || p.found == foundNotEmpty || p.found == foundDeletionDenied
	switch {
	case len(p.users) > 0:
		// The users' watch wakes the Bucket when they let go: waiting is not being blocked.
		return falseCondition(storagev1alpha1.ReasonDeleting,
			"Deletion waits until nothing uses this Bucket (see the InUse condition)"), inUse, nil
	case cause != nil && blocks:
		blocked := &condition{metav1.ConditionTrue, cause.Reason, cause.Message}
		if p.holdsUp != "" {
			blocked.Message = p.holdsUp + ": " + cause.Message
		}
		return falseCondition(storagev1alpha1.ReasonDeleting, "Deletion is blocked (see DeletionBlocked)"), inUse, blocked
	}
	return cause, inUse, nil
}

// bucketCause is the Ready condition for what the pass found, nil when it found nothing new.
func bucketCause(b *storagev1alpha1.Bucket, p *bucketPass) *condition {
	name, contract := b.Spec.BucketName, b.Spec.ContractName
	switch p.found {
	case foundNothing:
		return nil
	case foundAvailable:
		return &condition{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable,
			fmt.Sprintf("Bucket %s exists with the ACL and policy of its spec", name)}
	case foundContractMissing:
		return falseCondition(storagev1alpha1.ReasonContractNotFound,
			fmt.Sprintf("Contract %s does not exist in namespace %s", contract, b.Namespace))
	case foundContractNotReady:
		return falseCondition(storagev1alpha1.ReasonContractNotReady,
			fmt.Sprintf("Contract %s is not Ready (%s)", contract, p.why))
	case foundNoCredentials:
		return falseCondition(storagev1alpha1.ReasonContractNotReady,
			fmt.Sprintf("Contract %s has no credentials in Secret %s yet", contract, p.secret))
	case foundContractDeleting:
		return falseCondition(storagev1alpha1.ReasonContractDeleting, fmt.Sprintf(
			"Contract %s is being deleted, so no bucket is created for it; it waits for this Bucket: delete this Bucket, or recreate it once a new Contract is Ready",
			contract))
	case foundNameHeld:
		return falseCondition(storagev1alpha1.ReasonBucketNameConflict, fmt.Sprintf(
			"Bucket %s in this namespace already manages bucket %s of Contract %s; exactly one may: choose another bucketName, or delete one of the two",
			p.other, name, contract))
	case foundTaggedForAnother:
		return falseCondition(storagev1alpha1.ReasonBucketAlreadyExists, fmt.Sprintf(
			"Bucket %s already exists in the account of Contract %s but was not made for this resource "+
				"(its %s tag is %q, not %q); it is left alone: choose another bucketName",
			name, contract, OwnerTag, p.tag, ownerTagValue(b)))
	case foundNameTaken:
		return falseCondition(storagev1alpha1.ReasonBucketNameTaken, fmt.Sprintf(
			"Another account owns a bucket named %s; bucket names are global: choose another bucketName", name))
	case foundDeniedByPolicy:
		return falseCondition(storagev1alpha1.ReasonAccessDeniedByPolicy, fmt.Sprintf(
			"Bucket %s belongs to the account of Contract %s, but the server denies that account a request on it (%s): "+
				"a bucket policy that denies its owner (a Deny for every principal, or, on servers that judge the owner by the "+
				"policy alone, one that does not allow it) locks the operator out; change spec.policy, "+
				"or ask the provider to remove the bucket's policy", name, contract, objectstore.Describe(p.err)))
	case foundDeletionDenied:
		return falseCondition(storagev1alpha1.ReasonAccessDeniedByPolicy, fmt.Sprintf(
			"Bucket %s cannot be deleted: the server denies its own account (%s), so its policy locks the owner out; "+
				"ask the provider to remove the bucket's policy, or set spec.bucketReclaimPolicy to Retain to keep the bucket",
			b.Status.BucketName, objectstore.Describe(p.err)))
	case foundS3Failed:
		if objectstore.IsTransient(p.err) {
			return falseCondition(storagev1alpha1.ReasonS3Unavailable,
				fmt.Sprintf("The S3 endpoint %s failed: %s; retrying", b.Status.Endpoint, objectstore.Describe(p.err)))
		}
		return falseCondition(storagev1alpha1.ReasonS3Rejected,
			fmt.Sprintf("The S3 endpoint %s refused a request the spec needs: %s", b.Status.Endpoint, objectstore.Describe(p.err)))
	case foundUnsupported:
		var missing []string
		for _, u := range p.unsupported {
			missing = append(missing, fmt.Sprintf("%s (spec.%s: %s)", featureNames[u.field], u.field, objectstore.Describe(u.err)))
		}
		if len(missing) == 0 {
			return nil
		}
		outcome := "the rest of the spec is applied"
		if b.Status.BucketName != name {
			outcome = "so the bucket was not created"
		}
		return falseCondition(p.unsupported[0].reason, fmt.Sprintf(
			"The S3 endpoint %s does not implement %s; %s: remove those fields, "+
				"or use a provider that implements them (asked again every resync period)",
			b.Status.Endpoint, strings.Join(missing, ", nor "), outcome))
	case foundObjectLockNotEnabled:
		return falseCondition(storagev1alpha1.ReasonObjectLockNotEnabled, fmt.Sprintf(
			"Bucket %s has no object lock: S3 turns it on only when a bucket is created, and this one was created without it "+
				"(it was adopted, or the server ignored the request); the rest of the spec is applied: "+
				"to get a locked bucket, create a Bucket with another bucketName", name))
	case foundNotEmpty:
		return falseCondition(storagev1alpha1.ReasonBucketNotEmpty, fmt.Sprintf(
			"Bucket %s still holds %s and is never emptied automatically: delete its objects, "+
				"or set spec.bucketReclaimPolicy to Retain to keep the bucket", b.Status.BucketName, p.objects))
	}
	return nil
}
