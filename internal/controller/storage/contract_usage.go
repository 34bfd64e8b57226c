package storage

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// sumUsage records in the Contract's status what its Buckets hold together, from their status
// (read from the cache): no call to the provider.
func (k contractKind) sumUsage(ctx context.Context, c *storagev1alpha1.Contract, buckets []string) error {
	var sum *storagev1alpha1.ContractUsage
	for _, name := range buckets {
		b := &storagev1alpha1.Bucket{}
		// Read only, so not copied out of the cache: a Contract sums its Buckets on every pass.
		if err := k.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, b, client.UnsafeDisableDeepCopy); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return fmt.Errorf("reading Bucket %q: %w", name, err)
		}
		if u := b.Status.Usage; u != nil {
			if sum == nil {
				sum = &storagev1alpha1.ContractUsage{}
			}
			sum.Bytes += u.Bytes
			sum.Objects += u.Objects
			sum.Buckets++
		}
	}
	if sum != nil {
		sum.Size = humanBytes(sum.Bytes)
	}
	c.Status.Usage = sum
	return nil
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
