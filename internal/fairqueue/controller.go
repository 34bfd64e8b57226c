package fairqueue

import (
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ControllerOptions are a controller's options with workers passes at once, over a Queue: every
// controller of the operator takes them, so no tenant's passes hold another's workers.
func ControllerOptions(workers int) controller.Options {
	workers = max(workers, 1)
	return controller.Options{
		MaxConcurrentReconciles: workers,
		NewQueue: func(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[reconcile.Request]{
				Name: name, Queue: New(workers, Options{})})
			return workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{
				Name: name, DelayingQueue: delaying})
		},
	}
}
