package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

const (
	// The Contract controller's Ready message, before and after the test's edit.
	readyBefore = "its credentials are in Secret"
	readyAfter  = "its credentials live in Secret"
	// controllerFile is the file the test edits, relative to the module.
	controllerFile = "internal/controller/storage/contract_conditions.go"
	// reloadTimeout bounds one reload: a warm build and a restart take seconds.
	reloadTimeout = 2 * time.Minute
)

// TestReload is the developer loop of `make dev`: with osm-dev running over a copy of the
// module, an edit to a controller is built and running within seconds, while the Contract made
// before stays; an edit that does not compile is reported and leaves the running manager alone.
func TestReload(t *testing.T) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := copyModule(root, src); err != nil {
		t.Fatal(err)
	}
	d, env, err := launchOSMDev("--source-dir", src)
	t.Cleanup(func() {
		for _, err := range d.stop() {
			t.Error(err)
		}
		if t.Failed() && d != nil {
			t.Logf("last lines of osm-dev's output (%s):\n%s", d.outPath, tail(d.outPath, 40))
		}
		if d != nil {
			_ = os.RemoveAll(d.root)
		}
	})
	if err != nil {
		t.Fatalf("osm-dev over a copy of the module: %v", err)
	}
	k := &kubectl{env: env, namespace: "demo", logf: t.Logf}

	createContract(t, k, "before")
	waitReadyMessage(t, k, "before", readyBefore, time.Minute)
	uid, err := k.must(30*time.Second, "get", "contract", "before", "-o", "jsonpath={.metadata.uid}")
	if err != nil {
		t.Fatal(err)
	}

	// A one-line change in a controller.
	file := filepath.Join(src, controllerFile)
	editFile(t, file, func(s string) string { return strings.Replace(s, readyBefore, readyAfter, 1) })
	saved := time.Now()
	waitReadyMessage(t, k, "before", readyAfter, reloadTimeout)
	t.Logf("saved → the new manager's message on the Contract in %.1fs", time.Since(saved).Seconds())
	t.Log(waitOutput(t, d, "reload  "+controllerFile+" → manager restarted in", 10*time.Second))
	if got, err := k.must(30*time.Second, "get", "contract", "before", "-o", "jsonpath={.metadata.uid}"); err != nil || got != uid {
		t.Errorf("the Contract made before the reload: uid %q (%v), want %q: the reload must keep the cluster", got, err, uid)
	}

	// An edit that does not compile.
	editFile(t, file, func(s string) string { return s + "\nfunc broken( {\n" })
	saved = time.Now()
	line := waitOutput(t, d, "reload  "+controllerFile+" → build failed; the old manager keeps running", reloadTimeout)
	t.Logf("saved → build failure reported in %.1fs", time.Since(saved).Seconds())
	// One line: the first compiler error in it, the rest in a log file it names.
	if !strings.Contains(line, "syntax error") || !strings.Contains(line, filepath.Join("logs", "reload.log")) {
		t.Errorf("the failed reload's line names neither the compiler's error nor logs/reload.log: %q", line)
	}
	// The manager that runs is the one built before: it admits a new Contract and sets the
	// edited message on it.
	createContract(t, k, "after")
	waitReadyMessage(t, k, "after", readyAfter, time.Minute)
}

// copyModule copies the module's tree to dst, without what is built or generated locally
// (.git, bin, .osm-dev, .certs).
func copyModule(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", ".osm-dev", ".certs":
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

func createContract(t *testing.T, k *kubectl, name string) {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: %s
spec:
  plan: standard
  displayName: Reload test
`, name)
	if r := k.run(30*time.Second, []byte(manifest), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
}

// waitReadyMessage waits until the Contract's Ready message contains want.
func waitReadyMessage(t *testing.T, k *kubectl, name, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		// Polled, so not logged.
		r := (&kubectl{env: k.env, namespace: k.namespace}).run(10*time.Second, nil, "get", "contract", name,
			"-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`)
		if r.Err == nil {
			last = r.Stdout
			if strings.Contains(last, want) {
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("Contract %s: Ready message %q after %s, want one containing %q", name, last, timeout, want)
}

// editFile rewrites a file as an editor saves it.
func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := edit(string(raw))
	if changed == string(raw) {
		t.Fatalf("the edit changes nothing in %s", path)
	}
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitOutput waits until osm-dev's output contains want, and returns the line that holds it.
func waitOutput(t *testing.T, d *osmDev, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := os.ReadFile(d.outPath)
		if i := bytes.Index(out, []byte(want)); err == nil && i >= 0 {
			line, _, _ := bytes.Cut(out[i:], []byte("\n"))
			return string(line)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("osm-dev did not print %q within %s", want, timeout)
	return ""
}
