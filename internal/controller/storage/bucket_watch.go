package storage

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// contractChangedForBuckets lets a Contract's update wake its Buckets only when it changes what
// a Bucket may read of it: its generation, its deletion, or its status other than the InUse
// condition and the usage sum. Both are made from the Contract's Buckets, so they change as
// Buckets come, go and report usage; waking every Bucket of the Contract for that made a burst
// of N Buckets cost up to N²/Contracts extra passes (InUse), and on Ceph RGW, where usage is
// known, a second full pass of every Bucket (the usage sum: 2.0 reads of each setting per
// Bucket at N=100, where 1.0 is the need).
var contractChangedForBuckets = updated(bucketsSeeChange)

// updated lets an update through when changed says so of the object before and after it; other
// events, and updates of other types, go through.
func updated[T client.Object](changed func(old, cur T) bool) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(T)
		cur, okNew := e.ObjectNew.(T)
		return !okOld || !okNew || changed(old, cur)
	}}
}

// bucketsSeeChange reports whether cur differs from old in anything but the InUse condition and
// the usage sum.
func bucketsSeeChange(old, cur *storagev1alpha1.Contract) bool {
	if old.Generation != cur.Generation || !old.DeletionTimestamp.Equal(cur.DeletionTimestamp) {
		return true
	}
	a, b := old.Status.DeepCopy(), cur.Status.DeepCopy()
	meta.RemoveStatusCondition(&a.Conditions, storagev1alpha1.InUseCondition)
	meta.RemoveStatusCondition(&b.Conditions, storagev1alpha1.InUseCondition)
	a.Usage, b.Usage = nil, nil
	return !equality.Semantic.DeepEqual(a, b)
}
