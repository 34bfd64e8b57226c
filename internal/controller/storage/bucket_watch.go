package storage

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// contractChangedForBuckets lets a Contract's update wake its Buckets only when it changes what
// a Bucket may read of it: its generation, its deletion, or its status other than the InUse
// condition. InUse names the Contract's Buckets, so it changes as Buckets come and go; waking
// every Bucket of the Contract for that made a burst of N Buckets cost up to N²/Contracts extra
// passes.
var contractChangedForBuckets = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*storagev1alpha1.Contract)
		cur, okNew := e.ObjectNew.(*storagev1alpha1.Contract)
		if !okOld || !okNew {
			return true
		}
		return bucketsSeeChange(old, cur)
	},
}

// bucketsSeeChange reports whether cur differs from old in anything but the InUse condition.
func bucketsSeeChange(old, cur *storagev1alpha1.Contract) bool {
	if old.Generation != cur.Generation || !old.DeletionTimestamp.Equal(cur.DeletionTimestamp) {
		return true
	}
	a, b := old.Status.DeepCopy(), cur.Status.DeepCopy()
	meta.RemoveStatusCondition(&a.Conditions, storagev1alpha1.InUseCondition)
	meta.RemoveStatusCondition(&b.Conditions, storagev1alpha1.InUseCondition)
	return !equality.Semantic.DeepEqual(a, b)
}

// resyncJitter is the share of the resync period added at random to each Bucket's next resync.
// Buckets reconciled in the same moment (a burst, a restart of the manager, which passes over
// every Bucket at once) would otherwise come back in the same moment every period, forever.
const resyncJitter = 0.1

// resyncAfter is when a Ready Bucket is looked at again: period, plus up to a tenth of it.
func resyncAfter(period time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	return wait.Jitter(period, resyncJitter)
}
