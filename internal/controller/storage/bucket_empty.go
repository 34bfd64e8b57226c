package storage

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// empty empties a bucket its Bucket's deletion may empty (spec.deletion.emptyOnDelete), then
// deletes it. It counts first, and removes nothing from a bucket holding more than
// spec.deletion.maxObjects. Progress is recorded in status.emptying after each batch, so the
// next pass goes on from where one stopped (a crash, the pass's batch budget) instead of
// listing again what it dealt with. Object lock is never bypassed: what it keeps blocks the
// deletion, and a later round tries again. done says the pass ends with out.
func (k bucketKind) empty(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found bucketFound) (bucketOutcome, bool) {
	name := b.Status.BucketName
	if b.Status.Emptying == nil || b.Status.Emptying.Counted == 0 {
		if out, done := k.startEmptying(ctx, b, p, store, found); done {
			return out, true
		}
	}
	versioning, err := store.Versioning(ctx, name)
	if err != nil && !objectstore.IsNotImplemented(err) {
		return k.s3Failed(b, found, err), true
	}
	for range k.emptyBatches() {
		more, out, done := k.emptyBatch(ctx, b, p, store, versioning != "", found)
		if done {
			return out, true
		}
		if !more {
			return k.endRound(ctx, b, p, store, found)
		}
	}
	return found.end(emptying{}, tuning.EmptyingRetry, nil), true
}

func (k bucketKind) emptyBatches() int {
	if k.EmptyBatchesPerPass > 0 {
		return k.EmptyBatchesPerPass
	}
	return tuning.EmptyBatchesPerPass
}

// startEmptying counts the bucket's versions and delete markers up to one past what the cap
// leaves (less what earlier rounds removed) and records the count, or refuses the bucket when it
// holds more, removing nothing more.
func (k bucketKind) startEmptying(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found bucketFound) (bucketOutcome, bool) {
	started := &storagev1alpha1.BucketEmptying{StartedAt: metav1.Now()}
	if b.Status.Emptying != nil {
		started = nextRound(*b.Status.Emptying, true)
	}
	removed := started.RemovedVersions + started.RemovedDeleteMarkers
	left := b.Spec.Deletion.Cap() - removed
	n, err := countVersions(ctx, store, b.Status.BucketName, left+1)
	switch {
	case err != nil:
		return k.s3Failed(b, found, err), true
	case n > left:
		return found.end(tooManyObjects{limit: b.Spec.Deletion.Cap(), removed: removed}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	}
	started.Counted = removed + n
	if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.Emptying = started.DeepCopy() }); err != nil {
		return found.end(nil, 0, fmt.Errorf("recording the emptying of bucket %s: %w", b.Status.BucketName, err)), true
	}
	logf.FromContext(ctx).Info("Emptying bucket", "bucket", b.Status.BucketName, "versions", n)
	return bucketOutcome{}, false
}

// countVersions counts a bucket's versions and delete markers, stopping at limit.
func countVersions(ctx context.Context, store objectstore.Store, bucket string, limit int64) (int64, error) {
	var n int64
	var after objectstore.ObjectVersion
	for n < limit {
		page, err := store.ObjectVersions(ctx, bucket, after, objectstore.MaxDeleteBatch)
		if err != nil {
			return 0, err
		}
		n += int64(len(page.Versions))
		if !page.More {
			break
		}
		after = page.Next
	}
	return min(n, limit), nil
}

// emptyBatch lists one page after the recorded marker, deletes it, and records what it
// removed, what object lock kept, and where the next page starts. more says the round goes on;
// done says the pass ends with out.
func (k bucketKind) emptyBatch(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, versioned bool, found bucketFound) (more bool, out bucketOutcome, done bool) {
	name, e := b.Status.BucketName, b.Status.Emptying
	page, err := store.ObjectVersions(ctx, name, objectstore.ObjectVersion{Key: e.KeyMarker, VersionID: e.VersionIDMarker}, objectstore.MaxDeleteBatch)
	if err != nil {
		return false, k.s3Failed(b, found, err), true
	}
	versions := deletable(page.Versions, versioned)
	refused, err := store.DeleteVersions(ctx, name, versions)
	if err != nil {
		return false, k.s3Failed(b, found, err), true
	}
	next := *e.DeepCopy()
	if err := k.tally(ctx, store, name, &next, versions, refused); err != nil {
		return false, k.s3Failed(b, found, err), true
	}
	after := resumeAfter(page)
	next.KeyMarker, next.VersionIDMarker = after.Key, after.VersionID
	if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.Emptying = next.DeepCopy() }); err != nil {
		return false, found.end(nil, 0, fmt.Errorf("recording the emptying of bucket %s: %w", name, err)), true
	}
	return page.More, bucketOutcome{}, false
}

// resumeAfter is where the listing goes on after page: after the last key the page holds whole
// (a key marker alone, which servers read alike), so the next page lists that last key again,
// less what was deleted of it. Only a page of one key's versions goes on after a version:
// versitygw lists nothing after a version it no longer has.
func resumeAfter(page objectstore.VersionPage) objectstore.ObjectVersion {
	if page.Next.VersionID == "" {
		return page.Next
	}
	var whole string
	for _, v := range page.Versions {
		if v.Key < page.Next.Key && v.Key > whole {
			whole = v.Key
		}
	}
	if whole == "" {
		return page.Next
	}
	return objectstore.ObjectVersion{Key: whole}
}

