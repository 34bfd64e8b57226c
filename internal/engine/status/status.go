// Package status holds what every reconciler of the operator does with a resource's status:
// set conditions with the generation they describe, and write the status once per pass, only
// when it changed.
package status

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
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
// The patch carries the status alone and no resource version: writes during the pass (a
// finalizer, a record) moved the object on, and must not make the end-of-pass write fail.
func Patch(ctx context.Context, c client.Client, obj client.Object, beforeStatus, status any) error {
	if equality.Semantic.DeepEqual(beforeStatus, status) {
		return nil
	}
	data, err := mergePatch(map[string]any{"status": beforeStatus}, map[string]any{"status": status})
	if err != nil {
		return err
	}
	if err := send(ctx, c, obj, "status", data); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("writing status: %w", err))
	}
	return nil
}

// PatchMetadata patches obj's annotations, labels and finalizers as mutate changes them; obj
// takes them and the new resource version. The patch carries obj's resource version: a merge
// patch replaces a list such as the finalizers whole, and must not drop an entry another
// writer added since obj was read (it fails with a conflict instead).
func PatchMetadata(ctx context.Context, c client.Client, obj client.Object, mutate func(client.Object)) error {
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	mutate(patched)
	from, to := patchableMetadata(obj), patchableMetadata(patched)
	if equality.Semantic.DeepEqual(from, to) {
		return nil
	}
	to["metadata"]["resourceVersion"] = obj.GetResourceVersion()
	data, err := mergePatch(from, to)
	if err != nil {
		return err
	}
	if err := send(ctx, c, obj, "", data); err != nil {
		return err
	}
	obj.SetAnnotations(patched.GetAnnotations())
	obj.SetLabels(patched.GetLabels())
	obj.SetFinalizers(patched.GetFinalizers())
	return nil
}

// patchableMetadata is the part of an object's metadata that PatchMetadata writes.
func patchableMetadata(obj client.Object) map[string]map[string]any {
	return map[string]map[string]any{"metadata": {
		"annotations": obj.GetAnnotations(), "labels": obj.GetLabels(), "finalizers": obj.GetFinalizers()}}
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
// alone: the rest of what the pass computed still goes in its one write at the end. Status is
// the place for such records because only the operator writes it.
func Record(ctx context.Context, c client.Client, obj client.Object, mutate func(client.Object)) error {
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	mutate(patched)
	data, err := mergePatch(obj, patched)
	if err != nil {
		return err
	}
	if err := send(ctx, c, obj, "status", data); err != nil {
		return err
	}
	mutate(obj)
	return nil
}

// mergePatch is the JSON merge patch (RFC 7386) that turns before into after.
func mergePatch(before, after any) ([]byte, error) {
	from, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(from, to)
}

// send applies a merge patch to obj (its subresource, if not "") and sets obj's resource
// version to the one written. The API server answers with the object's metadata only: the
// pass has the rest already, and decoding whole objects was about a tenth of the manager's
// CPU in a burst of new Buckets.
func send(ctx context.Context, c client.Client, obj client.Object, subresource string, data []byte) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return err
	}
	written := &metav1.PartialObjectMetadata{}
	written.SetGroupVersionKind(gvk)
	written.SetNamespace(obj.GetNamespace())
	written.SetName(obj.GetName())
	patch := client.RawPatch(types.MergePatchType, data)
	if subresource == "" {
		err = c.Patch(ctx, written, patch)
	} else {
		err = c.SubResource(subresource).Patch(ctx, written, patch)
	}
	if err != nil {
		return err
	}
	obj.SetResourceVersion(written.GetResourceVersion())
	return nil
}

// IgnoreConflict turns a conflict into a quiet retry: the object changed while the pass ran,
// and its new version is on its way through the watch (crossplane-runtime's
// SilentlyRequeueOnConflict, without the deprecated Requeue).
func IgnoreConflict(res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: tuning.ConflictRetry}, nil
	}
	return res, err
}
