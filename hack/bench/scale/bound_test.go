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

// Where the operator tagged every bucket in a call of its own, the server kept no tags given at
// creation, and the bound must not give it any: Ceph RGW refuses such a CreateBucket.
func TestTheBoundCreatesWithTagsOnlyWhereTheServerKeepsThem(t *testing.T) {
	if !keepsTagsAtCreation(counts{"CreateBucket": 100, "GetBucketTagging": 3}, 100) {
		t.Error("versitygw's calls (a few tag reads while learning): want tags at creation")
	}
	if keepsTagsAtCreation(counts{"CreateBucket": 110, "PutBucketTagging": 100}, 100) {
		t.Error("Ceph RGW's calls (every bucket tagged after its creation): want no tags at creation")
	}
}