// deletable names versions as the bucket deletes and reads them: a bucket never versioned holds
// only null versions, which a call by key reaches (versitygw refuses versionId null there).
func deletable(versions []objectstore.ObjectVersion, versioned bool) []objectstore.ObjectVersion {
	if versioned {
		return versions
	}
	out := make([]objectstore.ObjectVersion, 0, len(versions))
	for _, v := range versions {
		out = append(out, objectstore.ObjectVersion{Key: v.Key, DeleteMarker: v.DeleteMarker})
	}
	return out
}

// tally adds a batch to the record: removed versions and delete markers, and the versions
// object lock kept, the first of which it describes. A refusal other than AccessDenied is a
// failure of the batch, tried again from the same marker.
func (k bucketKind) tally(ctx context.Context, store objectstore.Store, bucket string, e *storagev1alpha1.BucketEmptying,
	listed []objectstore.ObjectVersion, refused []objectstore.Refusal) error {
	kept := map[string]bool{}
	for _, r := range refused {
		if r.Code != "AccessDenied" {
			return fmt.Errorf("deleting %s of bucket %q: %s: %s", describeVersion(r.Version), bucket, r.Code, r.Message)
		}
		kept[r.Version.Key+"\x00"+r.Version.VersionID] = true
	}
	for _, v := range listed {
		switch {
		case kept[v.Key+"\x00"+v.VersionID] || kept[v.Key+"\x00"]:
			e.Locked++
			if e.Held == "" {
				held, err := describeHold(ctx, store, bucket, v)
				if err != nil {
					return err
				}
				e.Held = held
			}
		case v.DeleteMarker:
			e.RemovedDeleteMarkers++
		default:
			e.RemovedVersions++
		}
	}
	return nil
}

// describeHold says what keeps one version: "photos/a.jpg version 3f2 (retained in COMPLIANCE
// mode until 2027-01-01T00:00:00Z)".
func describeHold(ctx context.Context, store objectstore.Store, bucket string, v objectstore.ObjectVersion) (string, error) {
	h, err := store.Hold(ctx, bucket, v)
	if err != nil {
		return "", err
	}
	var why []string
	if !h.RetainUntil.IsZero() {
		why = append(why, fmt.Sprintf("retained in %s mode until %s", h.Mode, h.RetainUntil.UTC().Format("2006-01-02T15:04:05Z")))
	}
	if h.LegalHold {
		why = append(why, "under legal hold")
	}
	if len(why) == 0 {
		why = append(why, "its deletion denied, with no retention or legal hold showing")
	}
	return fmt.Sprintf("%s (%s)", describeVersion(v), joinAnd(why)), nil
}

func describeVersion(v objectstore.ObjectVersion) string {
	if v.VersionID == "" || v.VersionID == "null" {
		return v.Key
	}
	return fmt.Sprintf("%s version %s", v.Key, v.VersionID)
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

// endRound ends a round of the listing: with versions object lock keeps, the deletion is
// blocked and the next round starts from the beginning; otherwise the bucket is empty: it is
// deleted, and an event says what was removed.
func (k bucketKind) endRound(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found bucketFound) (bucketOutcome, bool) {
	e := *b.Status.Emptying
	if e.Locked > 0 {
		if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.Emptying = nextRound(e, false) }); err != nil {
			return found.end(nil, 0, fmt.Errorf("recording the emptying of bucket %s: %w", b.Status.BucketName, err)), true
		}
		return found.end(objectsLocked{locked: e.Locked, held: e.Held}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	}
	err := store.DeleteBucket(ctx, b.Status.BucketName)
	switch {
	case err == nil, errors.Is(err, objectstore.ErrNoSuchBucket):
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketEmptied", "Delete", "Removed %s and %s from bucket %s",
			plural(int(e.RemovedVersions), "object version"), plural(int(e.RemovedDeleteMarkers), "delete marker"), b.Status.BucketName)
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketDeleted", "Delete", "Deleted bucket %s (bucketReclaimPolicy Delete)", b.Status.BucketName)
		return bucketOutcome{}, false
	case errors.Is(err, objectstore.ErrBucketNotEmpty):
		return k.stillHolds(ctx, b, p, store, found, e)
	}
	return k.s3Failed(b, found, err), true
}

// stillHolds goes on with a bucket that is not empty after a round: written to meanwhile, it is
// counted again, so the cap holds for all the deletion removes; holding only what no listing
// shows (incomplete multipart uploads), it waits rather than lists again and again.
func (k bucketKind) stillHolds(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	store objectstore.Store, found bucketFound, e storagev1alpha1.BucketEmptying) (bucketOutcome, bool) {
	n, err := countVersions(ctx, store, b.Status.BucketName, 1)
	switch {
	case err != nil:
		return k.s3Failed(b, found, err), true
	case n == 0:
		return found.end(notEmpty{"objects no listing shows (incomplete multipart uploads?)"}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	}
	if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.Emptying = nextRound(e, true) }); err != nil {
		return found.end(nil, 0, fmt.Errorf("recording the emptying of bucket %s: %w", b.Status.BucketName, err)), true
	}
	return found.end(emptying{}, tuning.EmptyingRetry, nil), true
}

// nextRound is the record of a new round: from the beginning, with what was removed kept, and
// counted again (Counted 0) when recount says so: after the bucket was written to, not after
// object lock held versions back.
func nextRound(e storagev1alpha1.BucketEmptying, recount bool) *storagev1alpha1.BucketEmptying {
	e.KeyMarker, e.VersionIDMarker, e.Locked, e.Held = "", "", 0, ""
	if recount {
		e.Counted = 0
	}
	return &e
}
