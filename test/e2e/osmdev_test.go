package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

const (
	// envFileTimeout bounds the wait for env.json: the first run builds the manager.
	envFileTimeout = 4 * time.Minute
	// realNodeLockWait is how long osm-dev --node=real waits for another osm-dev's real node
	// (cmd/osm-dev's nodeLockWait).
	realNodeLockWait = 15 * time.Minute
	// stopTimeout is how long osm-dev may take to stop everything after SIGTERM.
	stopTimeout = 30 * time.Second
	// envFileVar names an env.json of an osm-dev that is already running; the suite then uses it
	// and neither starts nor stops one.
	envFileVar = "OSM_E2E_ENV_FILE"
)

// Env is what osm-dev writes to <state-dir>/env.json once everything is ready.
type Env struct {
	Kubeconfig           string `json:"kubeconfig"`
	APIServer            string `json:"apiServer"`
	S3Endpoint           string `json:"s3Endpoint"`
	S3Region             string `json:"s3Region"`
	ContractAPI          string `json:"contractAPI"`
	ContractAPITokenFile string `json:"contractAPITokenFile"`
	ManagerLog           string `json:"managerLog"`
	ManagerKubeconfig    string `json:"managerKubeconfig"`
	ManagerMetrics       string `json:"managerMetrics"`
}

// osmDev is an osm-dev process the suite started.
type osmDev struct {
	root     string         // temporary folder: state dir, osm-dev's output, kubectl's cache
	stateDir string         // --state-dir
	outPath  string         // osm-dev's stdout and stderr
	ports    map[string]int // flag name → port
	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
}

// The environment is started by the first test that needs it and stopped by TestMain.
var (
	envOnce   sync.Once
	sharedEnv *Env
	envErr    error
	dev       *osmDev
)

// environment returns the running environment, starting osm-dev on first use.
func environment() (*Env, error) {
	envOnce.Do(func() {
		if path := os.Getenv(envFileVar); path != "" {
			sharedEnv, envErr = readEnvFile(path)
			return
		}
		sharedEnv, envErr = startOSMDev()
	})
	return sharedEnv, envErr
}

// portFlags are the osm-dev flags that take a port, each given a free one.
var portFlags = []string{
	"api-port", "etcd-port", "etcd-peer-port", "s3-port", "s3-admin-port", "s3-website-port",
	"contract-api-port", "webhook-port", "health-port", "metrics-port",
	"controller-manager-port", "scheduler-port", "node-proxy-port",
}

// hostileAddr is where the tenant suite's hostile S3 server listens (TestTenants): osm-dev is
// told to allow it, as a platform allows the S3 server a tenant brings.
var hostileAddr string

// startOSMDev starts the environment the suite shares. It does not watch the sources: the
// cases must not see a manager restart because someone saved a file meanwhile.
func startOSMDev() (*Env, error) {
	port, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	hostileAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	d, env, err := launchOSMDev("--watch=false", "--allowed-endpoints=http://"+hostileAddr)
	dev = d // also when it failed, so that TestMain stops what it started
	return env, err
}

var (
	buildOnce sync.Once
	osmDevBin string
	buildErr  error
)

// The suite's own binaries (osm-dev, kubectl-osm) go to a folder TestMain removes.
var (
	binDirOnce sync.Once
	binDir     string
	binDirErr  error
)

func suiteBinDir() (string, error) {
	binDirOnce.Do(func() { binDir, binDirErr = os.MkdirTemp("", "osm-e2e-bin-") })
	return binDir, binDirErr
}

// buildOSMDev builds osm-dev once per run of the suite, into a folder of its own: the
// servers' bin/ (OSM_BIN_DIR) may be shared with other checkouts, whose suites build their own.
func buildOSMDev() (string, error) {
	buildOnce.Do(func() {
		root, err := localenv.ModuleRoot()
		if err != nil {
			buildErr = err
			return
		}
		binDir, err := suiteBinDir()
		if err != nil {
			buildErr = err
			return
		}
		osmDevBin = filepath.Join(binDir, "osm-dev")
		build := exec.Command("go", "build", "-o", osmDevBin, "./cmd/osm-dev")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build -o %s ./cmd/osm-dev: %v\n%s", osmDevBin, err, out)
		}
	})
	return osmDevBin, buildErr
}

