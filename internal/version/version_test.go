package version

import (
	"strings"
	"testing"
)

func TestLineNamesCommandAndVersion(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })

	Version = "v1.2.3-4-gabcdef0"
	if got := Line("manager"); !strings.HasPrefix(got, "manager v1.2.3-4-gabcdef0 (go") {
		t.Errorf("Line(manager) = %q, want it to start with the command, the linked version and the Go version", got)
	}
	// A test binary has no module version of its own.
	Version = ""
	if got := Get(); got != "devel" {
		t.Errorf("Get() without a linked version = %q, want devel", got)
	}
}
