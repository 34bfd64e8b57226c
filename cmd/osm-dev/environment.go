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
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/netns"
)

// environment is one run of osm-dev: what it started, in order, so it can stop them in reverse.
type environment struct {
	opts  options
	root  string // the module the manager is built from: cmd/, config/, .certs/
	procs []*localenv.Process
	// manager is the running manager, kept apart from procs because a reload replaces it.
	manager *localenv.Process
	// sources watches the manager's sources when --watch is on; nil otherwise.
	sources *sourceWatcher
	// dlv is Delve's binary, with --debug.
	dlv string
	// controllerManager, scheduler and kwok are also in procs; kept by name to wait for them.
	controllerManager, scheduler, kwok *localenv.Process
	// node is the real node when it runs (realNode true); kwok plays the node otherwise.
	node     *realNode
	realNode bool
	// proxy reaches the node's namespace from the host (nodeaccess.go).
	proxy *netns.Proxy
	// install is what the manager runs as and with, from config/default; appliedInstall is a
	// hash of the rendering last applied.
	install        *install
	appliedInstall string
	// rendered is config/default rendered while the start builds, for the first applyInstall.
	rendered *renderedInstall
	// managerTokenAt is when the manager's ServiceAccount token was last requested.
	managerTokenAt time.Time
	// appliedCRDs and appliedWebhooks are hashes of the manifests last applied, so a reload
	// re-applies only what changed.
	appliedCRDs, appliedWebhooks string
	// stops are components started by library calls rather than as a Process.
	stops []namedStop

	kubeconfig    string
	apiClient     client.Client
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
	// ManagerKubeconfig holds the token of the manager's ServiceAccount, which the manager
	// runs with.
	ManagerKubeconfig string `json:"managerKubeconfig"`
	// ManagerMetrics is the manager's /metrics, over HTTPS for callers allowed to get it.
	ManagerMetrics string `json:"managerMetrics"`
}

