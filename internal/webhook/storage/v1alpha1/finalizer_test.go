package v1alpha1

import (
	"context"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// A resource is created with its finalizer, so its controller need not write it; an update
// never puts one back that someone removed by hand.
func TestTheFinalizerIsPutOnAtCreationOnly(t *testing.T) {
	at := func(op admissionv1.Operation) context.Context {
		return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op}})
	}
	kinds := map[string]func(context.Context) (client.Object, error){
		"Contract": func(ctx context.Context) (client.Object, error) {
			c := &storagev1alpha1.Contract{}
			c.Name = "team-a"
			return c, (&ContractDefaulter{}).Default(ctx, c)
		},
		"Contract with a generated name": func(ctx context.Context) (client.Object, error) {
			c := &storagev1alpha1.Contract{}
			c.GenerateName = "team-"
			return c, (&ContractDefaulter{}).Default(ctx, c)
		},
		"Bucket": func(ctx context.Context) (client.Object, error) {
			b := validBucket()
			return b, (&BucketDefaulter{}).Default(ctx, b)
		},
		"BucketAccess": func(ctx context.Context) (client.Object, error) {
			a := &storagev1alpha1.BucketAccess{}
			a.Name = "reader"
			return a, (&BucketAccessDefaulter{}).Default(ctx, a)
		},
	}
	for kind, defaulted := range kinds {
		for op, want := range map[admissionv1.Operation]bool{admissionv1.Create: true, admissionv1.Update: false} {
			obj, err := defaulted(at(op))
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if got := slices.Contains(obj.GetFinalizers(), storagev1alpha1.Finalizer); got != want {
				t.Errorf("%s at %s: finalizer %v, want %v", kind, op, got, want)
			}
		}
	}
}
