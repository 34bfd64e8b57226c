package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadCaseRejects shows that a mistake in a case.yaml fails when the fixtures load, with a
// message that names it, rather than as a puzzling step.
func TestLoadCaseRejects(t *testing.T) {
	tests := []struct {
		name, caseYAML, want string
	}{
		{"unknown field", "description: d\nstepz: []\n", `unknown field "stepz"`},
		{"no description", "steps:\n  - wait: [bucket/a]\n", "description is required"},
		{"two actions", "description: d\nsteps:\n  - {wait: [bucket/a], delete: [bucket/a]}\n", "want exactly one of"},
		{"misspelt option", "description: d\nsteps:\n  - {wait: [bucket/a], fro: condition=Ready}\n", `unknown field "fro"`},
		{"missing manifest", "description: d\nsteps:\n  - apply: [nope.yaml]\n", "nope.yaml"},
		{"resource without kind", "description: d\nsteps:\n  - wait: [a]\n", "kind/name"},
		{"S3 check without contract", "description: d\nsteps:\n  - expect: [{bucket: b, objects: 0}]\n", "need the case's contract"},
		{"absent bucket with more checks", "description: d\ncontract: c\nsteps:\n  - expect: [{bucket: b, exists: false, objects: 0}]\n", "nothing else to check"},
		{"two policies", "description: d\ncontract: c\nsteps:\n  - expect: [{bucket: b, noPolicy: true, policyFromSpec: bucket/b}]\n", "at most one of"},
		{"bad timeout", "description: d\nsteps:\n  - {wait: [bucket/a], timeout: soon}\n", "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "case")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, caseFile), []byte(tt.caseYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadCase(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("loadCase error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	values := map[string]string{"NAMESPACE": "e2e-x-abcde", "ACCESS_KEY_ID:reader": "KEY1"}
	resolve := func(name, arg string) (string, error) {
		if arg != "" {
			name += ":" + arg
		}
		v, ok := values[name]
		if !ok {
			return "", os.ErrNotExist
		}
		return v, nil
	}
	got, err := expand("bucketName: ${NAMESPACE}-site # ${ACCESS_KEY_ID:reader}", resolve)
	if err != nil || got != "bucketName: e2e-x-abcde-site # KEY1" {
		t.Errorf("expand = %q, %v", got, err)
	}
	if _, err := expand("${UNKNOWN}", resolve); err == nil {
		t.Error("expand of an unknown placeholder: no error")
	}
	values["NAMESPACE"] = `a"b`
	if _, err := expand("${NAMESPACE}", resolve); err == nil || !strings.Contains(err.Error(), "quoting") {
		t.Errorf("expand of a value that needs quoting: %v", err)
	}
}
