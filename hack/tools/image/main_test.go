package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// staticELF is the smallest file isStaticELF accepts: a 64-bit little-endian ELF header with no
// program headers, so no PT_INTERP.
func staticELF(t *testing.T) string {
	t.Helper()
	hdr := make([]byte, 64)
	copy(hdr, "\x7fELF\x02\x01\x01")
	path := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(path, append(hdr, "payload"...), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSameBinarySameDigest(t *testing.T) {
	bin := staticELF(t)
	opts := Options{Version: "v0.1.0", Created: time.Unix(1700000000, 0).UTC(), Platform: v1.Platform{OS: "linux", Architecture: "amd64"}}
	var digests []v1.Hash
	var archives [][]byte
	for range 2 {
		opts.Out = t.TempDir()
		d, err := Write(opts, "manager", bin)
		if err != nil {
			t.Fatal(err)
		}
		tarball, err := os.ReadFile(filepath.Join(opts.Out, "manager.tar"))
		if err != nil {
			t.Fatal(err)
		}
		digests, archives = append(digests, d), append(archives, tarball)
	}
	if digests[0] != digests[1] || !bytes.Equal(archives[0], archives[1]) {
		t.Fatalf("two builds of one binary differ: digests %s and %s, archives equal %t", digests[0], digests[1], bytes.Equal(archives[0], archives[1]))
	}

	// The layout on disk holds that image, runnable as the non-root user, with the binary as
	// entrypoint.
	idx, err := layout.ImageIndexFromPath(filepath.Join(opts.Out, "manager"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(digests[0])
	if err != nil {
		t.Fatalf("the layout does not hold image %s: %v", digests[0], err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/manager" || cfg.Architecture != "amd64" ||
		!cfg.Created.Time.Equal(opts.Created) {
		t.Errorf("config: user %q, entrypoint %q, arch %q, created %s", cfg.Config.User, cfg.Config.Entrypoint, cfg.Architecture, cfg.Created)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
}

func TestDynamicBinaryRefused(t *testing.T) {
	// Debian's own binaries are dynamically linked: they would not start in an image without libc.
	_, err := Image(Options{}, "true", "/bin/true")
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("Image(/bin/true) = %v, want a refusal naming CGO_ENABLED=0", err)
	}
}
