package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// kind is a Kind whose passes do what the test says, and count.
type kind struct {
	normal, delete, concluded int
	// pass is what Normal and Delete do.
	pass func(ctx context.Context, b *storagev1alpha1.Bucket, p *Pass[*storagev1alpha1.Bucket]) Outcome[string]
}

func (k *kind) Normal(ctx context.Context, b *storagev1alpha1.Bucket, p *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
	k.normal++
	return k.pass(ctx, b, p)
}

func (k *kind) Delete(ctx context.Context, b *storagev1alpha1.Bucket, p *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
	k.delete++
	return k.pass(ctx, b, p)
}

func (k *kind) Conclude(b *storagev1alpha1.Bucket, out Outcome[string]) {
	k.concluded++
	b.Status.Region = out.Found // what the pass found becomes status, as conditions do
}

// cluster is an API server with one Bucket, and the writes it took.
func cluster(t *testing.T, funcs ...interceptor.Funcs) (client.Client, *[]string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := storagev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var writes []string
	builder := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&storagev1alpha1.Bucket{}).
		WithObjects(&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "uid-b"}}).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				writes = append(writes, "PATCH")
				return c.Patch(ctx, obj, patch, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				writes = append(writes, "PATCH "+sub)
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		})
	for _, f := range funcs {
		builder = builder.WithInterceptorFuncs(f)
	}
	return builder.Build(), &writes
}

func reconcileB(t *testing.T, r Reconciler[*storagev1alpha1.Bucket, string]) (ctrl.Result, error) {
	t.Helper()
	return r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "b"}})
}

func TestAPassPutsTheFinalizerOnFirstAndWritesWhatChangedOnce(t *testing.T) {
	c, writes := cluster(t)
	k := &kind{pass: func(context.Context, *storagev1alpha1.Bucket, *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
		return Outcome[string]{Found: "found", After: time.Minute}
	}}
	r := Reconciler[*storagev1alpha1.Bucket, string]{Client: c, Kind: k, Finalizer: "f", Written: &Writes{}}
	res, err := reconcileB(t, r)
	if err != nil || res.RequeueAfter != time.Minute {
		t.Fatalf("pass = %+v, %v; want a look again after a minute", res, err)
	}
	if want := []string{"PATCH", "PATCH status"}; len(*writes) != 2 || (*writes)[0] != want[0] || (*writes)[1] != want[1] {
		t.Errorf("writes %v, want the finalizer then the status, once each", *writes)
	}
	got := &storagev1alpha1.Bucket{}
	_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, got)
	if !controllerutil.ContainsFinalizer(got, "f") || got.Status.Region != "found" || k.concluded != 1 {
		t.Errorf("stored %v, %+v; concluded %d times", got.Finalizers, got.Status, k.concluded)
	}
	*writes = nil
	if _, err := reconcileB(t, r); err != nil || len(*writes) != 0 {
		t.Errorf("a pass that found the same wrote %v (%v); want nothing", *writes, err)
	}
}

// A kind that makes nothing outside the cluster has no finalizer: its passes write the status
// alone, and a resource being deleted gets none (the garbage collector removes what it made).
func TestAKindWithoutAFinalizerWritesTheStatusAloneAndSkipsDeletion(t *testing.T) {
	c, writes := cluster(t)
	k := &kind{pass: func(context.Context, *storagev1alpha1.Bucket, *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
		return Outcome[string]{Found: "found"}
	}}
	r := Reconciler[*storagev1alpha1.Bucket, string]{Client: c, Kind: k, Written: &Writes{}}
	if _, err := reconcileB(t, r); err != nil {
		t.Fatal(err)
	}
	if len(*writes) != 1 || (*writes)[0] != "PATCH status" {
		t.Errorf("writes %v, want the status alone", *writes)
	}
	got := &storagev1alpha1.Bucket{}
	_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, got)
	got.Finalizers = []string{"someone-else"}
	_ = c.Update(context.Background(), got)
	_ = c.Delete(context.Background(), got)
	*writes = nil
	if _, err := reconcileB(t, r); err != nil || len(*writes) != 0 || k.delete != 0 || k.normal != 1 {
		t.Errorf("a pass over a resource being deleted wrote %v (%v), ran Delete %d and Normal %d times; want nothing",
			*writes, err, k.delete, k.normal)
	}
}

