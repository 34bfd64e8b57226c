package storage

import (
	"context"
	"fmt"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// bucketContractField indexes Buckets by spec.contractName, so a Contract finds the Buckets that
// name it without listing the namespace.
const bucketContractField = "spec.contractName"

// IndexFields registers the field indexes the storage controllers query. Call it once per
// manager, before the controllers start.
func IndexFields(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &storagev1alpha1.Bucket{}, bucketContractField, func(obj client.Object) []string {
		return []string{obj.(*storagev1alpha1.Bucket).Spec.ContractName}
	})
}

// BucketsNaming lists, sorted, the Buckets in namespace that name Contract contract. reader must
// be a manager's cached client on which IndexFields ran.
func BucketsNaming(ctx context.Context, reader client.Reader, namespace, contract string) ([]string, error) {
	var list storagev1alpha1.BucketList
	if err := reader.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingFields{bucketContractField: contract}); err != nil {
		return nil, fmt.Errorf("listing Buckets that name Contract %q: %w", contract, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, b := range list.Items {
		names = append(names, b.Name)
	}
	sort.Strings(names)
	return names, nil
}

// bucketsNamingUncached is BucketsNaming for a reader without the index, such as the API server
// itself: it lists the namespace and filters.
func bucketsNamingUncached(ctx context.Context, reader client.Reader, namespace, contract string) ([]string, error) {
	var list storagev1alpha1.BucketList
	if err := reader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing Buckets in %q: %w", namespace, err)
	}
	var names []string
	for _, b := range list.Items {
		if b.Spec.ContractName == contract {
			names = append(names, b.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
