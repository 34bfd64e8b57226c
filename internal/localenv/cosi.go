package localenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// COSIAPIModule is the module whose crds/ hold COSI v1alpha1's CRDs.
const COSIAPIModule = "sigs.k8s.io/container-object-storage-interface-api"

// COSICRDs are COSI's CRDs as its api module installs them: the files under crds/ with the
// annotations of the module's kustomization.yaml, among them api-approved.kubernetes.io, without
// which the API server refuses CRDs of a *.k8s.io group. The module is the version go.mod pins,
// from the module cache.
func COSICRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", COSIAPIModule)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding %s in the module cache: %w", COSIAPIModule, err)
	}
	dir := strings.TrimSpace(string(out))
	var kustomization struct {
		CommonAnnotations map[string]string `json:"commonAnnotations"`
		Resources         []string          `json:"resources"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(raw, &kustomization); err != nil {
		return nil, fmt.Errorf("reading %s's kustomization.yaml: %w", COSIAPIModule, err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, file := range kustomization.Resources {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		if crd.Annotations == nil {
			crd.Annotations = map[string]string{}
		}
		for k, v := range kustomization.CommonAnnotations {
			crd.Annotations[k] = v
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
