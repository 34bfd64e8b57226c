package localenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlaneOptions configures StartControlPlane.
type ControlPlaneOptions struct {
	// WebhookPaths are folders of webhook configurations to install; empty installs none.
	WebhookPaths []string
	// CRDDir is the folder of CRDs to install; empty is this tree's config/crd/bases. The
	// upgrade test starts with an older revision's.
	CRDDir string
	// ServiceAccountIssuer, when set, is the issuer kube-apiserver writes into ServiceAccount
	// tokens (--service-account-issuer), which it signs with ServiceAccountKeyFile (an RSA key in
	// PEM, for RS256 tokens): an issuer whose discovery another server serves (OIDCIssuer).
	ServiceAccountIssuer, ServiceAccountKeyFile string
}

// StartControlPlane starts etcd and kube-apiserver from bin/ through envtest, with the CRDs in
// config/crd/bases (or opts.CRDDir) installed. Stop it with env.Stop(); if the test process dies first (a panic,
// a timeout, Ctrl-C), the kernel stops them too.
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
	assets, err := dyingWithParent(binDir, "kube-apiserver", "etcd")
	if err != nil {
		return nil, nil, err
	}
	crds := opts.CRDDir
	if crds == "" {
		crds = filepath.Join(root, "config", "crd", "bases")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{crds},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	// As OpenShift and hardened clusters do: setting blockOwnerDeletion on an owner reference
	// needs the update verb on the owner's finalizers, which the shipped RBAC must then grant.
	env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	if opts.ServiceAccountIssuer != "" {
		args := env.ControlPlane.GetAPIServer().Configure()
		args.Set("service-account-issuer", opts.ServiceAccountIssuer)
		args.Set("service-account-key-file", opts.ServiceAccountKeyFile)
		args.Set("service-account-signing-key-file", opts.ServiceAccountKeyFile)
	}
	if len(opts.WebhookPaths) > 0 {
		// The webhook server binds 127.0.0.1 like every other test server; envtest picks a free
		// port and writes certificates for it (env.WebhookInstallOptions.LocalServing*).
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: opts.WebhookPaths, LocalServingHost: "127.0.0.1"}
	}
	cfg, err := env.Start()
	if err != nil {
		// envtest leaves the servers running when a late step (installing CRDs or webhooks)
		// fails.
		_ = env.Stop()
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", binDir, err)
	}
	return env, cfg, nil
}

// dyingWithParent returns a folder of launchers for the named binaries of binDir that run each
// with a parent-death signal (setpriv --pdeathsig KILL). envtest starts its servers in process
// groups of their own and sets no such signal, so without this a test binary that panics, times
// out or is interrupted leaves etcd and kube-apiserver running after `go test` returns.
func dyingWithParent(binDir string, names ...string) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		// util-linux is essential on Debian; look where it lives in case PATH was narrowed.
		if setpriv = "/usr/bin/setpriv"; !fileExists(setpriv) {
			return "", fmt.Errorf("setpriv (util-linux) not found: it makes test servers stop with their test")
		}
	}
	dir := filepath.Join(binDir, ".dying-with-parent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range names {
		script := fmt.Sprintf("#!/bin/sh\n# Written by internal/localenv: %s, killed when the process that started it dies.\nexec %s --pdeathsig KILL -- %s \"$@\"\n",
			name, setpriv, filepath.Join(binDir, name))
		// Test packages run in parallel and write the same launchers: write aside, then rename.
		tmp, err := os.CreateTemp(dir, name+".*")
		if err != nil {
			return "", err
		}
		_, werr := tmp.WriteString(script)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o755)); err != nil {
			_ = os.Remove(tmp.Name())
			return "", err
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
			_ = os.Remove(tmp.Name())
			return "", err
		}
	}
	return dir, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
