package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger returns a Lazy logger over controller-runtime's zap, as the manager makes it, with
// callers annotated, writing JSON lines into the returned buffer.
func newLogger() (logr.Logger, *bytes.Buffer) {
	var out bytes.Buffer
	return Lazy(zap.New(zap.WriteTo(&out), zap.UseDevMode(false), zap.RawZapOpts(uberzap.AddCaller()))), &out
}

func lines(t *testing.T, out *bytes.Buffer) []map[string]any {
	t.Helper()
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		got = append(got, m)
	}
	return got
}

func TestALineCarriesTheValuesAndNamesGivenBeforeIt(t *testing.T) {
	log, out := newLogger()
	log = log.WithName("controller").WithValues("Bucket", "ns/b", "reconcileID", "r1").WithName("bucket")
	log.Info("Created bucket", "bucket", "photos")
	log.Error(errors.New("boom"), "Failed", "attempt", 2)

	got := lines(t, out)
	if len(got) != 2 {
		t.Fatalf("wrote %d lines, want 2: %s", len(got), out)
	}
	for _, l := range got {
		if l["logger"] != "controller.bucket" || l["Bucket"] != "ns/b" || l["reconcileID"] != "r1" {
			t.Errorf("line %v lost its name or values", l)
		}
	}
	if got[0]["bucket"] != "photos" || got[1]["attempt"] != float64(2) || got[1]["error"] != "boom" {
		t.Errorf("lines lost their own values: %v", got)
	}
}

func TestLoggersMadeFromOneDoNotShareValues(t *testing.T) {
	log, out := newLogger()
	parent := log.WithValues("a", 1)
	first := parent.WithValues("b", 2)
	second := parent.WithValues("c", 3)
	first.Info("first")
	second.Info("second")

	got := lines(t, out)
	if _, ok := got[0]["c"]; ok {
		t.Errorf("first line has the second logger's value: %v", got[0])
	}
	if _, ok := got[1]["b"]; ok {
		t.Errorf("second line has the first logger's value: %v", got[1])
	}
	if got[0]["a"] != float64(1) || got[1]["a"] != float64(1) {
		t.Errorf("the parent's value is lost: %v", got)
	}
}

func TestTheCallerIsTheLineThatLogs(t *testing.T) {
	log, out := newLogger()
	log.WithValues("k", "v").Info("here")
	log.WithCallDepth(0).Error(errors.New("e"), "there")

	for _, l := range lines(t, out) {
		caller, _ := l["caller"].(string)
		if !strings.HasPrefix(caller, "logging/lazy_test.go:") {
			t.Errorf("caller is %q, want this test file", caller)
		}
	}
}

// countingSink counts what reaches the sink under Lazy.
type countingSink struct {
	withValues *int
	lines      *int
}

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.withValues++
	return s
}

func (s countingSink) Info(int, string, ...any) { *s.lines++ }

func (s countingSink) Error(error, string, ...any) { *s.lines++ }

func (s countingSink) WithName(string) logr.LogSink { return s }

func (s countingSink) Init(logr.RuntimeInfo) {}

func (s countingSink) Enabled(level int) bool { return level == 0 }

func TestValuesCostNothingUntilALineIsWritten(t *testing.T) {
	withValues, written := 0, 0
	log := Lazy(logr.New(countingSink{withValues: &withValues, lines: &written}))
	log = log.WithValues("controller", "bucket").WithValues("reconcileID", "r1")
	log.V(1).Info("a debug line, not enabled")
	if withValues != 0 || written != 0 {
		t.Fatalf("before any line: %d WithValues and %d lines reached the sink, want none", withValues, written)
	}
	log.Info("a line")
	if withValues != 1 || written != 1 {
		t.Errorf("one line: %d WithValues and %d lines reached the sink, want one each", withValues, written)
	}
}
