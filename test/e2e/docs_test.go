package e2e

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// docCommand is one "$ command" of a console block and the output the page shows under it.
type docCommand struct {
	// line is where the command starts in the page, 1-based.
	line    int
	command string
	output  []string
	// outputLines is where the output is in the page: [start, end) as 0-based line indexes.
	outputStart, outputEnd int
}

// readConsoleCommands reads every command of the page's ```console blocks: a line that starts
// with "$ ", its continuation lines (a trailing "\", or a here-document up to its delimiter),
// and the lines after it up to the next command or the end of the block as its output.
func readConsoleCommands(lines []string) ([]docCommand, error) {
	var cmds []docCommand
	inBlock := false
	heredoc := regexp.MustCompile(`<<-?'?([A-Z]+)'?`)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case !inBlock && strings.HasPrefix(l, "```console"):
			inBlock = true
			continue
		case inBlock && strings.HasPrefix(l, "```"):
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		if !strings.HasPrefix(l, "$ ") {
			if len(cmds) == 0 || cmds[len(cmds)-1].outputEnd != i {
				return nil, fmt.Errorf("line %d: output with no command before it in its block: %q", i+1, l)
			}
			c := &cmds[len(cmds)-1]
			c.output = append(c.output, l)
			c.outputEnd = i + 1
			continue
		}
		c := docCommand{line: i + 1, command: strings.TrimPrefix(l, "$ ")}
		for strings.HasSuffix(lines[i], `\`) && i+1 < len(lines) {
			i++
			c.command += "\n" + lines[i]
		}
		if m := heredoc.FindStringSubmatch(c.command); m != nil {
			for i+1 < len(lines) {
				i++
				c.command += "\n" + lines[i]
				if lines[i] == m[1] {
					break
				}
			}
		}
		c.outputStart, c.outputEnd = i+1, i+1
		cmds = append(cmds, c)
	}
	if inBlock {
		return nil, fmt.Errorf("a console block is not closed")
	}
	return cmds, nil
}

// skipped says why the page test does not run a command itself: the suite started osm-dev
// (make dev) and built the plugin, and sets KUBECONFIG and PATH.
func skipped(command string) bool {
	return strings.HasPrefix(command, "make ") || strings.HasPrefix(command, "export KUBECONFIG=") ||
		strings.HasPrefix(command, "export PATH=")
}

// Shapes: what changes from run to run, replaced by a name in both the page and the run.
var (
	timestamp  = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?`)
	hostPort   = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	pid        = regexp.MustCompile(`pid \d+`)
	accessKey  = regexp.MustCompile(`\bOSM[A-Z0-9]{17}\b`)
	age        = regexp.MustCompile(`\b\d+(\.\d+)?[smhd](\d+[smh])?\b`)
	absPath    = regexp.MustCompile(`(^|[\s=(])/[^\s,;)]+`)
	idLike     = regexp.MustCompile(`\b[a-z0-9]{16}\b`)
	whitespace = regexp.MustCompile(`\s+`)
)

// shape is an output reduced to what must match between the page and a run: no times, ages,
// ports, pids, keys, contract ids or local paths, whitespace collapsed (columns are as wide as
// their values), empty lines and admission warnings dropped (a warning depends on whether a
// controller got there first).
func shape(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Warning:") {
			continue
		}
		l = timestamp.ReplaceAllString(l, "TIME")
		l = hostPort.ReplaceAllString(l, "$1:PORT")
		l = pid.ReplaceAllString(l, "pid N")
		l = accessKey.ReplaceAllString(l, "KEY")
		l = absPath.ReplaceAllString(l, "${1}PATH")
		l = idLike.ReplaceAllStringFunc(l, func(s string) string {
			if strings.ContainsAny(s, "0123456789") {
				return "ID"
			}
			return s
		})
		l = age.ReplaceAllString(l, "AGE")
		out = append(out, whitespace.ReplaceAllString(l, " "))
	}
	return out
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
	cmds, err := readConsoleCommands(lines)
	if err != nil {
		t.Fatalf("%s: %v", gettingStarted, err)
	}

	// make dev: the page's output is osm-dev's, less make's echo of the recipe and what
	// --watch=false (the suite's) leaves out.
	sawMakeDev := false
	for _, c := range cmds {
		if c.command != "make dev" {
			continue
		}
		sawMakeDev = true
		if dev == nil {
			break // an environment of the user's: its output is not ours to read
		}
		var want []string
		for _, l := range c.output {
			if !strings.HasPrefix(l, "go run ") && !strings.HasPrefix(l, "Saving a file under") {
				want = append(want, l)
			}
		}
		if diff := cmp.Diff(shape(want), shape(startOutput(t))); diff != "" {
			t.Errorf("%s:%d: make dev prints another shape than the page shows (-page +osm-dev):\n%s", gettingStarted, c.line, diff)
		}
	}
	if !sawMakeDev {
		t.Errorf("%s shows no `$ make dev`", gettingStarted)
	}

	t.Cleanup(func() { cleanUpGettingStarted(t, env) })
	outputs := runPage(t, env, root, cmds)

	for i, c := range cmds {
		if skipped(c.command) {
			continue
		}
		got, ok := outputs[i]
		if !ok {
			t.Errorf("%s:%d: %s: no output recorded: the page's run stopped before it", gettingStarted, c.line, c.command)
			continue
		}
		if *updateDocs {
			continue
		}
		if diff := cmp.Diff(shape(c.output), shape(got)); diff != "" {
			t.Errorf("%s:%d: $ %s\nthe output has another shape than the page shows (-page +run):\n%s", gettingStarted, c.line, c.command, diff)
		}
	}
	if *updateDocs {
		writeOutputs(t, page, lines, cmds, outputs)
	}
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
func runPage(t *testing.T, env *Env, root string, cmds []docCommand) map[int][]string {
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
		if skipped(c.command) {
			continue
		}
		fmt.Fprintf(&script, "printf '\\n%s %d\\n'\n{\n%s\n} 2>&1\n", marker, i, c.command)
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
func writeOutputs(t *testing.T, page string, lines []string, cmds []docCommand, outputs map[int][]string) {
	t.Helper()
	var out []string
	next := 0
	for i, c := range cmds {
		got, ok := outputs[i]
		if skipped(c.command) || !ok {
			continue
		}
		out = append(out, lines[next:c.outputStart]...)
		out = append(out, got...)
		next = c.outputEnd
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
		dir, err := os.MkdirTemp("", "osm-e2e-plugin-")
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
