package upgrade

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// revision is an older tree's manager and the CRDs and webhooks it was shipped with.
type revision struct {
	name     string
	manager  string // the built binary
	crds     string // config/crd/bases of that tree
	webhooks string // config/webhook of that tree
}

// fromRevisions are the revisions to upgrade from: OSM_UPGRADE_FROM (make test-upgrade
// FROM=...), or every one listed in from.txt.
func fromRevisions(t *testing.T) []string {
	t.Helper()
	if from := os.Getenv("OSM_UPGRADE_FROM"); from != "" {
		return []string{from}
	}
	f, err := os.Open("from.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var revs []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			revs = append(revs, strings.Fields(line)[0])
		}
	}
	if len(revs) == 0 {
		t.Fatal("from.txt lists no revision")
	}
	return revs
}

// checkOut builds the manager of rev from a worktree of this repository, removed when the test
// ends. A shallow clone lacks old revisions: the error says so.
func checkOut(t *testing.T, rev string) revision {
	t.Helper()
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tree")
	if out, err := git(root, "worktree", "add", "--detach", dir, rev); err != nil {
		t.Fatalf("checking out %s (a shallow clone has no older revisions: git fetch --unshallow): %v\n%s", rev, err, out)
	}
	t.Cleanup(func() {
		if out, err := git(root, "worktree", "remove", "--force", dir); err != nil {
			t.Errorf("removing the worktree of %s: %v\n%s", rev, err, out)
		}
	})
	bin := filepath.Join(t.TempDir(), "manager-"+rev)
	fmt.Fprintf(os.Stderr, "upgrade: building the manager of %s\n", rev)
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager of %s: %v\n%s", rev, err, out)
	}
	return revision{name: rev, manager: bin, crds: filepath.Join(dir, "config", "crd", "bases"), webhooks: filepath.Join(dir, "config", "webhook")}
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}
