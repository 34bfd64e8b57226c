package v1alpha1

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// bucketReader is a client.Reader over a fixed set of Buckets, enough for the validator's Gets;
// the envtest suite covers the real API reader.
type bucketReader struct {
	buckets map[client.ObjectKey]*storagev1alpha1.Bucket
	err     error
}

func (r bucketReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.err != nil {
		return r.err
	}
	b, ok := r.buckets[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "storage.osm.dev", Resource: "buckets"}, key.Name)
	}
	b.DeepCopyInto(obj.(*storagev1alpha1.Bucket))
	return nil
}

func (r bucketReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("bucketReader does not list")
}

// causes renders the field errors of err as the API server returns them, one "field: message"
// per error, which is how kubectl prints them; nil for a nil error.
func causes(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("error is not an Invalid status: %v", err)
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	return out
}
