package storage

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// bucketsNaming lists, sorted, the Buckets in the Contract's namespace that name it.
func bucketsNaming(ctx context.Context, c client.Reader, contract *storagev1alpha1.Contract) ([]string, error) {
	var list storagev1alpha1.BucketList
	if err := c.List(ctx, &list, client.InNamespace(contract.Namespace),
		client.MatchingFields{bucketContractField: contract.Name}); err != nil {
		return nil, fmt.Errorf("listing Buckets that name Contract %q: %w", contract.Name, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, b := range list.Items {
		names = append(names, b.Name)
	}
	sort.Strings(names)
	return names, nil
}

// setCondition sets a condition with the generation it describes. The transition time changes
// only when the status does, so an unchanged condition leaves the status equal.
func setCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}

// conditionReason is the reason of a condition, "" when it is not set. It copies the value:
// meta.FindStatusCondition returns a pointer that the next SetStatusCondition overwrites.
func conditionReason(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Reason
	}
	return ""
}

// patchStatus writes obj's status when it differs from the snapshot taken before the pass, and
// not at all otherwise, so an unchanged resource costs no API write.
func patchStatus(ctx context.Context, c client.Client, before, obj client.Object, beforeStatus, status any) error {
	if equality.Semantic.DeepEqual(beforeStatus, status) {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("writing status: %w", err))
	}
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
