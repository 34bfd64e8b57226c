package v1alpha1

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// finalizeAtCreation puts the storage finalizer on a resource being created. The resource then
// carries it from its first moment: its controller needs no write of its own to add it (one of
// the two a Bucket costs the API server otherwise), and a resource deleted before its first
// pass still waits for that pass to look at the provider. Only at creation: a finalizer removed
// by hand (an uninstall, docs/install.md) must stay removed.
func finalizeAtCreation(ctx context.Context, obj client.Object) {
	if creating(ctx) {
		controllerutil.AddFinalizer(obj, storagev1alpha1.Finalizer)
	}
}

// creating reports whether the admission request being served creates the object.
func creating(ctx context.Context) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && req.Operation == admissionv1.Create
}
