package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// OwnerTag marks a bucket with the Bucket resource it was created for, "<namespace>/<name>". A
// bucket that already exists is adopted only when it carries this resource's tag, so a Bucket
// deleted with Retain and applied again gets its bucket back, and nothing else does.
const OwnerTag = storagev1alpha1.BucketOwnerTag

// OwnerUIDTag records the UID of the resource that made or last adopted the bucket, which tells
// a genuine adoption from a pass that read its own resource from a cache a step behind.
const OwnerUIDTag = storagev1alpha1.BucketOwnerUIDTag

// errTaggedForAnother: the bucket exists in the account and is tagged for another resource.
var errTaggedForAnother = errors.New("exists and is tagged for another resource")

// ensureBucket makes sure the bucket exists and is this resource's; done says the pass ends
// with out, because it is not (yet). A bucket adopted is announced in found.made; one made is
// announced by nothing but Ready, as every resource that simply works.
func (k bucketKind) ensureBucket(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found *bucketFound) (bucketOutcome, bool) {
	name := b.Spec.BucketName
	if b.Status.BucketName == name {
		// Made or adopted by an earlier pass; the settings' reads notice if it has vanished.
		return bucketOutcome{}, false
	}
	unlock := k.names.Lock(b.Namespace + "/" + b.Spec.ContractName + "/" + name)
	defer unlock()
	if other, err := k.otherClaimant(ctx, b); err != nil || other != "" {
		if err != nil {
			return found.end(nil, 0, err), true
		}
		logf.FromContext(ctx).V(1).Info("Another Bucket holds the bucket name", "bucket", name, "holder", other)
		// Nothing this Bucket watches says when the other lets go.
		return found.end(nameHeld{other}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	}
	if store.CreateTells() {
		// The server refuses to create a bucket this account has, and keeps the owner's tags
		// given at creation: CreateBucket itself says whether the bucket exists and is ours.
		return k.createBucket(ctx, b, p, store, found)
	}
	// Look before creating: Ceph RGW answers 200 to a CreateBucket of a bucket that exists.
	err := store.HeadBucket(ctx, name)
	switch {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return k.createBucket(ctx, b, p, store, found)
	case errors.Is(err, objectstore.ErrAccessDenied):
		// HEAD has no body, so a 403 may also mean these credentials work nowhere, or that a
		// policy denies the account its own bucket: only if the account can list its buckets,
		// and this one is not among them, is the name someone else's.
		return k.deniedOrTaken(ctx, b, store, *found, err)
	case err != nil:
		return k.s3Failed(b, *found, err), true
	}
	// The bucket exists and this account may use it.
	names, err := store.BucketNames(ctx)
	if err != nil {
		return k.s3Failed(b, *found, err), true
	}
	if !slices.Contains(names, name) {
		return nameTaken(b, *found), true
	}
	return k.claim(ctx, b, p, store, found, b.Status.CreatingBucket == name)
}

// deniedOrTaken tells, after a HEAD refused with 403, a policy that locks the account out of its
// own bucket from a name another account owns.
func (k bucketKind) deniedOrTaken(ctx context.Context, b *storagev1alpha1.Bucket, store objectstore.Store, found bucketFound, headErr error) (bucketOutcome, bool) {
	names, err := store.BucketNames(ctx)
	if err != nil {
		return k.s3Failed(b, found, err), true
	}
	if slices.Contains(names, b.Spec.BucketName) {
		return deniedByPolicy(found, headErr), true
	}
	return nameTaken(b, found), true
}

// claim takes a bucket that exists in the contract's account, but only if it is this resource's:
// tagged for it, or untagged and named in this resource's record of a creation it had not
// finished (recorded: a record older than the look that found the bucket), or untagged and
// adopted on purpose (spec.adopt). No one else's data is taken over by a name clash. Where the
// server keeps the tags given at creation, every bucket the operator made is tagged, so an
// untagged one is never an unfinished creation.
func (k bucketKind) claim(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found *bucketFound, recorded bool) (bucketOutcome, bool) {
	name := b.Spec.BucketName
	tags, err := store.BucketTags(ctx, name)
	switch {
	case errors.Is(err, objectstore.ErrAccessDenied):
		return deniedByPolicy(*found, err), true // the account's own bucket, locked by a policy
	case err != nil:
		return k.s3Failed(b, *found, err), true
	}
	if other := bucketsettings.ClaimOtherThan(tags, bucketTag); other != "" {
		// Not a Bucket's, but the operator's all the same (a COSI bucket, with other
		// namespaces' grants): never adopted, whatever spec.adopt says, nor taken as an
		// unfinished creation.
		return found.end(claimedElsewhere{tag: other}, 0,
			reconcile.TerminalError(fmt.Errorf("bucket %q %w (%s)", name, errTaggedForAnother, other))), true
	}
	unfinished := tags[OwnerTag] == "" && recorded && !store.CreateTells()
	// spec.adopt takes over a bucket made outside the operator: one no resource's tag claims.
	adopting := tags[OwnerTag] == "" && b.Spec.Adopt && !unfinished
	logf.FromContext(ctx).V(1).Info("Claiming an existing bucket", "bucket", name, "ownerTag", tags[OwnerTag], "unfinishedCreation", unfinished, "adopt", adopting)
	if tag := tags[OwnerTag]; tag != ownerTagValue(b) && !unfinished && !adopting {
		return found.end(taggedForAnother{tag}, 0,
			reconcile.TerminalError(fmt.Errorf("bucket %q %w (%q)", name, errTaggedForAnother, tag))), true
	}
	if tags[OwnerUIDTag] == string(b.UID) && !unfinished {
		// Made by an earlier pass that stopped before its end-of-pass write, or whose status
		// this pass's cache did not show yet.
		recordMade(b, p, name)
		return bucketOutcome{}, false
	}
	maps.Copy(tags, ownerTags(b))
	if err := store.PutBucketTags(ctx, name, tags); err != nil {
		return k.s3Failed(b, *found, err), true
	}
	recordMade(b, p, name)
	if unfinished {
		return bucketOutcome{}, false // a creation finished: Ready says the rest
	}
	if adopting {
		found.made = &bucketEvent{"BucketAdopted", "Adopt", fmt.Sprintf("Adopted existing bucket %s, which no resource claimed (spec.adopt): it is tagged for this resource and managed from now on", name)}
		return bucketOutcome{}, false
	}
	found.made = &bucketEvent{"BucketAdopted", "Adopt", fmt.Sprintf("Adopted existing bucket %s, which is tagged for this resource", name)}
	return bucketOutcome{}, false
}

func (k bucketKind) createBucket(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found *bucketFound) (bucketOutcome, bool) {
	name := b.Spec.BucketName
	// Record the intent first: should this pass stop between creating the bucket and tagging
	// it, the next one (or a deletion) knows the untagged bucket is its own. A server that keeps
	// the tags given at creation needs no record: the bucket appears with its owner's tags, so
	// the server itself says whose it is, and a deletion looks there (settleCreation).
	recorded := b.Status.CreatingBucket == name
	if !recorded && !store.CreateTells() {
		if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.CreatingBucket = name }); err != nil {
			return found.end(nil, 0, fmt.Errorf("recording the creation of bucket %q: %w", name, err)), true
		}
	}
	logf.FromContext(ctx).V(1).Info("Creating bucket", "bucket", name)
	tags := bucketsettings.WithOwnerTags(b.Spec.Tags, ownerTags(b))
	tagged, err := store.CreateBucket(ctx, name, objectstore.CreateOptions{ObjectLock: b.Spec.ObjectLock != nil, Tags: tags,
		ObjectOwnership: string(b.Spec.OwnershipControls)})
	switch {
	case b.Spec.ObjectLock != nil && objectstore.IsNotImplemented(err):
		failed := []bucketsettings.Failure{{Info: bucketsettings.ObjectLock{}.Info(), Err: err}}
		return found.end(settingsUnsupported{failed, false}, 0, reconcile.TerminalError(err)), true
	case errors.Is(err, objectstore.ErrBucketTakenElsewhere):
		return nameTaken(b, *found), true
	case objectstore.ErrorCode(err) == "BucketAlreadyOwnedByYou" && !recorded && store.CreateTells():
		// No look came first, so the bucket may have been there before: only its tags say
		// whether it is this resource's. (An SDK retry of this pass's own creation finds the
		// bucket tagged for this resource: the server kept the tags.)
		return k.claim(ctx, b, p, store, found, false)
	case objectstore.ErrorCode(err) == "BucketAlreadyOwnedByYou":
		// An earlier attempt whose answer was lost (the record is older, or a look found no
		// bucket before it), or another resource of this account.
		return k.claim(ctx, b, p, store, found, true)
	case err != nil:
		return k.s3Failed(b, *found, err), true
	}
	// The tag is what lets this resource, and only it, adopt the bucket later: where the server
	// took no tags at creation, tag at once.
	if !tagged {
		if err := store.PutBucketTags(ctx, name, tags); err != nil {
			return k.s3Failed(b, *found, err), true
		}
	}
	recordMade(b, p, name)
	return bucketOutcome{}, false
}

