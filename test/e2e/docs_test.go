package e2e

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/consoledoc"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// updateDocs rewrites the outputs of docs/getting-started.md with what this run printed, for
// whoever changes the page: the rule is that every output there is from a real run.
var updateDocs = flag.Bool("update-docs", false, "rewrite the outputs in docs/getting-started.md with this run's")

const (
	gettingStarted = "docs/getting-started.md"
	// pageTimeout bounds the whole page's commands.
	pageTimeout = 8 * time.Minute
	// maxStartLines is how many lines osm-dev may print from its start to its ready block.
	maxStartLines = 30
)

// skipped says which commands the page test does not run itself: the suite started osm-dev
// (make dev) and built the plugin, and sets KUBECONFIG and PATH.
func skipped(command string) bool {
	return strings.HasPrefix(command, "make ") || strings.HasPrefix(command, "export KUBECONFIG=") ||
		strings.HasPrefix(command, "export PATH=")
}

// TestGettingStarted re-runs the commands of docs/getting-started.md, in order, in one shell
// (so variables an eval set stay set), against the suite's osm-dev, and compares the shape of
// each command's output with the page's. The page's `make dev` output is compared with what
// the suite's osm-dev printed.
func TestGettingStarted(t *testing.T) {
	env := requireEnv(t)
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, gettingStarted)
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	cmds, err := consoledoc.Commands(lines)
	if err != nil {
		t.Fatalf("%s: %v", gettingStarted, err)
	}

	// make dev: the page's output is osm-dev's, less make's echo of the recipe and what
	// --watch=false (the suite's) leaves out.
	sawMakeDev := false
	for _, c := range cmds {
		if c.Text != "make dev" {
			continue
		}
		sawMakeDev = true
		if dev == nil {
			break // an environment of the user's: its output is not ours to read
		}
		var want []string
		for _, l := range c.Output {
			if !strings.HasPrefix(l, "go run ") && !strings.HasPrefix(l, "Saving a file under") {
				want = append(want, l)
			}
		}
		if diff := cmp.Diff(consoledoc.Shape(want), consoledoc.Shape(startOutput(t))); diff != "" {
			t.Errorf("%s:%d: make dev prints another shape than the page shows (-page +osm-dev):\n%s", gettingStarted, c.Line, diff)
		}
	}
	if !sawMakeDev {
		t.Errorf("%s shows no `$ make dev`", gettingStarted)
	}

	t.Cleanup(func() { cleanUpGettingStarted(t, env) })
	outputs := runPage(t, env, root, cmds)

	for i, c := range cmds {
		if skipped(c.Text) {
			continue
		}
		got, ok := outputs[i]
		if !ok {
			t.Errorf("%s:%d: %s: no output recorded: the page's run stopped before it", gettingStarted, c.Line, c.Text)
			continue
		}
		if *updateDocs {
			continue
		}
		if diff := cmp.Diff(inOrder(c.Text, consoledoc.Shape(c.Output)), inOrder(c.Text, consoledoc.Shape(got))); diff != "" {
			t.Errorf("%s:%d: $ %s\nthe output has another shape than the page shows (-page +run):\n%s", gettingStarted, c.Line, c.Text, diff)
		}
	}
	if *updateDocs {
		writeOutputs(t, page, lines, cmds, outputs)
	}
}

// inOrder sorts the lines of a command that lists a resource's conditions. Conditions are a
// map keyed by type (+listType=map): their order follows the resource's history (which
// condition a pass set first), and is no part of what the page promises.
func inOrder(cmd string, lines []string) []string {
	if !strings.Contains(cmd, ".status.conditions[*]") {
		return lines
	}
	return slices.Sorted(slices.Values(lines))
}

// startOutput is what osm-dev printed from its start to the end of its ready block.
func startOutput(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dev.outPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		out = append(out, l)
		if strings.HasPrefix(l, "Logs: ") {
			return out
		}
	}
	t.Fatalf("osm-dev's output (%s) has no ready block ending with \"Logs: ...\"", dev.outPath)
	return nil
}

