// Package status holds what every reconciler of the operator does with a resource's status:
// set conditions with the generation they describe, and write the status once per pass, only
// when it changed.
package status

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// SetCondition sets a condition with the generation it describes. The transition time changes
// only when the status does, so an unchanged condition leaves the status equal.
func SetCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}

// Reason is the reason of a condition, "" when it is not set. It copies the value:
// meta.FindStatusCondition returns a pointer that the next SetStatusCondition overwrites.
func Reason(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Reason
	}
	return ""
}

// Patch writes obj's status when it differs from the snapshot taken before the pass, and not at
// all otherwise, so an unchanged resource costs no API write. A resource already gone is fine.
func Patch(ctx context.Context, c client.Client, before, obj client.Object, beforeStatus, status any) error {
	if equality.Semantic.DeepEqual(beforeStatus, status) {
		return nil
	}
	// Writes during the pass (a finalizer, a record) moved obj's resource version on; the patch
	// must not carry that as a precondition, or any later write would make it fail.
	base, ok := before.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", before)
	}
	base.SetResourceVersion(obj.GetResourceVersion())
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("writing status: %w", err))
	}
	return nil
}

// PatchMetadata patches obj's metadata as mutate changes it, on a copy: a patch answers with the
// stored object, whose status would undo what this pass has computed so far. obj takes the new
// annotations, labels, finalizers and resource version. The patch carries obj's resource
// version: a merge patch replaces a list such as the finalizers whole, and must not drop an
// entry another writer added since obj was read (it fails with a conflict instead).
func PatchMetadata(ctx context.Context, c client.Client, obj client.Object, mutate func(client.Object)) error {
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	mutate(patched)
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	obj.SetAnnotations(patched.GetAnnotations())
	obj.SetLabels(patched.GetLabels())
	obj.SetFinalizers(patched.GetFinalizers())
	obj.SetResourceVersion(patched.GetResourceVersion())
	return nil
}

// SetFinalizer adds (present) or removes finalizer, writing only when that changes something.
func SetFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string, present bool) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) == present {
		return nil
	}
	return PatchMetadata(ctx, c, obj, func(o client.Object) {
		if present {
			controllerutil.AddFinalizer(o, finalizer)
		} else {
			controllerutil.RemoveFinalizer(o, finalizer)
		}
	})
}

// Record writes one change of status at once, before the external call whose intent it records
// (a bucket about to be created, a contract about to be bought), as a patch of that change
// alone on a copy: the rest of what the pass computed still goes in its one write at the end.
// Status is the place for such records because only the operator writes it.
func Record(ctx context.Context, c client.Client, obj client.Object, mutate func(client.Object)) error {
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	mutate(patched)
	if err := c.Status().Patch(ctx, patched, client.MergeFrom(obj)); err != nil {
		return err
	}
	mutate(obj)
	obj.SetResourceVersion(patched.GetResourceVersion())
	return nil
}

// IgnoreConflict turns a conflict into a quiet retry: the object changed while the pass ran,
// and its new version is on its way through the watch (crossplane-runtime's
// SilentlyRequeueOnConflict, without the deprecated Requeue).
func IgnoreConflict(res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return res, err
}

// AwaitCache waits, for at most timeout, until cache shows obj at its resource version: the
// one the pass's last write returned. A pass that something wakes at once (a Secret the pass
// just created, say) reads from the cache; without the wait it could read the object from before
// the pass's writes and do their work again. A slow watch only delays the next pass: this never
// fails.
func AwaitCache(ctx context.Context, cache client.Reader, obj client.Object, timeout time.Duration) {
	want := obj.GetResourceVersion()
	seen, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return
	}
	_ = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := cache.Get(ctx, client.ObjectKeyFromObject(obj), seen); err != nil {
			return apierrors.IsNotFound(err), nil
		}
		return seen.GetResourceVersion() == want, nil
	})
}
