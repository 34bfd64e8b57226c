package metricsauth_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The manager links none of k8s.io/apiserver, nor the cel-go, gRPC and OpenTelemetry it brings:
// controller-runtime's metrics filter did, for 34 of the binary's 88 MB. A new import that brings
// them back fails here, naming the package that imports them.
func TestManagerDoesNotLinkTheAPIServerLibrary(t *testing.T) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	list := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./cmd/manager")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/manager: %v", err)
	}
	banned := func(pkg string) bool {
		for _, module := range []string{"k8s.io/apiserver", "github.com/google/cel-go", "go.opentelemetry.io", "google.golang.org/grpc"} {
			if pkg == module || strings.HasPrefix(pkg, module+"/") {
				return true
			}
		}
		return false
	}
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), " ")
		if banned(pkg) {
			continue
		}
		for _, imported := range strings.Fields(imports) {
			if banned(imported) {
				t.Errorf("%s imports %s", pkg, imported)
			}
		}
	}
}
