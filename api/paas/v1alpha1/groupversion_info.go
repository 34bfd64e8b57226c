// Package v1alpha1 holds the paas.osm.dev/v1alpha1 API: Application, which runs an image and
// wires it to the Buckets it links.
// +kubebuilder:object:generate=true
// +groupName=paas.osm.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "paas.osm.dev", Version: "v1alpha1"}

	// SchemeBuilder adds the types of this API to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Application{}, &ApplicationList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
