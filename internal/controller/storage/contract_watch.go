package storage

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// bucketChurnSettle is how long a Contract waits, after a Bucket naming it comes, goes or
// changes, before it looks at its Buckets again; what lands meanwhile is seen in that one pass.
// Woken at once, each Contract passed over its Buckets once for nearly every Bucket of a burst,
// listing them all each time (777 passes for 1,000 Buckets over 10 Contracts, O(N²/Contracts)
// in all), and rewrote its InUse condition as the names it shows changed. InUse then lags by
// up to this long; nothing waits on it: a Contract's deletion asks the API server which Buckets
// still name it.
const bucketChurnSettle = time.Second

// contractOfBucketAfter wakes a Bucket's Contract (contractOfBucket) delay after the Bucket's
// event.
func contractOfBucketAfter(delay time.Duration) handler.EventHandler {
	wake := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range contractOfBucket(ctx, obj) {
			q.AddAfter(req, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.Object, q)
		},
	}
}
