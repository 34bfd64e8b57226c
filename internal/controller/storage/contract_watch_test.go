package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// A burst of Buckets wakes their Contract once, after the burst settles, not once per Bucket.
func TestABurstOfBucketsWakesTheirContractOnce(t *testing.T) {
	const settle = 200 * time.Millisecond
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := contractOfBucketAfter(settle)
	ctx := context.Background()
	bucket := func(i int) *storagev1alpha1.Bucket {
		return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("b-%d", i)},
			Spec: storagev1alpha1.BucketSpec{ContractName: "acc", BucketName: fmt.Sprintf("team-b-%d", i)}}
	}
	for i := range 50 {
		h.Create(ctx, event.CreateEvent{Object: bucket(i)}, q)
	}
	h.Delete(ctx, event.DeleteEvent{Object: bucket(0)}, q)
	if n := q.Len(); n != 0 {
		t.Fatalf("%d Contracts queued at once, want none until the burst settles", n)
	}
	time.Sleep(2 * settle)
	if n := q.Len(); n != 1 {
		t.Fatalf("%d queued after the burst settled, want the Contract once", n)
	}
	req, _ := q.Get()
	if want := (reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "acc"}}); req != want {
		t.Errorf("woke %v, want %v", req, want)
	}
}
