// Package engine is the reconcile skeleton every controller of the operator shares (Contract,
// Bucket, BucketAccess, Application). A controller gives it a Kind: how to bring the world to what a resource asks
// (Normal), how to let it go (Delete), and how to turn what a pass found into conditions
// (Conclude). The skeleton does the rest, the same way for all:
//
//  1. Get the resource; one that is gone ends quietly.
//  2. Skip a pass whose cached copy is older than this process's own last write of it: acting on
//     it would redo what that write recorded (see Reconciler.behind).
//  3. Put the finalizer on before anything outside the cluster is touched. A kind without one
//     (the Application: the garbage collector removes all it makes) gets no pass while deleted.
//  4. Snapshot the status, run Normal or Delete, which return what they found (an Outcome),
//     within the pass budget (tuning.PassBudget): a server that never answers holds a worker
//     that long at most.
//  5. Conclude: derive every condition from the Outcome, in one place.
//  6. Write the status once, only what changed; record writes made during the pass (Pass.Record)
//     are part of the snapshot, so they are not sent twice.
//  7. Turn the Outcome into the workqueue's result: a refusal is looked at again after the resync
//     period, a conflict is retried quietly, anything else as it says.
package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/engine/status"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// Kind is what one controller adds to the skeleton for its kind of resource T, a pointer to a
// kubebuilder type with a Status field. F is what its passes find: the typed findings its
// conditions are derived from.
type Kind[T client.Object, F any] interface {
	// Normal brings what is outside the cluster to what obj asks for. The finalizer is on.
	Normal(ctx context.Context, obj T, p *Pass[T]) Outcome[F]
	// Delete lets obj go: it does what its reclaim policy says, and removes the finalizer
	// (p.Release) once nothing is left to wait for. The finalizer is still on.
	Delete(ctx context.Context, obj T, p *Pass[T]) Outcome[F]
	// Conclude sets obj's conditions from what the pass found, and emits the events they
	// mean. It runs once, at the end of every pass that got as far as Normal or Delete.
	Conclude(obj T, out Outcome[F])
}

// Outcome is how a pass ended: what it found, and when it wants to run again.
type Outcome[F any] struct {
	// Found is what the pass found; Kind.Conclude derives the conditions from it.
	Found F
	// After asks for another pass after this long, unless an event brings one sooner; 0 asks
	// for none.
	After time.Duration
	// Err is what stopped the pass: retried with backoff, or, wrapped by Refused, looked at
	// again after the resync period (the conditions say why meanwhile).
	Err error
}

// Reconciler runs a Kind's passes. It is cheap to build: a controller builds one per pass, and
// keeps only its Writes from one pass to the next.
type Reconciler[T client.Object, F any] struct {
	Client client.Client
	Kind   Kind[T, F]
	// Finalizer holds a resource until Kind.Delete releases it; "" for a kind that makes
	// nothing outside the cluster, whose Delete then never runs.
	Finalizer string
	// ResyncPeriod is how long a refusal waits before it is looked at again.
	ResyncPeriod time.Duration
	// Written is the controller's record of its own last writes.
	Written *Writes
	// Recorder emits the events the skeleton itself has to say (Abandoned).
	Recorder events.EventRecorder
}

// Abandoner is a Kind that can let a resource go without touching the provider, when a
// cluster admin says so (storagev1alpha1.AbandonAnnotation on a resource being deleted):
// Abandon lets go of what the resource holds in the cluster, and says what stays behind at the
// provider.
type Abandoner[T client.Object] interface {
	Abandon(ctx context.Context, obj T) (left string, err error)
}

// Writes is the resource version of a controller's last write of each resource, by UID: a
// cached copy older than it is behind. The zero value is ready to use.
type Writes struct {
	versions ttlcache.Cache[types.UID, string]
}

// writtenMaxAge bounds how long a write is remembered: a cache that has not shown a write after
// this long is not behind, it is broken, and waiting for it would wedge the resource.
const writtenMaxAge = time.Minute