// Every contract API call a pass makes names its resource's namespace as the tenant, so the
// provider budgets it with that namespace's calls.
func TestAPassCallsTheContractAPIForItsNamespace(t *testing.T) {
	c, _ := cluster(t)
	var tenant string
	k := &kind{pass: func(ctx context.Context, _ *storagev1alpha1.Bucket, _ *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
		tenant = contractclient.TenantOf(ctx)
		return Outcome[string]{}
	}}
	if _, err := reconcileB(t, Reconciler[*storagev1alpha1.Bucket, string]{Client: c, Kind: k, Finalizer: "f", Written: &Writes{}}); err != nil {
		t.Fatal(err)
	}
	if tenant != "ns" {
		t.Errorf("the pass's tenant is %q, want its namespace %q", tenant, "ns")
	}
}

// A pass whose cached copy is older than this process's own last write of the resource would
// redo what that write recorded (buy again, issue again): it waits for the cache instead.
func TestAPassOverACopyOlderThanItsOwnLastWriteWaitsForTheCache(t *testing.T) {
	stale := false
	var old string
	c, _ := cluster(t, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		err := c.Get(ctx, key, obj, opts...)
		if stale {
			obj.SetResourceVersion(old)
		}
		return err
	}})
	k := &kind{pass: func(ctx context.Context, b *storagev1alpha1.Bucket, p *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
		old = b.ResourceVersion
		return Outcome[string]{Found: "bought", Err: p.Record(ctx, func(o *storagev1alpha1.Bucket) { o.Status.CreatingBucket = "x" })}
	}}
	r := Reconciler[*storagev1alpha1.Bucket, string]{Client: c, Kind: k, Finalizer: "f", Written: &Writes{}}
	if _, err := reconcileB(t, r); err != nil {
		t.Fatal(err)
	}
	stale = true // the watch has not brought the pass's writes yet
	res, err := reconcileB(t, r)
	if err != nil || res.RequeueAfter != tuning.CacheBehindRetry || k.normal != 1 {
		t.Errorf("a pass over a copy older than its last write: %+v, %v, Normal ran %d times; want none, and a look again in %s",
			res, err, k.normal, tuning.CacheBehindRetry)
	}
	stale = false
	if _, err := reconcileB(t, r); err != nil || k.normal != 2 {
		t.Errorf("once the cache caught up: %v, Normal ran %d times; want it to run", err, k.normal)
	}
}

func TestARefusalIsLookedAtAgainAfterTheResyncPeriodAndAConflictSoon(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want time.Duration
	}{
		{"a refusal", reconcile.TerminalError(errors.New("the server said no")), time.Hour},
		{"a conflict", conflict(), tuning.ConflictRetry},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := cluster(t)
			k := &kind{pass: func(context.Context, *storagev1alpha1.Bucket, *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
				return Outcome[string]{Err: tt.err}
			}}
			res, err := reconcileB(t, Reconciler[*storagev1alpha1.Bucket, string]{Client: c, Kind: k, Finalizer: "f", ResyncPeriod: time.Hour, Written: &Writes{}})
			if err != nil || res.RequeueAfter != tt.want {
				t.Errorf("%s: %+v, %v; want no error and a look again after %s", tt.name, res, err, tt.want)
			}
		})
	}
}

func TestADeletionRunsDeleteAndAResourceWithoutTheFinalizerIsLeftAlone(t *testing.T) {
	c, _ := cluster(t)
	released := false
	k := &kind{pass: func(ctx context.Context, _ *storagev1alpha1.Bucket, p *Pass[*storagev1alpha1.Bucket]) Outcome[string] {
		if !released {
			return Outcome[string]{}
		}
		return Outcome[string]{Err: p.Release(ctx)}
	}}
	r := Reconciler[*storagev1alpha1.Bucket, string]{Client: c, Kind: k, Finalizer: "f", Written: &Writes{}}
	if _, err := reconcileB(t, r); err != nil {
		t.Fatal(err)
	}
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	if err := c.Delete(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	released = true
	if _, err := reconcileB(t, r); err != nil || k.delete != 1 {
		t.Fatalf("deleting: %v, Delete ran %d times", err, k.delete)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
		t.Errorf("the Bucket is still there after Delete released it: %v", b.Finalizers)
	}
}

func conflict() error {
	return apierrors.NewConflict(schema.GroupResource{Group: "storage.osm.dev", Resource: "buckets"}, "b", errors.New("changed since it was read"))
}