// recordMade records that bucket name is this resource's, and clears the record of its
// creation, both in the end-of-pass write rather than in a write of their own: intent is
// recorded before a call that creates or destroys something, and this records a result. Should
// the pass stop before its last write, the record of the creation is still there and the bucket
// is tagged for this resource: the next pass claims it (claim), and a deletion finishes the
// creation first (settleCreation). The record must not be left behind once the bucket is
// recorded, or a later untagged bucket of that name could be taken as this resource's: the pass
// takes it as stored, so the end-of-pass write clears it even when this pass read the Bucket
// from a cache that had not seen it.
func recordMade(b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket], name string) {
	b.Status.BucketName, b.Status.CreatingBucket = name, ""
	p.AssumeStored(func(o *storagev1alpha1.Bucket) { o.Status.CreatingBucket = name })
}

func nameTaken(b *storagev1alpha1.Bucket, found bucketFound) bucketOutcome {
	return found.end(nameOwnedElsewhere{}, 0, reconcile.TerminalError(fmt.Errorf("bucket name %q is taken", b.Spec.BucketName)))
}

// bucketTag says whether a tag of the operator's is one of the tags by which it says which Bucket
// a bucket is; claim decides from their values.
func bucketTag(key, _ string) bool { return key == OwnerTag || key == OwnerUIDTag }

