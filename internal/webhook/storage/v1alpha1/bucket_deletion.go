package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// validateDeletion refuses spec.deletion.emptyOnDelete on a Bucket that keeps its bucket: the
// deletion never empties a bucket it leaves, so the field would promise what does not happen.
func validateDeletion(spec *storagev1alpha1.BucketSpec) field.ErrorList {
	if !spec.Deletion.Empties() || spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "deletion", "emptyOnDelete"), true,
		"empties the bucket only when its deletion deletes it: set spec.bucketReclaimPolicy to Delete, or leave emptyOnDelete out")}
}

// deletionWarnings says, when emptyOnDelete is turned on or its cap changes, what deleting the
// Bucket will destroy.
func deletionWarnings(spec, old *storagev1alpha1.BucketSpec) admission.Warnings {
	if !spec.Deletion.Empties() || old != nil && old.Deletion.Empties() && old.Deletion.Cap() == spec.Deletion.Cap() {
		return nil
	}
	return admission.Warnings{fmt.Sprintf(
		"spec.deletion.emptyOnDelete: deleting this Bucket deletes up to %d object versions and delete markers in bucket %s, "+
			"which cannot be undone (objects under object lock are left)", spec.Deletion.Cap(), spec.BucketName)}
}
