package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// observing says whether the operator only reads b's bucket (spec.managementPolicy Observe).
func observing(b *storagev1alpha1.Bucket) bool {
	return b.Spec.ManagementPolicy == storagev1alpha1.ManagementObserve
}

// observe reads an Observe Bucket's bucket, records every setting in status and says in InSync
// whether it matches the spec. It never writes to the server: no creation, no tag, no setting.
func (k bucketKind) observe(ctx context.Context, b *storagev1alpha1.Bucket, acct *account, found bucketFound) bucketOutcome {
	err := acct.store.HeadBucket(ctx, b.Spec.BucketName)
	switch {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return found.end(bucketMissing{}, engine.WaitingRetry(k.ResyncPeriod), nil)
	case err != nil:
		return k.s3Failed(b, found, err)
	}
	// What it reads goes into status, where the namespace's users see it: only from a bucket
	// that is this resource's or no one's.
	tags, err := acct.store.BucketTags(ctx, b.Spec.BucketName)
	if err != nil {
		return k.s3Failed(b, found, err)
	}
	if other := bucketsettings.ClaimOtherThan(tags, ownTag(b)); other != "" {
		return found.end(claimedElsewhere{tag: other, observed: true}, engine.WaitingRetry(k.ResyncPeriod), nil)
	}
	b.Status.ManagementPolicy = storagev1alpha1.ManagementObserve
	in := k.settingsInput(b, acct, found.users, false)
	in.Observe, in.OwnerTags = true, nil
	res := bucketsettings.Sync(ctx, in, k.emitter(b), k.settings())
	var unsupported []bucketsettings.Failure
	for _, f := range res.Failed {
		if !f.Unsupported {
			return k.s3Failed(b, found, f.Err)
		}
		unsupported = append(unsupported, f)
	}
	found.inSync = inSync(res.Differ)
	if len(unsupported) > 0 {
		return found.end(settingsUnsupported{unsupported, true}, engine.ResyncAfter(k.ResyncPeriod), nil)
	}
	return found.end(bucketObserved{}, k.nextCheck(ctx, b), nil)
}

// inSync is the InSync condition of an Observe Bucket whose settings differ from the spec in
// differ.
func inSync(differ []bucketsettings.Info) *engine.Condition {
	if len(differ) == 0 {
		return engine.True(storagev1alpha1.ReasonMatchesSpec, "The bucket has every setting its spec asks for")
	}
	fields := make([]string, 0, len(differ))
	for _, d := range differ {
		fields = append(fields, fmt.Sprintf("%s (spec.%s)", d.Title, d.Field))
	}
	return engine.False(storagev1alpha1.ReasonDiffersFromSpec,
		"With spec.managementPolicy Manage, the operator would change: "+strings.Join(fields, ", ")+"; see status for what the bucket has")
}

// setInSync sets (for an Observe Bucket) or removes the InSync condition, with a warning when
// the bucket comes to differ from its spec.
func (k bucketKind) setInSync(b *storagev1alpha1.Bucket, c *engine.Condition) {
	if !observing(b) {
		meta.RemoveStatusCondition(&b.Status.Conditions, storagev1alpha1.InSyncCondition)
		return
	}
	if c == nil {
		return
	}
	engine.SetAnnounced(k.Recorder, b, &b.Status.Conditions, b.Generation, storagev1alpha1.InSyncCondition, *c, func(c engine.Condition) string {
		if c.Status == metav1.ConditionFalse {
			return corev1.EventTypeWarning
		}
		return ""
	})
}

// leaveObserved ends the deletion of an Observe Bucket: the bucket is left as it is, whatever
// bucketReclaimPolicy says.
func (k bucketKind) leaveObserved(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket], found bucketFound) bucketOutcome {
	k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "BucketLeft", "Delete",
		"Left bucket %s as it is: spec.managementPolicy is Observe, so the operator changes nothing at the server", b.Spec.BucketName)
	// Topics made while it was managed are the operator's own, not the bucket's: they go.
	if out, done := k.deleteTopics(ctx, b, found); done {
		return out
	}
	return found.end(nil, 0, p.Release(ctx))
}

// bucketMissing: an Observe Bucket's bucket does not exist.
type bucketMissing struct{}

// bucketObserved: an Observe Bucket's bucket was read.
type bucketObserved struct{}

func (bucketMissing) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonBucketMissing, fmt.Sprintf(
		"Bucket %s does not exist in the account of Contract %s, and with spec.managementPolicy Observe the operator never creates it: "+
			"create it, or set managementPolicy to Manage (asked again every resync period)", b.Spec.BucketName, b.Spec.ContractName))
}

func (bucketObserved) ready(b *storagev1alpha1.Bucket) *engine.Condition {
	return engine.True(storagev1alpha1.ReasonObserved, fmt.Sprintf(
		"Bucket %s was read and its settings are in status; the operator changes nothing at the server (spec.managementPolicy Observe)", b.Spec.BucketName))
}
