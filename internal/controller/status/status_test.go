package status

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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
