package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTheReplayPatchesAsTheFieldManagersThatWroteTheSample(t *testing.T) {
	b := &unstructured.Unstructured{}
	b.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "scale", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:bucketName":{}}}`)},
		{Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:finalizers":{".":{}}}}`)},
		{Manager: "status-writer", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:bucketName":{}}}`)},
	})
	if finalizers, status := writers(b); finalizers != "manager" || status != "status-writer" {
		t.Errorf("writers = %q, %q; want the finalizer's writer \"manager\" and the status's \"status-writer\"", finalizers, status)
	}
	if finalizers, status := writers(&unstructured.Unstructured{}); finalizers != "" || status != "" {
		t.Errorf("writers of a Bucket without managedFields = %q, %q; want the client's defaults (empty)", finalizers, status)
	}
}