// Reconcile runs one pass over the resource req names.
func (r Reconciler[T, F]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Every contract API call of the pass is for this namespace: the provider budgets per tenant.
	ctx = contractclient.WithTenant(ctx, req.Namespace)
	obj := newObject[T]()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.behind(obj) {
		logf.FromContext(ctx).V(1).Info("The cache has not shown this process's last write yet; looking again shortly",
			"resourceVersion", obj.GetResourceVersion())
		return ctrl.Result{RequeueAfter: tuning.CacheBehindRetry}, nil
	}
	read := obj.GetResourceVersion()
	deleting := !obj.GetDeletionTimestamp().IsZero()
	if deleting && !controllerutil.ContainsFinalizer(obj, r.Finalizer) {
		return ctrl.Result{}, nil
	}
	if !deleting && r.Finalizer != "" {
		if err := status.SetFinalizer(ctx, r.Client, obj, r.Finalizer, true); err != nil {
			return status.IgnoreConflict(ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err))
		}
	}

	p := &Pass[T]{client: r.Client, obj: obj, stored: obj.DeepCopyObject().(T), finalizer: r.Finalizer}
	if deleting && obj.GetAnnotations()[storagev1alpha1.AbandonAnnotation] == "true" {
		if a, ok := r.Kind.(Abandoner[T]); ok {
			return status.IgnoreConflict(ctrl.Result{}, r.abandon(ctx, a, obj, p))
		}
	}
	// The steps run within the budget; the status write after them does not, so a pass cut
	// short still says why.
	stepsCtx, cancel := context.WithTimeout(ctx, tuning.PassBudget)
	defer cancel()
	var out Outcome[F]
	if deleting {
		out = r.Kind.Delete(stepsCtx, obj, p)
	} else {
		out = r.Kind.Normal(stepsCtx, obj, p)
	}
	r.Kind.Conclude(obj, out)
	if err := status.Patch(ctx, r.Client, obj, statusOf(p.stored), statusOf(obj)); err != nil {
		out.Err = kerrors.NewAggregate([]error{out.Err, err})
	}
	if rv := obj.GetResourceVersion(); rv != read && !p.released {
		r.Written.versions.Put(obj.GetUID(), rv)
	}
	return status.IgnoreConflict(r.result(ctx, out))
}

// abandon lets obj go without touching the provider, and says in an event what stays there.
func (r Reconciler[T, F]) abandon(ctx context.Context, a Abandoner[T], obj T, p *Pass[T]) error {
	left, err := a.Abandon(ctx, obj)
	if err != nil {
		return err
	}
	logf.FromContext(ctx).Info("Abandoned at the provider", "left", left)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "Abandoned", "Delete",
		"Let go without touching the provider (annotation %s): %s", storagev1alpha1.AbandonAnnotation, left)
	return p.Release(ctx)
}

// behind reports whether obj, as the cache shows it, is older than this process's last write
// of it. A pass that acted on it would not see what that write recorded (a purchase made, a
// principal issued) and would do it again. The pass waits for the cache instead: the write's
// watch event is on its way. Resource versions compare as numbers (KEP-5504); one that does not
// parse is taken as current.
func (r Reconciler[T, F]) behind(obj T) bool {
	last, _, ok := r.Written.versions.Get(obj.GetUID(), writtenMaxAge)
	if !ok {
		return false
	}
	cmp, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), last)
	return err == nil && cmp < 0
}

// result turns an Outcome into the workqueue's: a refusal (Refused) is looked at again after the
// resync period, since what was refused may start working with no event the operator could
// watch (the provider removes a policy, another account frees a bucket name); other outcomes
// pass as they are.
func (r Reconciler[T, F]) result(ctx context.Context, out Outcome[F]) (ctrl.Result, error) {
	if out.Err != nil && errors.Is(out.Err, reconcile.TerminalError(nil)) && r.ResyncPeriod > 0 {
		logf.FromContext(ctx).V(1).Info("Refused; looking again after the resync period", "reason", out.Err.Error(), "after", r.ResyncPeriod)
		return ctrl.Result{RequeueAfter: r.ResyncPeriod}, nil
	}
	return ctrl.Result{RequeueAfter: out.After}, out.Err
}

// Pass is one pass over one resource, as its steps see it.
type Pass[T client.Object] struct {
	client    client.Client
	finalizer string
	obj       T
	// stored is the resource as the API server holds it, as far as the pass knows: the copy
	// taken when it began, with the records written since. The end-of-pass write sends what
	// differs from it.
	stored   T
	released bool
}

// Record writes one change of status at once, before the external call whose intent it records
// (a bucket about to be created, a key about to be issued), so that a pass that stops after the
// call finds the record and finishes the work rather than leaking or repeating it. Status is
// the place for such records because only the operator writes it.
func (p *Pass[T]) Record(ctx context.Context, mutate func(T)) error {
	if err := status.Record(ctx, p.client, p.obj, func(o client.Object) { mutate(o.(T)) }); err != nil {
		return err
	}
	mutate(p.stored)
	return nil
}

// AssumeStored makes the pass take a change as already stored, so the end-of-pass write sends
// its reverse even when the copy the pass read did not show it (a record from a pass whose
// write the cache had not shown).
func (p *Pass[T]) AssumeStored(mutate func(T)) { mutate(p.stored) }

// Release removes the finalizer: the resource may go. The end-of-pass write then finds it gone,
// which is fine.
func (p *Pass[T]) Release(ctx context.Context) error {
	if err := status.SetFinalizer(ctx, p.client, p.obj, p.finalizer, false); err != nil {
		return err
	}
	p.released = true
	return nil
}

// newObject is an empty T to read into: T is a pointer to a struct.
func newObject[T client.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// statusOf points at obj's Status field, which every kind of the operator has.
func statusOf(obj client.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Status").Addr().Interface()
}

// Clock is the time a controller goes by; nil is the wall clock. Tests set one to move time.
type Clock func() time.Time

// Time is the clock's time now.
func (c Clock) Time() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}
