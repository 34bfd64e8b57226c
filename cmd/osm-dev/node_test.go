package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockNodeWaitsForTheHolder: a second osm-dev asking for the real node waits while the first
// holds it, gets it when the first lets go, and, when it waits too long, says who held it.
func TestLockNodeWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	ctx := context.Background()
	first, err := lockNode(ctx, path, 0, "/state/first")
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); !strings.Contains(string(raw), "state directory /state/first") {
		t.Errorf("the lock file says %q; want the holder's state directory", raw)
	}

	// Without waiting (--node=auto): busy at once.
	start := time.Now()
	if _, err := lockNode(ctx, path, 0, "/state/second"); !errors.Is(err, errNodeBusy) || time.Since(start) > time.Second {
		t.Errorf("lockNode without a wait: %v after %s; want errNodeBusy at once", err, time.Since(start))
	}
	// Waiting longer than the holder keeps it: busy, naming the holder.
	if _, err := lockNode(ctx, path, 1500*time.Millisecond, "/state/second"); !errors.Is(err, errNodeBusy) || !strings.Contains(err.Error(), "/state/first") {
		t.Errorf("lockNode waiting 1.5 s on a held lock: %v; want errNodeBusy naming /state/first", err)
	}
	// The holder lets go while the second waits: the second gets it, and says so in the file.
	go func() {
		time.Sleep(1500 * time.Millisecond)
		unlockNode(first)
	}()
	second, err := lockNode(ctx, path, time.Minute, "/state/second")
	if err != nil {
		t.Fatalf("lockNode while the holder lets go: %v", err)
	}
	defer func() { _ = second.Close() }()
	if raw, _ := os.ReadFile(path); !strings.Contains(string(raw), "state directory /state/second") || strings.Contains(string(raw), "first") {
		t.Errorf("the lock file says %q; want the new holder alone", raw)
	}
	// What a holder that is gone wrote names no one: an older osm-dev, which writes nothing, may
	// hold the lock now.
	if err := os.WriteFile(path, []byte("osm-dev pid 999999999, state directory /state/gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := nodeHolder(path); got != "another osm-dev" {
		t.Errorf("holder of a lock whose writer is gone: %q; want another osm-dev", got)
	}
	unlockNode(second)
	if raw, _ := os.ReadFile(path); len(raw) != 0 {
		t.Errorf("after the holder lets go the lock file says %q; want nothing", raw)
	}
	second, err = lockNode(ctx, path, 0, "/state/second")
	if err != nil {
		t.Fatal(err)
	}
	// A wait ends with the context (Ctrl-C).
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := lockNode(cctx, path, time.Minute, "/state/third"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("lockNode with a context that ends: %v; want the context's error", err)
	}
}
