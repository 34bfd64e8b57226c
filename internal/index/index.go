// Package index holds the field indexes the controllers share and the lookups that use them:
// the Buckets that name a Contract, and the Applications that link a Bucket. Call Register once
// per manager, before the controllers start.
package index

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

const (
	// BucketContractField indexes Buckets by spec.contractName, so a Contract finds the Buckets
	// that name it without listing the namespace.
	BucketContractField = "spec.contractName"
	// BucketNameField indexes Buckets by spec.bucketName. The API server filters Buckets by it
	// and by spec.contractName itself (selectable fields of the CRD), so the lookups that must
	// read the API server rather than the cache get a few Buckets back, not the whole namespace.
	BucketNameField = "spec.bucketName"
	// ApplicationBucketField indexes Applications by the names of the Buckets they link
	// (spec.buckets[].name), so a Bucket finds the Applications that link it.
	ApplicationBucketField = "spec.buckets.name"
	// ApplicationHostField indexes Applications by spec.host, so that an Application finds,
	// in every namespace the manager serves, the others that claim its host.
	ApplicationHostField = "spec.host"
)

// Register registers the field indexes.
func Register(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &storagev1alpha1.Bucket{}, BucketContractField, func(obj client.Object) []string {
		return []string{obj.(*storagev1alpha1.Bucket).Spec.ContractName}
	}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &storagev1alpha1.Bucket{}, BucketNameField, func(obj client.Object) []string {
		return []string{obj.(*storagev1alpha1.Bucket).Spec.BucketName}
	}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &storagev1alpha1.BucketAccess{}, BucketAccessBucketField, func(obj client.Object) []string {
		var names []string
		for _, b := range obj.(*storagev1alpha1.BucketAccess).AccessBuckets() {
			names = append(names, string(b.Name))
		}
		return names
	}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &paasv1alpha1.Application{}, ApplicationHostField, func(obj client.Object) []string {
		if host := obj.(*paasv1alpha1.Application).Spec.Host; host != "" {
			return []string{host}
		}
		return nil
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &paasv1alpha1.Application{}, ApplicationBucketField, func(obj client.Object) []string {
		return LinkedBuckets(obj.(*paasv1alpha1.Application))
	})
}

// ApplicationsServing returns the Applications, in every namespace reader sees, whose
// spec.host is host. reader should be a manager's cached client on which Register ran; one
// that refuses the field selector (400 Bad Request) is asked for every Application, and the
// answer filtered.
func ApplicationsServing(ctx context.Context, reader client.Reader, host string) ([]paasv1alpha1.Application, error) {
	var list paasv1alpha1.ApplicationList
	err := reader.List(ctx, &list, client.MatchingFields{ApplicationHostField: host})
	if apierrors.IsBadRequest(err) {
		err = reader.List(ctx, &list)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the Applications that serve %q: %w", host, err)
	}
	out := list.Items[:0]
	for _, a := range list.Items {
		if a.Spec.Host == host {
			out = append(out, a)
		}
	}
	return out, nil
}

// BucketsNaming lists, sorted, the Buckets in namespace that name Contract contract. reader must
// be a manager's cached client on which Register ran.
func BucketsNaming(ctx context.Context, reader client.Reader, namespace, contract string) ([]string, error) {
	var names []string
	err := EachBucketNaming(ctx, nil, reader, namespace, contract, func(b *storagev1alpha1.Bucket) {
		names = append(names, b.Name)
	})
	sort.Strings(names)
	return names, err
}

