package testenv

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlaneOptions configures StartControlPlane.
type ControlPlaneOptions struct {
	// WebhookPaths are folders of webhook configurations to install; empty installs none.
	WebhookPaths []string
}

// StartControlPlane starts etcd and kube-apiserver from bin/ through envtest, with the CRDs in
// config/crd/bases installed. Stop it with env.Stop().
func StartControlPlane(opts ControlPlaneOptions) (*envtest.Environment, *rest.Config, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, nil, err
	}
	binDir, err := BinDir()
	if err != nil {
		return nil, nil, err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := Binary(name); err != nil {
			return nil, nil, err
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: binDir,
	}
	if len(opts.WebhookPaths) > 0 {
		// The webhook server binds 127.0.0.1 like every other test server; envtest picks a free
		// port and writes certificates for it (env.WebhookInstallOptions.LocalServing*).
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: opts.WebhookPaths, LocalServingHost: "127.0.0.1"}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", binDir, err)
	}
	return env, cfg, nil
}
