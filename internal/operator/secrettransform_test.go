package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestSecretTransformKeepsOnlyTheKeysTheOperatorReads(t *testing.T) {
	controlled := func(apiVersion, kind string) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", Controller: &yes}}
	}
	for _, tc := range []struct {
		name     string
		owners   []metav1.OwnerReference
		keepData bool
	}{
		{"a Contract's keys", controlled(storagev1alpha1.GroupVersion.String(), "Contract"), true},
		{"a BucketAccess's keys", controlled(storagev1alpha1.GroupVersion.String(), "BucketAccess"), true},
		{"a Secret anyone labelled, a user's own account's too (read apart: accountSecrets)", nil, false},
		{"another controller's Secret", controlled("apps/v1", "Deployment"), false},
		{"a Contract of another group", controlled("example.com/v1", "Contract"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", OwnerReferences: tc.owners,
				Labels: map[string]string{storagev1alpha1.ContractLabel: "c"}, Annotations: map[string]string{"a": "b"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
				Data: map[string][]byte{storagev1alpha1.SecretKeyAccessKeyID: []byte("AK")}}
			out, err := SecretTransform(secret)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*corev1.Secret)
			if got.ManagedFields != nil {
				t.Error("managedFields kept")
			}
			if kept := got.Data != nil; kept != tc.keepData {
				t.Errorf("data kept = %v, want %v", kept, tc.keepData)
			}
			if got.Labels[storagev1alpha1.ContractLabel] != "c" {
				t.Error("the label the ownership checks read is gone")
			}
		})
	}
}