// EachBucketNaming calls visit, in no order, with each Bucket in namespace that names Contract
// contract. With informers (a manager's cache, on which Register ran) it walks the cache's own
// index: visit gets the cache's objects, not copies, and must neither change nor keep them. A
// Contract visits its Buckets on every pass, and a burst of new Buckets wakes it again and
// again: at 10,000 Buckets, copying each of them (880 bytes) on every pass was a third of what
// the manager allocated at the end of a burst (make bench-scale). Without informers, or with a
// cache that keeps an informer per namespace (--watch-namespaces, whose informers show no
// store), reader (cached) lists them, each copied once.
func EachBucketNaming(ctx context.Context, informers cache.Informers, reader client.Reader, namespace, contract string,
	visit func(*storagev1alpha1.Bucket)) error {
	var indexer toolscache.Indexer
	if informers != nil {
		var err error
		if indexer, err = cachedIndexer(ctx, informers, &storagev1alpha1.Bucket{}); err != nil {
			return err
		}
	}
	if indexer == nil {
		var list storagev1alpha1.BucketList
		if err := reader.List(ctx, &list, client.InNamespace(namespace),
			client.MatchingFields{BucketContractField: contract}, client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("listing Buckets that name Contract %q: %w", contract, err)
		}
		for i := range list.Items {
			if list.Items[i].Spec.ContractName == contract {
				visit(&list.Items[i])
			}
		}
		return nil
	}
	// The name and key controller-runtime gives the field index Register made
	// (FieldIndexName and KeyToNamespacedKey in its pkg/cache/internal).
	objs, err := indexer.ByIndex("field:"+BucketContractField, namespace+"/"+contract)
	if err != nil {
		return fmt.Errorf("reading the cache's index of Buckets by Contract %q: %w", contract, err)
	}
	for _, obj := range objs {
		if b, ok := obj.(*storagev1alpha1.Bucket); ok && b.Spec.ContractName == contract {
			visit(b)
		}
	}
	return nil
}

// EachCached calls visit, in no order, with every object of T's kind in the cache informers:
// the cache's own objects, not copies, so visit must neither change nor keep them. What reads
// every object often (a metrics scrape) would otherwise copy each of them every time. A cache
// that keeps an informer per namespace (--watch-namespaces) shows no store: then reader lists
// them into list, each copied once.
func EachCached[T client.Object](ctx context.Context, informers cache.Informers, reader client.Reader, list client.ObjectList, visit func(T)) error {
	var zero T // a nil pointer: the informer is found by a new object of its type
	indexer, err := cachedIndexer(ctx, informers, reflect.New(reflect.TypeOf(zero).Elem()).Interface().(client.Object))
	if err != nil {
		return err
	}
	if indexer == nil {
		if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		return meta.EachListItem(list, func(obj runtime.Object) error {
			if o, ok := obj.(T); ok {
				visit(o)
			}
			return nil
		})
	}
	for _, obj := range indexer.List() {
		if o, ok := obj.(T); ok {
			visit(o)
		}
	}
	return nil
}

// cachedIndexer is the store of the informer of obj's kind; nil when the informer shows none
// (a cache of several namespaces has an informer for each).
func cachedIndexer(ctx context.Context, informers cache.Informers, obj client.Object) (toolscache.Indexer, error) {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("the informer of %T: %w", obj, err)
	}
	if indexed, ok := informer.(interface{ GetIndexer() toolscache.Indexer }); ok {
		return indexed.GetIndexer(), nil
	}
	return nil, nil
}

// BucketsNamingUncached is BucketsNaming for a reader without the index, such as the API server
// itself, which filters by the selectable field.
func BucketsNamingUncached(ctx context.Context, reader client.Reader, namespace, contract string) ([]string, error) {
	list, err := listSelected(ctx, reader, namespace, BucketContractField, contract)
	if err != nil {
		return nil, fmt.Errorf("listing Buckets in %q: %w", namespace, err)
	}
	return bucketNames(list, contract), nil
}

// BucketsNamingBucket lists the Buckets in namespace whose spec.bucketName is bucket. reader
// must be a manager's cached client on which Register ran.
func BucketsNamingBucket(ctx context.Context, reader client.Reader, namespace, bucket string) ([]storagev1alpha1.Bucket, error) {
	var list storagev1alpha1.BucketList
	if err := reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{BucketNameField: bucket}); err != nil {
		return nil, fmt.Errorf("listing Buckets named %q: %w", bucket, err)
	}
	return list.Items, nil
}

