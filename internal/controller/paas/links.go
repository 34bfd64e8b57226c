package paas

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// BucketsOfApplication maps an Application to the Buckets it links, for a Bucket controller that
// watches Applications (handler.EnqueueRequestsFromMapFunc). On an update the handler maps the
// old and the new object, so a Bucket that was just unlinked is woken too.
func BucketsOfApplication(_ context.Context, obj client.Object) []reconcile.Request {
	app, ok := obj.(*paasv1alpha1.Application)
	if !ok {
		return nil
	}
	names := index.LinkedBuckets(app)
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: n}})
	}
	return reqs
}
