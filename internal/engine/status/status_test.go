package status

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestSetFinalizerNeverDropsAFinalizerAddedMeanwhile(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Finalizers: []string{"ours"}},
	}).Build()
	stale := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, stale); err != nil {
		t.Fatal(err)
	}
	// Another writer adds its finalizer after this pass read the object.
	other := stale.DeepCopy()
	other.Finalizers = append(other.Finalizers, "theirs")
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}

	err := SetFinalizer(ctx, c, stale, "ours", false)
	if !apierrors.IsConflict(err) {
		t.Errorf("SetFinalizer on a stale object = %v, want a conflict", err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Finalizers, "theirs") {
		t.Errorf("finalizers = %v: the other writer's was dropped", got.Finalizers)
	}
}

func TestTheEndOfPassWriteSurvivesWritesMadeDuringThePass(t *testing.T) {
	ctx := context.Background()
	c, b := storedBucket(t)
	before := b.DeepCopy()

	// The pass records an intent, someone else then writes the object, and the pass ends.
	if err := Record(ctx, c, b, func(o client.Object) { o.(*storagev1alpha1.Bucket).Status.CreatingBucket = "x" }); err != nil {
		t.Fatal(err)
	}
	other := &storagev1alpha1.Bucket{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), other); err != nil {
		t.Fatal(err)
	}
	other.Labels = map[string]string{"team": "a"}
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	b.Status.BucketName = "x"
	if err := Patch(ctx, c, b, &before.Status, &b.Status); err != nil {
		t.Fatalf("the end-of-pass write failed: %v", err)
	}
	got := &storagev1alpha1.Bucket{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.BucketName != "x" || got.Status.CreatingBucket != "x" {
		t.Errorf("status = %+v, want the record and the pass's result", got.Status)
	}
}

// Writes answer with the object's metadata only, so the pass's object keeps what the pass
// computed and takes only the version it wrote, which the next pass compares its copy with.
func TestEveryWriteLeavesThePassItsWorkAndTheVersionItWrote(t *testing.T) {
	ctx := context.Background()
	c, b := storedBucket(t)
	before := b.DeepCopy()
	b.Status.Endpoint = "computed by the pass, not written yet"
	stored := func() *storagev1alpha1.Bucket {
		got := &storagev1alpha1.Bucket{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, write := range []struct {
		what string
		do   func() error
	}{
		{"SetFinalizer", func() error { return SetFinalizer(ctx, c, b, "ours", true) }},
		{"Record", func() error {
			return Record(ctx, c, b, func(o client.Object) { o.(*storagev1alpha1.Bucket).Status.CreatingBucket = "x" })
		}},
		{"Patch", func() error { return Patch(ctx, c, b, &before.Status, &b.Status) }},
	} {
		if err := write.do(); err != nil {
			t.Fatalf("%s: %v", write.what, err)
		}
		got := stored()
		if b.ResourceVersion != got.ResourceVersion {
			t.Errorf("after %s the pass has version %s, want the one written, %s", write.what, b.ResourceVersion, got.ResourceVersion)
		}
		if b.Status.Endpoint == "" {
			t.Fatalf("%s overwrote what the pass computed", write.what)
		}
	}
	got := stored()
	if !slices.Contains(got.Finalizers, "ours") || got.Status.CreatingBucket != "x" || got.Status.Endpoint != b.Status.Endpoint {
		t.Errorf("stored %v, %+v: want the finalizer, the record and the pass's status", got.Finalizers, got.Status)
	}
}

// storedBucket is a client with a Bucket that has a status subresource, and the Bucket as a
// pass reads it.
func storedBucket(t *testing.T) (client.Client, *storagev1alpha1.Bucket) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := storagev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&storagev1alpha1.Bucket{}).
		WithObjects(&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}).Build()
	b := &storagev1alpha1.Bucket{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, b); err != nil {
		t.Fatal(err)
	}
	return c, b
}