// BucketsNamingBucketUncached lists the Buckets in namespace whose spec.bucketName is bucket,
// from a reader without an index, such as the API server itself, which filters by the
// selectable field.
func BucketsNamingBucketUncached(ctx context.Context, reader client.Reader, namespace, bucket string) ([]storagev1alpha1.Bucket, error) {
	list, err := listSelected(ctx, reader, namespace, BucketNameField, bucket)
	if err != nil {
		return nil, fmt.Errorf("listing Buckets in %q: %w", namespace, err)
	}
	out := list[:0]
	for _, b := range list {
		if b.Spec.BucketName == bucket {
			out = append(out, b)
		}
	}
	return out, nil
}

// listSelected lists the Buckets in namespace whose field is value. Listing a whole namespace
// for every new Bucket would cost O(N) each, O(N²) for a burst. An API server older than
// Kubernetes 1.31 does not filter custom resources by field and refuses the selector: then the
// whole namespace is listed, and callers filter.
func listSelected(ctx context.Context, reader client.Reader, namespace, field, value string) ([]storagev1alpha1.Bucket, error) {
	var list storagev1alpha1.BucketList
	err := reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{field: value})
	if apierrors.IsBadRequest(err) {
		err = reader.List(ctx, &list, client.InNamespace(namespace))
	}
	return list.Items, err
}

func bucketNames(buckets []storagev1alpha1.Bucket, contract string) []string {
	names := make([]string, 0, len(buckets))
	for _, b := range buckets {
		if b.Spec.ContractName == contract {
			names = append(names, b.Name)
		}
	}
	sort.Strings(names)
	return names
}

// ApplicationsLinking lists, sorted, the Applications in namespace that link the Bucket
// bucketName in spec.buckets, including Applications that are being deleted (their pods may
// still use the bucket). reader must be a manager's cached client on which Register ran.
func ApplicationsLinking(ctx context.Context, reader client.Reader, namespace, bucketName string) ([]string, error) {
	var list paasv1alpha1.ApplicationList
	if err := reader.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingFields{ApplicationBucketField: bucketName}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Applications that link Bucket %q: %w", bucketName, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names, nil
}

// LinkedBuckets are the names of the Buckets an Application links.
func LinkedBuckets(app *paasv1alpha1.Application) []string {
	names := make([]string, 0, len(app.Spec.Buckets))
	for _, l := range app.Spec.Buckets {
		names = append(names, l.Name)
	}
	return names
}

// BucketAccessBucketField indexes BucketAccesses by the Buckets they name (spec.bucket, or each
// of spec.buckets), so a Bucket finds the BucketAccesses that name it.
const BucketAccessBucketField = "spec.bucket"

// BucketAccessesNaming lists, sorted, the BucketAccesses in namespace that name Bucket bucket.
// reader must be a manager's cached client on which Register ran.
func BucketAccessesNaming(ctx context.Context, reader client.Reader, namespace, bucket string) ([]string, error) {
	list, err := BucketAccessesOf(ctx, reader, namespace, bucket)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list))
	for _, a := range list {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names, nil
}

// BucketAccessesOf returns the BucketAccesses in namespace that name Bucket bucket.
func BucketAccessesOf(ctx context.Context, reader client.Reader, namespace, bucket string) ([]storagev1alpha1.BucketAccess, error) {
	var list storagev1alpha1.BucketAccessList
	if err := reader.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingFields{BucketAccessBucketField: bucket}); err != nil {
		return nil, fmt.Errorf("listing BucketAccesses that name Bucket %q: %w", bucket, err)
	}
	out := list.Items[:0]
	for _, a := range list.Items {
		if _, ok := a.AccessBucketNamed(bucket); ok {
			out = append(out, a)
		}
	}
	return out, nil
}
