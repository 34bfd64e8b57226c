package paas

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
)

// foreignError says that a child's name is taken by an object this Application does not own.
type foreignError struct{ kind, name string }

func (e *foreignError) Error() string {
	return fmt.Sprintf("%s %s exists and does not belong to this Application", e.kind, e.name)
}

// apply creates obj or updates it with mutate, and writes nothing when it already matches. It
// never takes over an object that belongs to something else.
func (r *ApplicationReconciler) apply(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind string, mutate func()) error {
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
		if obj.GetResourceVersion() != "" && !metav1.IsControlledBy(obj, app) {
			return &foreignError{kind: kind, name: obj.GetName()}
		}
		mutate()
		return controllerutil.SetControllerReference(app, obj, r.Scheme())
	})
	if apierrors.IsAlreadyExists(err) {
		op, err = r.reclaim(ctx, app, obj, kind, mutate)
	}
	var foreign *foreignError
	switch {
	case errors.As(err, &foreign):
		return foreign
	case err != nil:
		return fmt.Errorf("writing %s %q: %w", kind, obj.GetName(), err)
	}
	log := logf.FromContext(ctx)
	switch op {
	case controllerutil.OperationResultCreated:
		log.Info("Created "+kind, "object", klog.KObj(obj))
		r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Created", "Create", "Created %s %s", kind, obj.GetName())
	case controllerutil.OperationResultUpdated:
		log.Info("Updated "+kind, "object", klog.KObj(obj))
		r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Updated", "Update",
			"Updated %s %s to match the Application", kind, obj.GetName())
	}
	return nil
}

// reclaim handles a child the cache does not hold but the API server does: the cache sees only
// objects labelled as the controller's children, so this is an object of someone else of the
// same name, or a child whose labels were edited away. The first is reported, the second made
// whole again.
func (r *ApplicationReconciler) reclaim(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind string, mutate func()) (controllerutil.OperationResult, error) {
	live := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return controllerutil.OperationResultNone, err
	}
	if !metav1.IsControlledBy(live, app) {
		return controllerutil.OperationResultNone, &foreignError{kind: kind, name: obj.GetName()}
	}
	// mutate writes into obj: start it from the live object.
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(live).Elem())
	mutate()
	if err := r.Update(ctx, obj); err != nil {
		return controllerutil.OperationResultNone, err
	}
	return controllerutil.OperationResultUpdated, nil
}

// deleteOwned deletes obj when it exists and belongs to app; why says, for the event, why it
// is no longer wanted.
func (r *ApplicationReconciler) deleteOwned(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind, why string) error {
	if err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return nil
	}
	uid := obj.GetUID()
	if err := r.Delete(ctx, obj, client.Preconditions{UID: &uid},
		client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Deleted "+kind, "object", klog.KObj(obj))
	r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Deleted", "Delete", "Deleted %s %s: %s", kind, obj.GetName(), why)
	return nil
}

// getOwned reads obj and returns it when it belongs to app, nil when it does not exist.
func getOwned[T client.Object](ctx context.Context, c client.Reader, app *paasv1alpha1.Application, obj T, kind string) (T, error) {
	var none T
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return none, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return none, &foreignError{kind: kind, name: obj.GetName()}
	}
	return obj, nil
}

// apiMessage is the API server's own account of a refusal, without the wrapping of the call.
func apiMessage(err error) string {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		return apiStatus.Status().Message
	}
	return err.Error()
}
