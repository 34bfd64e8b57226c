package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long the watcher waits after the last event before it reports a batch: an
// editor's save is often several events (write, chmod, rename), and a `git checkout` many.
const debounce = 300 * time.Millisecond

// watchedDirs are the folders whose Go sources make up the manager, watched recursively.
// go.mod and go.sum at the module root are watched too.
var watchedDirs = []string{"cmd/manager", "internal", "api"}

// sourceWatcher reports which of the manager's sources changed. The goroutine started by start
// only turns fsnotify events into batches of candidate paths; whether a file's content really
// changed is decided by changed, on the caller's goroutine, against the content it saw last.
// That way an editor that rewrites a file unchanged, or the generators rewriting
// zz_generated.deepcopy.go with what it already held, restarts nothing.
type sourceWatcher struct {
	root    string
	fsw     *fsnotify.Watcher
	content map[string][sha256.Size]byte // path relative to root → hash of what it held last time
}

// batch is the files touched within one debounce window, and when the first was touched.
type batch struct {
	paths []string
	first time.Time
}

func newSourceWatcher(root string) (*sourceWatcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	s := &sourceWatcher{root: root, fsw: fsw, content: map[string][sha256.Size]byte{}}
	// The root itself, for go.mod and go.sum; fsnotify does not descend into subfolders.
	if err := fsw.Add(root); err != nil {
		_ = fsw.Close()
		return nil, err
	}
	var files []string
	for _, dir := range watchedDirs {
		found, err := s.addTree(filepath.Join(root, dir))
		if err != nil {
			_ = fsw.Close()
			return nil, err
		}
		files = append(files, found...)
	}
	s.record(append(files, "go.mod", "go.sum"))
	return s, nil
}

func (s *sourceWatcher) close() error { return s.fsw.Close() }

// addTree watches dir and every folder below it that Go would build from, and returns the
// relevant files it holds (relative to root).
func (s *sourceWatcher) addTree(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if d.IsDir() {
			if path != dir && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return s.fsw.Add(path)
		}
		if rel := s.rel(path); relevant(rel) {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// skipDir reports folders that hold nothing the manager is built from. Go itself ignores
// folders starting with "." or "_" and testdata.
func skipDir(name string) bool {
	switch name {
	case "testdata", "bin", ".osm-dev", ".git":
		return true
	}
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// relevant reports whether a file (relative to the root) is part of the manager's build: a Go
// file that is not a test, or the module's go.mod and go.sum. Editors' swap and backup files
// (.x.go.swp, x.go~, 4913) are not.
func relevant(rel string) bool {
	if rel == "go.mod" || rel == "go.sum" {
		return true
	}
	if !strings.Contains(rel, string(filepath.Separator)) {
		return false // other files at the root
	}
	name := filepath.Base(rel)
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".")
}

func (s *sourceWatcher) rel(path string) string {
	rel, err := filepath.Rel(s.root, path)
	if err != nil {
		return path
	}
	return rel
}

// start turns fsnotify events into batches: a batch is sent once debounce has passed without a
// new event. While the receiver is busy (a reload runs), new events join the batch that waits.
func (s *sourceWatcher) start(ctx context.Context) <-chan batch {
	out := make(chan batch)
	go func() {
		pending := map[string]bool{}
		var first time.Time
		var ready *batch
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		for {
			var send chan<- batch
			var next batch
			if ready != nil {
				send, next = out, *ready
			}
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-s.fsw.Events:
				if !ok {
					return
				}
				paths := s.candidates(ev)
				if len(paths) == 0 {
					continue
				}
				if len(pending) == 0 {
					first = time.Now()
				}
				for _, p := range paths {
					pending[p] = true
				}
				timer.Reset(debounce)
			case err, ok := <-s.fsw.Errors:
				if !ok {
					return
				}
				status("watch", "%v", err)
			case <-timer.C:
				if ready == nil {
					ready = &batch{first: first}
				}
				for p := range pending {
					if !slices.Contains(ready.paths, p) {
						ready.paths = append(ready.paths, p)
					}
				}
				clear(pending)
			case send <- next:
				ready = nil
			}
		}
	}()
	return out
}

// candidates returns the relevant files an event may have changed. A new folder is watched
// from now on, and the files already in it are candidates: they may have been written before
// the watch was in place.
func (s *sourceWatcher) candidates(ev fsnotify.Event) []string {
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
			rel := s.rel(ev.Name)
			if skipDir(filepath.Base(ev.Name)) || !underWatchedDir(rel) {
				return nil
			}
			files, err := s.addTree(ev.Name)
			if err != nil {
				status("watch", "watching %s: %v", rel, err)
			}
			return files
		}
	}
	if ev.Op == fsnotify.Chmod {
		return nil // a permission change builds nothing new
	}
	if rel := s.rel(ev.Name); relevant(rel) {
		return []string{rel}
	}
	return nil
}

func underWatchedDir(rel string) bool {
	for _, dir := range watchedDirs {
		if rel == dir || strings.HasPrefix(rel, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// changed returns the paths whose content differs from what was recorded (a removed file
// counts as changed), and records their content now.
func (s *sourceWatcher) changed(paths []string) []string {
	var out []string
	for _, p := range paths {
		old, had := s.content[p]
		now, has := s.hash(p)
		if had != has || old != now {
			out = append(out, p)
		}
	}
	s.record(out)
	slices.Sort(out)
	return out
}

// record remembers the current content of paths, so that an event for them without a change
// in content is ignored.
func (s *sourceWatcher) record(paths []string) {
	for _, p := range paths {
		if h, ok := s.hash(p); ok {
			s.content[p] = h
		} else {
			delete(s.content, p)
		}
	}
}

func (s *sourceWatcher) hash(rel string) ([sha256.Size]byte, bool) {
	b, err := os.ReadFile(filepath.Join(s.root, rel))
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

// describe names the changed files for the reload line: the file, or how many.
func describe(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%d files", len(paths))
}