func (e *environment) run(ctx context.Context) error {
	var err error
	if e.root = e.opts.sourceDir; e.root == "" {
		if e.root, err = localenv.ModuleRoot(); err != nil {
			return err
		}
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
	if e.opts.watch && !e.opts.noManager {
		// Before the first build, so that a file saved while the environment starts is not
		// missed: it makes a reload once everything is ready.
		if e.sources, err = newSourceWatcher(e.root); err != nil {
			return fmt.Errorf("watching the sources: %w", err)
		}
		defer func() { _ = e.sources.close() }()
	}

	for _, s := range e.startSteps() {
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	switch {
	case e.opts.noInstall:
		status("install", "none (--no-install): the cluster waits for an install of the release")
	case e.opts.noManager:
		e.printManagerCommand(e.managerArgs())
	default:
		if err := e.startManager(ctx); err != nil {
			return fmt.Errorf("manager: %w", err)
		}
		status("manager", "ready (pid %d); webhooks on https://%s", e.manager.PID(), hostPort(e.opts.webhookPort))
		if e.opts.debug {
			status("manager", "under Delve: attach a debugger to %s (VS Code: \"attach to osm-dev manager\")", hostPort(e.opts.debugPort))
		}
	}
	if !e.opts.noInstall {
		if err := e.installWebhooks(ctx); err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
	}
	if e.opts.cosi {
		if err := e.startCOSI(ctx); err != nil {
			return fmt.Errorf("cosi: %w", err)
		}
	}

	if err := writeJSON(envFile, info{
		Kubeconfig: e.kubeconfig, APIServer: e.apiServer, S3Endpoint: e.s3Endpoint, S3Region: e.s3Region,
		ContractAPI: e.contractAPI, ContractAPITokenFile: e.contractToken, ManagerLog: e.path("logs", "manager.log"),
		ManagerKubeconfig: e.managerKubeconfig(), ManagerMetrics: "https://" + hostPort(e.opts.metricsPort) + "/metrics",
	}); err != nil {
		return err
	}
	e.printReady()
	return e.watch(ctx)
}

// printReady prints what a user needs once everything is ready.
func (e *environment) printReady() {
	next := "kubectl apply -f config/samples/"
	if e.opts.noInstall {
		next = "kubectl apply --server-side -f dist/install.yaml   # make image build-installer; docs/install.md"
	}
	fmt.Printf("\nosm-dev: ready. In another terminal:\n\n  export KUBECONFIG=%s\n  %s\n\n", e.kubeconfig, next)
	if e.realNode {
		fmt.Printf("The node is real: pods run in containers. Reach a pod or Service: curl -x http://%s http://<its IP>/\n", hostPort(e.opts.nodeProxyPort))
	}
	fmt.Printf("Logs: %s. Ctrl-C stops everything.\n", e.path("logs"))
	if e.sources != nil {
		fmt.Printf("Saving a file under %s or go.mod rebuilds and restarts the manager (--watch=false turns it off).\n", strings.Join(watchedDirs, ", "))
	}
	fmt.Println()
}

// step is one part of the start, named in its error.
type step struct {
	name string
	run  func(context.Context) error
}

// startSteps are what run starts before the manager, in order.
func (e *environment) startSteps() []step {
	var steps []step
	if e.opts.debug {
		steps = append(steps, step{"delve", e.buildDelve})
	}
	steps = append(steps, []step{
		{"binaries", e.build},
		{"etcd", e.startEtcd},
		{"kube-apiserver", e.startAPIServer},
		{"controllers", e.startControllers},
		{"s3", e.startS3},
		{"contract-server", e.startContractServer},
	}...)
	if e.opts.noInstall {
		// The release's install brings the CRDs, the manager's identity and its webhooks.
		return append(steps, step{"cluster", e.waitControllers})
	}
	return append(steps, []step{
		{"crds", e.installCRDs},
		{"cluster", e.waitControllers},
		{"install", e.installIdentity},
	}...)
}

// watch waits for Ctrl-C, reloads the manager when its sources change, and reports a component
// that dies on its own.
func (e *environment) watch(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var changes <-chan batch
	if e.sources != nil {
		changes = e.sources.start(ctx)
	}
	managerExitReported := false
	for {
		select {
		case <-ctx.Done():
			fmt.Println("\nosm-dev: stopping")
			return nil
		case b := <-changes:
			if changed := e.sources.changed(b.paths); len(changed) > 0 {
				e.reload(ctx, b.first, changed)
				managerExitReported = false
			}
		case <-tick.C:
			if err := e.renewManagerToken(ctx); err != nil {
				status("manager", "renewing its ServiceAccount token: %v", err)
			}
			for _, p := range e.procs {
				if p.Exited() {
					return fmt.Errorf("%s exited; see %s", p.Name, p.LogPath)
				}
			}
			if m := e.manager; m != nil && m.Exited() {
				if e.sources == nil {
					return fmt.Errorf("%s exited; see %s", m.Name, m.LogPath)
				}
				// With a watch, a manager that crashes is a bug being worked on: keep the
				// environment, and let the next save start a fixed one.
				if !managerExitReported {
					status("manager", "exited; see %s. Saving a source file rebuilds and restarts it", m.LogPath)
					managerExitReported = true
				}
			}
		}
	}
}

// stopAll stops what was started, newest first.
func (e *environment) stopAll() {
	if m := e.manager; m != nil {
		e.stopManager()
		status(m.Name, "stopped (pid %d)", m.PID())
	}
	// The node first: its stop removes what it made, and wants containerd gone before the
	// namespace is deleted.
	e.stopRealNode()
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

// build compiles what the start runs, side by side: the manager, the contract server, the
// certificates (hack/gencerts), the install's rendering and, when the real node may run, its
// images. On a warm machine
// each is mostly Go's cache check; one after another they took half of a 17 s start.
func (e *environment) build(ctx context.Context) error {
	// The node's binaries are checked when it starts: kwok's are built then if the real node
	// cannot run.
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "etcd", "versitygw"} {
		if _, err := localenv.Binary(name); err != nil {
			return err
		}
	}
	builds := []func() error{
		func() error {
			if out, err := e.buildManager(ctx, e.path("bin", "manager")); err != nil {
				return fmt.Errorf("building the manager: %w\n%s", err, out)
			}
			return nil
		},
		func() error {
			cmd := exec.CommandContext(ctx, "go", "build", "-o", e.path("bin", "contract-server"), "./cmd/contract-server")
			cmd.Dir = e.root
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("building contract-server: %w\n%s", err, out)
			}
			return nil
		},
		func() error {
			// Also the kubernetes Service's address and names, which pods of the real node call
			// the API server by (serveKubernetesService).
			cmd := exec.CommandContext(ctx, "go", "run", "./hack/gencerts", "-dir", e.certsDir(), "-mkcert", e.opts.mkcert,
				"-hosts", "127.0.0.1,localhost,"+kubernetesServiceIP+",kubernetes.default.svc,kubernetes.default,kubernetes")
			cmd.Dir = e.root
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("hack/gencerts: %w: %s", err, out)
			}
			return nil
		},
	}
	if !e.opts.noInstall {
		builds = append(builds, func() (err error) {
			e.rendered, err = e.renderConfig(ctx)
			return err
		})
	}
	if e.opts.node != "fake" && realNodeUnavailable() == "" {
		builds = append(builds, func() error { return e.buildNodeImages(ctx) })
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Go(func() { errs[i] = b() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	status("binaries", "manager and contract-server built into %s", e.path("bin"))
	status("certificates", "CA and serving certificate (127.0.0.1, the kubernetes Service) in %s", e.certsDir())
	return nil
}

func (e *environment) start(name string, bin string, args, env []string) (*localenv.Process, error) {
	p, err := localenv.StartProcess(name, e.path("logs", name+".log"), bin, args, env)
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
