// Command image writes an OCI image for each static binary it is given, without a container
// engine: one layer holding the binary over an empty base, run as a non-root user.
//
//	go run . -out dist/images -version v0.1.0 -created 1700000000 -platform linux/amd64 \
//	    manager=dist/bin/manager contract-server=dist/bin/contract-server
//
// For each NAME it writes dist/images/NAME/ (an OCI image layout: `crane push dist/images/NAME
// REPO`, `skopeo copy oci:dist/images/NAME ...`), dist/images/NAME.tar (the same layout as one
// archive: `docker load`, `podman load`, `skopeo copy oci-archive:...`) and dist/images/NAME.digest
// (the manifest digest, which make build-installer pins). Every timestamp is -created and every
// file is written in a fixed order, so the same binaries give the same digests.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonRoot is the uid and gid the image runs as: distroless's "nonroot", which Pod Security's
// restricted profile and runAsNonRoot accept because it is numeric.
const nonRoot = "65532:65532"

// Options describe the images to write.
type Options struct {
	Out      string    // directory for NAME/, NAME.tar and NAME.digest
	Version  string    // org.opencontainers.image.version and the layout's ref name
	Source   string    // org.opencontainers.image.source
	Created  time.Time // every timestamp in the image
	Platform v1.Platform
}

func main() {
	var opts Options
	var created, platform string
	flag.StringVar(&opts.Out, "out", "dist/images", "directory the images are written to")
	flag.StringVar(&opts.Version, "version", "devel", "version recorded in the image's labels")
	flag.StringVar(&opts.Source, "source", "https://github.com/object-storage-manager/object-storage-manager", "source repository recorded in the image's labels")
	flag.StringVar(&created, "created", "0", "image creation time, seconds since 1970 (SOURCE_DATE_EPOCH: the commit's time)")
	flag.StringVar(&platform, "platform", "linux/amd64", "OS/ARCH of the binaries")
	flag.Parse()
	if err := run(opts, created, platform, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(opts Options, created, platform string, args []string) error {
	secs, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		return fmt.Errorf("-created %q: want seconds since 1970", created)
	}
	opts.Created = time.Unix(secs, 0).UTC()
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return fmt.Errorf("-platform: %w", err)
	}
	opts.Platform = *p
	if len(args) == 0 {
		return errors.New("no NAME=BINARY given")
	}
	for _, arg := range args {
		name, binary, ok := strings.Cut(arg, "=")
		if !ok || name == "" || binary == "" {
			return fmt.Errorf("%q: want NAME=BINARY", arg)
		}
		digest, err := Write(opts, name, binary)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("image            %s %s (%s)\n", name, digest, filepath.Join(opts.Out, name+".tar"))
	}
	return nil
}

// Write builds the image of one binary and writes it under opts.Out; it returns its digest.
func Write(opts Options, name, binary string) (v1.Hash, error) {
	img, err := Image(opts, name, binary)
	if err != nil {
		return v1.Hash{}, err
	}
	dir := filepath.Join(opts.Out, name)
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": opts.Version,
	}), layout.WithPlatform(opts.Platform)); err != nil {
		return v1.Hash{}, err
	}
	if err := archive(dir, filepath.Join(opts.Out, name+".tar"), opts.Created); err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, os.WriteFile(filepath.Join(opts.Out, name+".digest"), []byte(digest.String()+"\n"), 0o644)
}

// Image is one layer with the binary at /NAME, its entrypoint, run as nonRoot.
func Image(opts Options, name, binary string) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	if !isStaticELF(bin) {
		return nil, fmt.Errorf("%s is not a static ELF binary (build it with CGO_ENABLED=0): the image has no libc", binary)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// Owned by root and not writable by the user the image runs as.
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o555, Size: int64(len(bin)),
		ModTime: opts.Created, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerTar := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: opts.Created}, CreatedBy: "make image: /" + name, Comment: opts.Version},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: opts.Created}
	cfg.OS, cfg.Architecture, cfg.Variant = opts.Platform.OS, opts.Platform.Architecture, opts.Platform.Variant
	cfg.Config.Entrypoint = []string{"/" + name}
	cfg.Config.User = nonRoot
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   name,
		"org.opencontainers.image.version": opts.Version,
		"org.opencontainers.image.source":  opts.Source,
		"org.opencontainers.image.created": opts.Created.Format(time.RFC3339),
	}
	return mutate.ConfigFile(img, cfg)
}

// isStaticELF reports whether bin is an ELF file with no program interpreter (PT_INTERP), so it
// needs no dynamic loader. It reads only the 64-bit little-endian headers Go writes for linux.
func isStaticELF(bin []byte) bool {
	if len(bin) < 64 || string(bin[:4]) != "\x7fELF" || bin[4] != 2 || bin[5] != 1 {
		return false
	}
	le := func(b []byte) uint64 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	phoff, phentsize, phnum := le(bin[32:40]), le(bin[54:56]), le(bin[56:58])
	for i := uint64(0); i < phnum; i++ {
		off := phoff + i*phentsize
		if off+4 > uint64(len(bin)) {
			return false
		}
		if le(bin[off:off+4]) == 3 { // PT_INTERP
			return false
		}
	}
	return true
}

// archive writes the layout in dir as one tar (an oci-archive), its entries sorted and stamped
// with created, owned by root: the same layout gives the same bytes.
func archive(dir, out string, created time.Time) error {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp) }()
	tw := tar.NewWriter(f)
	for _, path := range paths {
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: created, Format: tar.FormatPAX}
		if info.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, info.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		_ = src.Close()
		if err != nil {
			return err
		}
	}
	if err := errors.Join(tw.Close(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
