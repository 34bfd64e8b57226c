package install

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// imageRepository is the repository the tests build the installer for (IMAGE_REPOSITORY).
const imageRepository = "registry.example.com/osm/manager"

// release is what `make image build-installer` wrote into a dist directory.
type release struct {
	dist string
	// digests of the images, by name (manager, contract-server).
	digests map[string]string
	// installYAML is dist/install.yaml.
	installYAML []byte
}

// buildRelease runs `make image build-installer` into a fresh dist directory, as a user would on
// a fresh clone (no Docker). The first run on a machine builds the static release binaries,
// which share no build cache with ordinary builds (-trimpath, CGO_ENABLED=0).
func buildRelease(t *testing.T) *release {
	t.Helper()
	root := moduleRoot(t)
	dist := t.TempDir()
	progress("make image build-installer (the first run builds static release binaries: minutes on a busy machine)")
	start := time.Now()
	run(t, root, nil, "make", "--no-print-directory", "image", "build-installer", "DIST_DIR="+dist, "IMAGE_REPOSITORY="+imageRepository)
	progress("make image build-installer took %s", time.Since(start).Round(time.Second))
	r := &release{dist: dist, digests: map[string]string{}}
	for _, name := range []string{"manager", "contract-server"} {
		raw, err := os.ReadFile(filepath.Join(dist, "images", name+".digest"))
		if err != nil {
			t.Fatal(err)
		}
		r.digests[name] = strings.TrimSpace(string(raw))
	}
	var err error
	if r.installYAML, err = os.ReadFile(filepath.Join(dist, "install.yaml")); err != nil {
		t.Fatal(err)
	}
	return r
}

// ensureHelm builds Helm into bin/ unless it is there and current (hack/tools/build.sh decides),
// and returns its path. Helm is not in `make tools`: only this package needs it.
func ensureHelm(t *testing.T) string {
	t.Helper()
	binDir, err := localenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	helm := filepath.Join(binDir, "helm")
	if _, err := os.Stat(helm); err != nil {
		progress("helm is not in %s: building it from the Go module proxy (hack/tools/build.sh helm; "+
			"about 10 CPU-minutes, 5 minutes on two idle cores, 40 on busy ones)", binDir)
	}
	run(t, moduleRoot(t), []string{"BIN_DIR=" + binDir}, filepath.Join(moduleRoot(t), "hack", "tools", "build.sh"), "helm")
	return helm
}

// binaryFromImage writes the one file of image NAME's only layer, taken from the OCI archive
// dist/images/NAME.tar, to dir, and returns its path: the tests run what the image holds.
func binaryFromImage(t *testing.T, r *release, name, dir string) string {
	t.Helper()
	layer, err := imageLayer(filepath.Join(r.dist, "images", name+".tar"), r.digests[name])
	if err != nil {
		t.Fatalf("reading image %s: %v", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Name != name || hdr.Uid != 0 || hdr.Mode&0o222 != 0 {
		t.Fatalf("image %s: first file %q, uid %d, mode %o; want %q owned by root and not writable", name, hdr.Name, hdr.Uid, hdr.Mode, name)
	}
	path := filepath.Join(dir, name)
	bin, err := io.ReadAll(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("image %s holds more than its binary (next entry: %v)", name, err)
	}
	return path
}

// imageLayer reads an OCI archive (a tar of an image layout), follows its index to the image
// with the given manifest digest, checks its config (non-root user, entrypoint) and returns its
// single layer.
func imageLayer(archive, digest string) ([]byte, error) {
	raw, err := os.ReadFile(archive)
	if err != nil {
		return nil, err
	}
	blobs := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if blobs[hdr.Name], err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
	blob := func(d string) ([]byte, error) {
		b, ok := blobs["blobs/"+strings.Replace(d, ":", "/", 1)]
		if !ok {
			return nil, fmt.Errorf("blob %s missing", d)
		}
		return b, nil
	}
	type descriptor struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest {
		return nil, fmt.Errorf("index.json lists %v, want the one image %s", index.Manifests, digest)
	}
	mraw, err := blob(digest)
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(mraw, &manifest); err != nil {
		return nil, err
	}
	craw, err := blob(manifest.Config.Digest)
	if err != nil {
		return nil, err
	}
	var config struct {
		Config struct {
			User       string   `json:"User"`
			Entrypoint []string `json:"Entrypoint"`
		} `json:"config"`
	}
	if err := json.Unmarshal(craw, &config); err != nil {
		return nil, err
	}
	if config.Config.User != "65532:65532" || len(config.Config.Entrypoint) != 1 {
		return nil, fmt.Errorf("config: user %q, entrypoint %q; want 65532:65532 and the binary", config.Config.User, config.Config.Entrypoint)
	}
	if len(manifest.Layers) != 1 {
		return nil, fmt.Errorf("%d layers, want 1", len(manifest.Layers))
	}
	return blob(manifest.Layers[0].Digest)
}

// run runs a command in dir and fails the test with its output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := command(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func command(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// progress prints a line at once, even without -v: builds here can take minutes.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "install: "+format+"\n", args...)
}
