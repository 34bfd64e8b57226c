package localenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply creates each object of a multi-document YAML, or replaces it when it exists.
func Apply(ctx context.Context, c client.Client, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeObjects(data)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if err := ApplyObject(ctx, c, o); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// DecodeObjects decodes a multi-document YAML, skipping empty documents.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ApplyObject creates u, or replaces the object when it exists.
func ApplyObject(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	err := c.Create(ctx, u)
	if apierrors.IsAlreadyExists(err) {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(u.GroupVersionKind())
		if err = c.Get(ctx, client.ObjectKeyFromObject(u), existing); err == nil {
			u.SetResourceVersion(existing.GetResourceVersion())
			err = c.Update(ctx, u)
		}
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// admissionPolicyKinds are what ApplyAdmissionPolicies applies; envtest installs the webhook
// configurations of the same folders and skips every other kind.
var admissionPolicyKinds = []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}

// ApplyAdmissionPolicies applies the admission policies (config/webhook/finalizer-policy.yaml)
// found in the YAML files of dirs, as the chart does on a cluster that serves them.
func ApplyAdmissionPolicies(ctx context.Context, c client.Client, dirs []string) (int, error) {
	n := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return n, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return n, err
			}
			objs, err := DecodeObjects(data)
			if err != nil {
				return n, fmt.Errorf("%s: %w", f, err)
			}
			for _, o := range objs {
				if !slices.Contains(admissionPolicyKinds, o.GetKind()) {
					continue
				}
				if err := ApplyObject(ctx, c, o); err != nil {
					return n, fmt.Errorf("%s: %w", f, err)
				}
				n++
			}
		}
	}
	return n, nil
}
