package paas

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
)

// applicationBucketField indexes Applications by the names of the Buckets they link
// (spec.buckets[].name), so a Bucket finds the Applications that link it without listing the
// namespace.
const applicationBucketField = "spec.buckets.name"

// IndexFields registers the field indexes of the paas controllers and of ApplicationsLinking.
// Call it once per manager, before the controllers start.
func IndexFields(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &paasv1alpha1.Application{}, applicationBucketField, func(obj client.Object) []string {
		return linkedBucketNames(obj.(*paasv1alpha1.Application))
	})
}

// ApplicationsLinking lists, sorted, the Applications in namespace that link the Bucket
// bucketName in spec.buckets, including Applications that are being deleted (their pods may
// still use the bucket). reader must be a manager's cached client on which IndexFields ran
// (mgr.GetClient()); an uncached reader cannot answer the field selector.
func ApplicationsLinking(ctx context.Context, reader client.Reader, namespace, bucketName string) ([]string, error) {
	var list paasv1alpha1.ApplicationList
	if err := reader.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingFields{applicationBucketField: bucketName}); err != nil {
		return nil, fmt.Errorf("listing Applications that link Bucket %q: %w", bucketName, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names, nil
}

// BucketsOfApplication maps an Application to the Buckets it links, for a Bucket controller that
// watches Applications (handler.EnqueueRequestsFromMapFunc). On an update the handler maps the
// old and the new object, so a Bucket that was just unlinked is woken too.
func BucketsOfApplication(_ context.Context, obj client.Object) []reconcile.Request {
	app, ok := obj.(*paasv1alpha1.Application)
	if !ok {
		return nil
	}
	names := linkedBucketNames(app)
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: n}})
	}
	return reqs
}

func linkedBucketNames(app *paasv1alpha1.Application) []string {
	names := make([]string, 0, len(app.Spec.Buckets))
	for _, l := range app.Spec.Buckets {
		names = append(names, l.Name)
	}
	return names
}
