package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// startCOSI (--cosi) runs the COSI driver and COSI's provisioner sidecar beside the manager,
// with COSI's CRDs installed from its api module. COSI's central controller is not served, so
// BucketClaims are not turned into Buckets: create COSI Buckets as docs/cosi.md shows.
func (e *environment) startCOSI(ctx context.Context) error {
	sidecar, err := e.buildTool(ctx, "cosi-sidecar")
	if err != nil {
		return err
	}
	crds, err := localenv.COSICRDs()
	if err != nil {
		return err
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: raw}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if err := applyObject(ctx, c, u); err != nil {
			return fmt.Errorf("COSI CRD %s: %w", crd.Name, err)
		}
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return err
		}
	}
	status("cosi", "%d COSI CRDs installed from %s", len(crds), localenv.COSIAPIModule)

	driver := e.path("bin", "cosi-driver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", driver, "./cmd/cosi-driver")
	cmd.Dir, cmd.Stdout, cmd.Stderr = e.root, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building cosi-driver: %w", err)
	}
	socket := e.path("cosi.sock")
	if _, err := e.start("cosi-driver", driver, []string{
		"--kubeconfig=" + e.kubeconfig, "--socket=" + socket, "--record-namespace=default",
		"--contract-api-url=" + e.contractAPI, "--contract-api-token-file=" + e.contractToken,
	}, nil); err != nil {
		return err
	}
	if err := waitFile(ctx, socket, 30*time.Second); err != nil {
		return fmt.Errorf("cosi-driver never served on %s (see %s): %w", socket, e.path("logs", "cosi-driver.log"), err)
	}
	// The sidecar's leader election lease goes to POD_NAMESPACE.
	if _, err := e.start("cosi-sidecar", sidecar, []string{
		"--kubeconfig=" + e.kubeconfig, "--driver-addr=unix://" + socket, "--v=3",
	}, []string{"POD_NAMESPACE=default"}); err != nil {
		return err
	}
	status("cosi", "driver %s on %s, with COSI's provisioner sidecar", cosidriver.DefaultName, socket)
	return nil
}

// buildTool builds a server of hack/tools/build.sh into bin/ unless it is there and current
// (build.sh decides, printing a line when it builds): COSI's provisioner sidecar, and kwok when
// the fake node is wanted after all.
func (e *environment) buildTool(ctx context.Context, name string) (string, error) {
	binDir, err := localenv.BinDir()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(e.root, "hack", "tools", "build.sh"), name)
	cmd.Dir, cmd.Stdout, cmd.Stderr = e.root, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "BIN_DIR="+binDir)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return filepath.Join(binDir, name), nil
}

func waitFile(ctx context.Context, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
