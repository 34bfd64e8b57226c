// Package v1alpha1 holds the storage.osm.dev/v1alpha1 API: Contract, which buys object storage
// from a provider, and Bucket, which makes a bucket under a Contract.
// +kubebuilder:object:generate=true
// +groupName=storage.osm.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "storage.osm.dev", Version: "v1alpha1"}

	// SchemeBuilder adds the types of this API to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Contract{}, &ContractList{}, &Bucket{}, &BucketList{},
		&BucketAccess{}, &BucketAccessList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
