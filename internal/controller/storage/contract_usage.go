package storage

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// usageSum adds up what a Contract's Buckets hold, from their status (read from the cache): no
// call to the provider.
type usageSum struct {
	sum *storagev1alpha1.ContractUsage
}

func (u *usageSum) add(b *storagev1alpha1.Bucket) {
	if b.Status.Usage == nil {
		return
	}
	if u.sum == nil {
		u.sum = &storagev1alpha1.ContractUsage{}
	}
	u.sum.Bytes += b.Status.Usage.Bytes
	u.sum.Objects += b.Status.Usage.Objects
	u.sum.Buckets++
}

// total is the sum, with its size for people; nil if no Bucket reported usage.
func (u *usageSum) total() *storagev1alpha1.ContractUsage {
	if u.sum != nil {
		u.sum.Size = humanBytes(u.sum.Bytes)
	}
	return u.sum
}

// usageChanged passes a Bucket update whose status.usage changed, for its Contract's sum.
var usageChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldB, okOld := e.ObjectOld.(*storagev1alpha1.Bucket)
		newB, okNew := e.ObjectNew.(*storagev1alpha1.Bucket)
		if !okOld || !okNew {
			return false
		}
		o, n := oldB.Status.Usage, newB.Status.Usage
		return (o == nil) != (n == nil) || o != nil && (o.Bytes != n.Bytes || o.Objects != n.Objects)
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