// runPage runs the page's commands in one bash, in a folder of its own that sees the
// module's config/ and hack/, and returns each command's output (stdout and stderr) by index.
// The plugin is built into a folder put first on PATH, so `kubectl osm` runs this tree's.
func runPage(t *testing.T, env *Env, root string, cmds []consoledoc.Command) map[int][]string {
	t.Helper()
	work := t.TempDir()
	for _, dir := range []string{"config", "hack"} {
		if err := os.Symlink(filepath.Join(root, dir), filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
	}
	binDir := pluginDir(t)
	var script strings.Builder
	const marker = "@@getting-started@@"
	for i, c := range cmds {
		if skipped(c.Text) {
			continue
		}
		fmt.Fprintf(&script, "printf '\\n%s %d\\n'\n{\n%s\n} 2>&1\n", marker, i, c.Text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pageTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(withoutAWS(os.Environ()),
		"KUBECONFIG="+env.Kubeconfig,
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		// The AWS CLI reads only what the page's commands export.
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_PAGER=",
	)
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Errorf("the page's commands did not finish within %s", pageTimeout)
	} else if err != nil {
		t.Logf("bash: %v (a command that fails on purpose, like a refused upload, is compared as any other)", err)
	}
	outputs := map[int][]string{}
	current := -1
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if n, ok := strings.CutPrefix(l, marker+" "); ok {
			current, _ = strconv.Atoi(n)
			outputs[current] = nil
			continue
		}
		if current >= 0 {
			// What a terminal shows: a carriage return (the AWS CLI's progress line) starts
			// the line over.
			if i := strings.LastIndex(l, "\r"); i >= 0 {
				l = strings.TrimRight(l[i+1:], " ")
			}
			outputs[current] = append(outputs[current], l)
		}
	}
	for i, o := range outputs {
		// The marker's own newline leaves an empty line before it.
		for len(o) > 0 && o[len(o)-1] == "" {
			o = o[:len(o)-1]
		}
		outputs[i] = o
	}
	return outputs
}

// withoutAWS is an environment without the AWS_* variables of whoever runs the suite.
func withoutAWS(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return out
}

// writeOutputs puts each command's output from this run under it in the page.
func writeOutputs(t *testing.T, page string, lines []string, cmds []consoledoc.Command, outputs map[int][]string) {
	t.Helper()
	var out []string
	next := 0
	for i, c := range cmds {
		got, ok := outputs[i]
		if skipped(c.Text) || !ok {
			continue
		}
		out = append(out, lines[next:c.OutputStart]...)
		out = append(out, got...)
		next = c.OutputEnd
	}
	out = append(out, lines[next:]...)
	if err := os.WriteFile(page, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote the outputs of %s", page)
}

// cleanUpGettingStarted leaves namespace demo as osm-dev makes it, whatever step the page
// stopped at: the page ends by deleting it.
func cleanUpGettingStarted(t *testing.T, env *Env) {
	k := &kubectl{env: env, logf: t.Logf}
	for _, ns := range []string{"demo", "trouble"} {
		if _, err := k.must(goneTimeout+kubectlSlack, "delete", "namespace", ns, "--ignore-not-found", "--timeout="+goneTimeout.String()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	if _, err := k.must(quick, "create", "namespace", "demo"); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

var (
	pluginOnce sync.Once
	pluginBin  string
	pluginErr  error
)

// pluginDir builds kubectl-osm into a folder of its own, once per run of the suite, and
// returns the folder, to put first on PATH.
func pluginDir(t *testing.T) string {
	t.Helper()
	pluginOnce.Do(func() {
		root, err := localenv.ModuleRoot()
		if err != nil {
			pluginErr = err
			return
		}
		dir, err := suiteBinDir()
		if err != nil {
			pluginErr = err
			return
		}
		pluginBin = filepath.Join(dir, "kubectl-osm")
		build := exec.Command("go", "build", "-o", pluginBin, "./cmd/kubectl-osm")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("go build ./cmd/kubectl-osm: %v\n%s", err, out)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return filepath.Dir(pluginBin)
}

// TestStartFitsOnAScreen: from its start to its ready block, make dev prints at most 30
// lines, and none of them is the manager's own log (which goes to logs/manager.log).
func TestStartFitsOnAScreen(t *testing.T) {
	requireEnv(t)
	if dev == nil {
		t.Fatalf("%s is set: this test reads the output of an osm-dev the suite started", envFileVar)
	}
	lines := startOutput(t)
	if len(lines) > maxStartLines {
		t.Errorf("osm-dev printed %d lines from its start to its ready block, more than %d:\n%s", len(lines), maxStartLines, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			t.Errorf("osm-dev's terminal shows a log line of the manager's: %s", l)
		}
	}
	// Nothing but the reload lines after the ready block either: the manager logs to its file.
	raw, err := os.ReadFile(dev.outPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"logger":`) {
		t.Errorf("osm-dev's output (%s) holds the manager's JSON log lines", dev.outPath)
	}
	if log, err := os.ReadFile(sharedEnv.ManagerLog); err != nil || !strings.Contains(string(log), "Starting manager") {
		t.Errorf("the manager's log %s does not hold its start-up lines (%v)", sharedEnv.ManagerLog, err)
	}
	t.Logf("osm-dev: %d lines from start to ready", len(lines))
}
