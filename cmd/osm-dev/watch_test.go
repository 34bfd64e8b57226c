package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSourceWatcher saves files as an editor would and checks which saves count as changes of
// the manager's sources.
func TestSourceWatcher(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("internal/a/a.go", "package a\n")
	write("internal/a/testdata/x.go", "package x\n")
	write("api/v1/types.go", "package v1\n")

	s, err := newSourceWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.close() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := s.start(ctx)

	// next returns the changed files of the next batch, or nil when none comes within wait.
	next := func(wait time.Duration) []string {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case b := <-batches:
				if changed := s.changed(b.paths); len(changed) > 0 {
					return changed
				}
			case <-deadline:
				return nil
			}
		}
	}
	quiet := 3 * debounce

	write("internal/a/a.go", "package a\n\nconst A = 1\n")
	if diff := cmp.Diff([]string{"internal/a/a.go"}, next(5*time.Second)); diff != "" {
		t.Errorf("after editing a.go (-want +got):\n%s", diff)
	}

	// Saved without a change, tests, test data, editor leftovers, other files at the root.
	write("internal/a/a.go", "package a\n\nconst A = 1\n")
	write("internal/a/a_test.go", "package a\n")
	write("internal/a/testdata/x.go", "package x\n\nconst X = 1\n")
	write("internal/a/.a.go.swp", "swap")
	write("internal/a/a.go~", "backup")
	write("README.md", "readme")
	if got := next(quiet); got != nil {
		t.Errorf("these saves change nothing the manager is built from, yet %v counted as changed", got)
	}

	// Several files within the debounce make one batch.
	write("api/v1/types.go", "package v1\n\ntype T struct{}\n")
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	if diff := cmp.Diff([]string{"api/v1/types.go", "go.mod"}, next(5*time.Second)); diff != "" {
		t.Errorf("after editing types.go and go.mod (-want +got):\n%s", diff)
	}

	// A new package: its folder is watched from then on.
	write("internal/b/b.go", "package b\n")
	got := next(5 * time.Second)
	if !slices.Contains(got, "internal/b/b.go") {
		t.Errorf("a file in a new folder: got %v, want internal/b/b.go", got)
	}
	write("internal/b/b.go", "package b\n\nconst B = 2\n")
	if diff := cmp.Diff([]string{"internal/b/b.go"}, next(5*time.Second)); diff != "" {
		t.Errorf("after editing a file in the new folder (-want +got):\n%s", diff)
	}

	// A removed file is a change too.
	if err := os.Remove(filepath.Join(root, "internal/a/a.go")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"internal/a/a.go"}, next(5*time.Second)); diff != "" {
		t.Errorf("after removing a.go (-want +got):\n%s", diff)
	}
}

func TestDescribe(t *testing.T) {
	if got := describe([]string{"internal/a.go"}); got != "internal/a.go" {
		t.Errorf("one file: %q", got)
	}
	if got := describe([]string{"a.go", "b.go", "c.go"}); got != "3 files" {
		t.Errorf("three files: %q", got)
	}
}