// launchOSMDev starts osm-dev with extra flags, on free ports with a temporary state dir,
// and waits for env.json. The osmDev it returns, even with an error, must be stopped.
func launchOSMDev(extra ...string) (*osmDev, *Env, error) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		return nil, nil, err
	}
	bin, err := buildOSMDev()
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "osm-e2e-")
	if err != nil {
		return nil, nil, err
	}
	d := &osmDev{
		root:     tmp,
		stateDir: filepath.Join(tmp, "state"),
		outPath:  filepath.Join(tmp, "osm-dev.out"),
		ports:    map[string]int{},
		done:     make(chan struct{}),
	}
	// Certificates made in Go in a folder of their own, never mkcert's: that is what a fresh
	// machine gets, and the path an older osm-dev broke (kube-apiserver refused its keys).
	// kwok's fake node unless extra asks for the real one (a later flag wins): the real node is
	// one per machine, and the suites that run side by side each start an osm-dev.
	args := []string{"--state-dir", d.stateDir, "--certs-dir", filepath.Join(tmp, "certs"), "--mkcert", "never", "--node=fake"}
	for _, flag := range portFlags {
		p, err := localenv.FreePort()
		if err != nil {
			return nil, nil, err
		}
		d.ports[flag] = p
		args = append(args, "--"+flag, strconv.Itoa(p))
	}
	args = append(args, extra...)
	out, err := os.Create(d.outPath)
	if err != nil {
		return nil, nil, err
	}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Dir = root
	d.cmd.Stdout, d.cmd.Stderr = out, out
	// Its own process group, so that if it fails to stop, the suite can still reach what it
	// started; and it dies with the test binary.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(os.Stderr, "e2e: starting %s %s\n", bin, strings.Join(args, " "))
	if err := d.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, nil, fmt.Errorf("starting osm-dev: %w", err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		_ = out.Close()
		close(d.done)
	}()

	envPath := filepath.Join(d.stateDir, "env.json")
	deadline := time.Now().Add(envFileTimeout)
	if slices.Contains(extra, "--node=real") {
		// The real node is one per machine: osm-dev waits for another one's to stop.
		deadline = deadline.Add(realNodeLockWait)
	}
	for {
		select {
		case <-d.done:
			return d, nil, fmt.Errorf("osm-dev exited (%v) before it wrote %s", d.waitErr, envPath)
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := os.Stat(envPath); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return d, nil, fmt.Errorf("osm-dev did not write %s within %s", envPath, envFileTimeout)
		}
	}
	env, err := readEnvFile(envPath)
	if err != nil {
		return d, nil, err
	}
	fmt.Fprintf(os.Stderr, "e2e: osm-dev ready: API server %s, S3 %s\n", env.APIServer, env.S3Endpoint)
	return d, env, nil
}

// readEnvFile reads env.json and checks that every field the suite relies on is there.
func readEnvFile(path string) (*Env, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var env Env
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var missing []string
	for name, v := range map[string]string{
		"kubeconfig": env.Kubeconfig, "apiServer": env.APIServer, "s3Endpoint": env.S3Endpoint,
		"s3Region": env.S3Region, "contractAPI": env.ContractAPI,
		"contractAPITokenFile": env.ContractAPITokenFile, "managerLog": env.ManagerLog,
		"managerKubeconfig": env.ManagerKubeconfig, "managerMetrics": env.ManagerMetrics,
	} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s lacks %v", path, missing)
	}
	return &env, nil
}

// stop sends SIGTERM to osm-dev and waits for it to exit 0 and for its ports to close. It
// returns the problems it found; a process still running after stopTimeout is killed with its
// process group.
func (d *osmDev) stop() []error {
	if d == nil || d.cmd == nil || d.cmd.Process == nil {
		return nil
	}
	var errs []error
	select {
	case <-d.done:
		errs = append(errs, fmt.Errorf("osm-dev had already exited before the suite stopped it: %v", d.waitErr))
	default:
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
			if d.waitErr != nil {
				errs = append(errs, fmt.Errorf("osm-dev did not exit 0 after SIGTERM: %v", d.waitErr))
			}
		case <-time.After(stopTimeout):
			errs = append(errs, fmt.Errorf("osm-dev did not exit within %s of SIGTERM; killing its process group", stopTimeout))
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.done
		}
	}
	// Everything osm-dev started must be gone with it.
	deadline := time.Now().Add(5 * time.Second)
	for _, flag := range portFlags {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(d.ports[flag]))
		for {
			conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err != nil {
				break
			}
			_ = conn.Close()
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("something still listens on %s (--%s) after osm-dev exited", addr, flag))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return errs
}

// managerLogPath is the manager's log: from env.json, or the likeliest file under logs/ when
// osm-dev never got that far.
func managerLogPath() string {
	if sharedEnv != nil {
		return sharedEnv.ManagerLog
	}
	if dev == nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(dev.stateDir, "logs", "*manager*"))
	if len(matches) > 0 {
		return matches[0]
	}
	return ""
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(raw, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// printDiagnostics prints the tails of osm-dev's output and the manager's log.
func printDiagnostics() {
	if dev != nil {
		fmt.Fprintf(os.Stderr, "\n--- last lines of osm-dev's output (%s) ---\n%s\n", dev.outPath, tail(dev.outPath, 30))
		if entries, err := os.ReadDir(filepath.Join(dev.stateDir, "logs")); err == nil {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			fmt.Fprintf(os.Stderr, "--- logs in %s: %s\n", filepath.Join(dev.stateDir, "logs"), strings.Join(names, " "))
		}
	}
	if p := managerLogPath(); p != "" {
		fmt.Fprintf(os.Stderr, "\n--- last lines of the manager's log (%s) ---\n%s\n", p, tail(p, 80))
	} else {
		fmt.Fprintln(os.Stderr, "\n--- no manager log found")
	}
}

// errKubectlMissing is the message the suite fails with when kubectl is not on PATH.
var errKubectlMissing = errors.New("kubectl not found in PATH: install kubectl (.ci/run installs it)")

// withTimeout is context.WithTimeout on the background context.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
