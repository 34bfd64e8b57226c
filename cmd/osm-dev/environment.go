package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/testenv"
)

// environment is one run of osm-dev: what it started, in order, so it can stop them in reverse.
type environment struct {
	opts  options
	root  string // the module root: bin/, config/
	procs []*testenv.Process
	// stops are components started by library calls rather than as a Process.
	stops []namedStop

	kubeconfig    string
	apiServer     string
	s3Endpoint    string
	s3Region      string
	contractAPI   string
	contractToken string
	// backendArgs and backendEnv tell the contract server which S3 server to use; the admin
	// credentials go through the environment, never the command line.
	backendArgs []string
	backendEnv  []string
}

type namedStop struct {
	name string
	stop func() error
}

// info is DIR/env.json, written once everything is ready, for scripts and the e2e suite.
type info struct {
	Kubeconfig           string `json:"kubeconfig"`
	APIServer            string `json:"apiServer"`
	S3Endpoint           string `json:"s3Endpoint"`
	S3Region             string `json:"s3Region"`
	ContractAPI          string `json:"contractAPI"`
	ContractAPITokenFile string `json:"contractAPITokenFile"`
	ManagerLog           string `json:"managerLog"`
}

func (e *environment) run(ctx context.Context) error {
	var err error
	if e.root, err = testenv.ModuleRoot(); err != nil {
		return err
	}
	envFile := e.path("env.json")
	_ = os.Remove(envFile)
	if e.opts.s3 == "rgw" && exists(e.path("etcd")) {
		// A memstore OSD keeps nothing across restarts: Contracts in etcd would name accounts
		// that no longer exist.
		status("state", "Ceph keeps no data across restarts: starting from a clean %s", e.opts.stateDir)
		if err := os.RemoveAll(e.opts.stateDir); err != nil {
			return err
		}
	}
	for _, dir := range []string{"logs", "bin"} {
		if err := os.MkdirAll(e.path(dir), 0o700); err != nil {
			return err
		}
	}

	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"binaries", e.build},
		{"certificates", e.certificates},
		{"etcd", e.startEtcd},
		{"kube-apiserver", e.startAPIServer},
		{"s3", e.startS3},
		{"contract-server", e.startContractServer},
		{"crds", e.installCRDs},
	}
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	managerArgs := e.managerArgs()
	if e.opts.noManager {
		e.printManagerCommand(managerArgs)
	} else if err := e.startManager(ctx, managerArgs); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := e.installWebhooks(ctx); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}

	if err := writeJSON(envFile, info{
		Kubeconfig: e.kubeconfig, APIServer: e.apiServer, S3Endpoint: e.s3Endpoint, S3Region: e.s3Region,
		ContractAPI: e.contractAPI, ContractAPITokenFile: e.contractToken, ManagerLog: e.path("logs", "manager.log"),
	}); err != nil {
		return err
	}
	fmt.Printf("\nosm-dev: ready. In another terminal:\n\n  export KUBECONFIG=%s\n  kubectl apply -f config/samples/\n\n", e.kubeconfig)
	fmt.Printf("Logs: %s. Ctrl-C stops everything.\n\n", e.path("logs"))
	return e.watch(ctx)
}

// watch waits for Ctrl-C, and reports a component that dies on its own.
func (e *environment) watch(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Println("\nosm-dev: stopping")
			return nil
		case <-tick.C:
			for _, p := range e.procs {
				if p.Exited() {
					return fmt.Errorf("%s exited; see %s", p.Name, p.LogPath)
				}
			}
		}
	}
}

// stopAll stops what was started, newest first.
func (e *environment) stopAll() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		if err := e.stops[i].stop(); err == nil {
			status(e.stops[i].name, "stopped")
		}
	}
	for i := len(e.procs) - 1; i >= 0; i-- {
		p := e.procs[i]
		if err := p.Stop(); err == nil {
			status(p.Name, "stopped (pid %d)", p.PID())
		}
	}
}

// build compiles the manager and the contract server, and checks the servers from bin/.
func (e *environment) build(ctx context.Context) error {
	for _, name := range []string{"kube-apiserver", "etcd", "versitygw"} {
		if _, err := testenv.Binary(name); err != nil {
			return err
		}
	}
	for _, pkg := range []string{"manager", "contract-server"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", e.path("bin", pkg), "./cmd/"+pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = e.root, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", pkg, err)
		}
	}
	status("binaries", "manager and contract-server built into %s", e.path("bin"))
	return nil
}

// certificates makes the certificates folder when missing (hack/gencerts keeps certificates that
// still work, and replaces those that do not).
func (e *environment) certificates(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "go", "run", "./hack/gencerts", "-dir", e.certsDir(), "-mkcert", e.opts.mkcert)
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/gencerts: %w: %s", err, out)
	}
	status("certificates", "CA and 127.0.0.1 serving certificate in %s", e.certsDir())
	return nil
}

func (e *environment) start(name string, bin string, args, env []string) (*testenv.Process, error) {
	p, err := testenv.StartProcess(name, e.path("logs", name+".log"), bin, args, env)
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, p)
	return p, nil
}

func (e *environment) path(elem ...string) string {
	return filepath.Join(append([]string{e.opts.stateDir}, elem...)...)
}

// certsDir holds the webhook serving certificate and the CA the API server trusts it by:
// --certs-dir, or .certs/ in the module.
func (e *environment) certsDir() string {
	if e.opts.certsDir != "" {
		return e.opts.certsDir
	}
	return filepath.Join(e.root, ".certs")
}

func (e *environment) certPath(name string) string { return filepath.Join(e.certsDir(), name) }

func status(component, format string, args ...any) {
	fmt.Printf("%-16s %s\n", component, fmt.Sprintf(format, args...))
}

func hostPort(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeJSON writes v to path atomically, so a reader never sees half a file.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readOrCreate returns the content of path, creating it with make() the first time, so secrets
// such as tokens stay the same across restarts of a reused state directory.
func readOrCreate(path string, make func() string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	v := make()
	return v, os.WriteFile(path, []byte(v+"\n"), 0o600)
}
