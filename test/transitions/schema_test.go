package transitions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// field is one spec field of a kind and the values its transitions go between; nil in values
// is "absent". immutable: the schema refuses every change of it once set (a transition rule
// self == oldSelf, or has(self.x) == has(oldSelf.x) on the spec).
type field struct {
	kind, name string
	values     []any
	immutable  bool
	base       map[string]any
	// absentKeeps: removing the field leaves the server as it is (the spec stops managing it).
	absentKeeps bool
	// existing are the values whose fresh object is made over a bucket that already exists,
	// as the live object's does when it is switched to them.
	existing []any
}

func (f field) String() string { return f.kind + ".spec." + f.name }

// fieldsOf reads kind's spec fields from its CRD and gives each its values: an enum's members
// and true for a boolean from the schema, the rest from testdata/values.yaml, and absent unless
// the field is required. A field with no values fails the test.
func fieldsOf(t *testing.T, kind, crdFile string, table map[string]map[string]tableEntry) []field {
	t.Helper()
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", crdFile))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	var fields []field
	for name, prop := range spec.Properties {
		entry := table[kind][name]
		f := field{kind: kind, name: name, immutable: immutable(name, prop, spec), base: entry.Base, absentKeeps: entry.AbsentKeeps,
			existing: entry.Existing}
		for _, e := range prop.Enum {
			var v any
			if err := json.Unmarshal(e.Raw, &v); err != nil {
				t.Fatal(err)
			}
			f.values = append(f.values, v)
		}
		if prop.Type == "boolean" {
			f.values = append(f.values, true)
		}
		f.values = append(f.values, entry.Values...)
		if len(f.values) == 0 {
			t.Errorf("%s: no values to change it between: give it some in testdata/values.yaml", f)
			continue
		}
		if !slices.Contains(spec.Required, name) {
			f.values = append(f.values, nil)
		}
		fields = append(fields, f)
	}
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
	return fields
}

func immutable(name string, prop, spec apiextensionsv1.JSONSchemaProps) bool {
	for _, v := range prop.XValidations {
		if v.Rule == "self == oldSelf" {
			return true
		}
	}
	for _, v := range spec.XValidations {
		if v.Rule == fmt.Sprintf("has(self.%s) == has(oldSelf.%s)", name, name) {
			return true
		}
	}
	return false
}

// tableEntry is a field's line in testdata/values.yaml.
type tableEntry struct {
	Values      []any          `json:"values"`
	Base        map[string]any `json:"base"`
	AbsentKeeps bool           `json:"absentKeeps"`
	Existing    []any          `json:"existing"`
}

func readTable(t *testing.T) map[string]map[string]tableEntry {
	t.Helper()
	raw, err := os.ReadFile("testdata/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var table map[string]map[string]tableEntry
	if err := yaml.UnmarshalStrict(raw, &table); err != nil {
		t.Fatalf("testdata/values.yaml: %v", err)
	}
	return table
}

// walk is an order of values' indexes in which every ordered pair of distinct values is one
// step: from each value to each other one, removal and setting again included.
func walk(n int) []int {
	seq := []int{0}
	for i := range n {
		if seq[len(seq)-1] != i {
			seq = append(seq, i)
		}
		for j := i + 1; j < n; j++ {
			seq = append(seq, j, i)
		}
	}
	return seq
}