// ownTag says whether a tag of the operator's, on a bucket, says the bucket is b's: its owner tag
// with b's value, or the UID tag (which changes when a Bucket retained is applied again).
func ownTag(b *storagev1alpha1.Bucket) func(key, value string) bool {
	return func(key, value string) bool {
		return key == OwnerUIDTag || key == OwnerTag && value == ownerTagValue(b)
	}
}

// ownerTags are the tags that say whose bucket it is.
func ownerTags(b *storagev1alpha1.Bucket) map[string]string {
	return map[string]string{OwnerTag: ownerTagValue(b), OwnerUIDTag: string(b.UID)}
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
// pass let go of names before this one got it (a Bucket of an earlier process was in the
// cache's first list). Most Buckets have no namesake, and a burst of N new ones then costs no
// API reads, where a read each would cost the API server O(N) filtering each, O(N²) in all.
func (k bucketKind) otherClaimant(ctx context.Context, b *storagev1alpha1.Bucket) (string, error) {
	cached, err := index.BucketsNamingBucket(ctx, k.Client, b.Namespace, b.Spec.BucketName)
	if err != nil || !slices.ContainsFunc(cached, func(o storagev1alpha1.Bucket) bool { return namesake(b, &o) }) {
		return "", err
	}
	list, err := index.BucketsNamingBucketUncached(ctx, k.APIReader, b.Namespace, b.Spec.BucketName)
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
