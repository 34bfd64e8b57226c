// Package webhooktest helps the webhooks' unit tests: a reader over fixed objects in place of
// the API server (the envtest suites cover the real one), and the field errors of a refusal as
// kubectl prints them.
package webhooktest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reader is a client.Reader over a fixed set of objects, enough for a validator's Gets.
type Reader struct {
	Objects []client.Object
	// Err, when set, is what every call returns, as when the API server cannot be reached.
	Err error
}

// Get copies the object of obj's type with that key into obj, or returns NotFound.
func (r Reader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.Err != nil {
		return r.Err
	}
	for _, o := range r.Objects {
		if reflect.TypeOf(o) == reflect.TypeOf(obj) && client.ObjectKeyFromObject(o) == key {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(o.DeepCopyObject()).Elem())
			return nil
		}
	}
	resource := strings.ToLower(reflect.TypeOf(obj).Elem().Name()) + "s"
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, key.Name)
}

// List returns the Objects of the list's item type, in the namespace the options name (all
// namespaces when none). A field selector is refused with 400 Bad Request, as an API server
// older than Kubernetes 1.31 refuses one on a custom resource; label selectors are not
// supported.
func (r Reader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if r.Err != nil {
		return r.Err
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if o.FieldSelector != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", o.FieldSelector))
	}
	if o.LabelSelector != nil {
		return errors.New("webhooktest.Reader lists by namespace only")
	}
	items := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !items.IsValid() {
		return fmt.Errorf("webhooktest.Reader cannot list into %T", list)
	}
	for _, obj := range r.Objects {
		v := reflect.ValueOf(obj.DeepCopyObject()).Elem()
		if v.Type() == items.Type().Elem() && (o.Namespace == "" || obj.GetNamespace() == o.Namespace) {
			items.Set(reflect.Append(items, v))
		}
	}
	return nil
}

// Causes renders the field errors of err as the API server returns them, one "field: message"
// per error, which is how kubectl prints them; nil for a nil error.
func Causes(t testing.TB, err error) []string {
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
