package localenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ContainerEnv returns the variables that c sets to a value of its own, as NAME=value, for
// running its binary on this machine as its pod would. Those taken from a field or a Secret
// need a pod and are left out.
func ContainerEnv(c corev1.Container) []string {
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// BinDir is the folder holding the server binaries: $OSM_BIN_DIR, or bin/ at the module root.
func BinDir() (string, error) {
	if dir := os.Getenv("OSM_BIN_DIR"); dir != "" {
		return dir, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// ModuleRoot is the folder holding this module's go.mod.
func ModuleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the localenv package source")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the localenv package")
		}
		dir = parent
	}
}

// Binary returns the path of a server binary in BinDir, or an error that names the make target
// that builds it.
func Binary(name string) (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s not found in %s: run `make tools` to build it", name, dir)
	}
	return path, nil
}

// Process is a server started by the harness. Stop ends it by PID.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// StartProcess starts a binary in its own process group with stdout and stderr going to logPath.
func StartProcess(name, logPath string, bin string, args []string, env []string) (*Process, error) {
	return StartProcessTee(name, logPath, nil, bin, args, env)
}

// StartProcessTee is StartProcess with the output also copied to also, when it is not nil.
func StartProcessTee(name, logPath string, also io.Writer, bin string, args []string, env []string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", name, err)
	}
	var out io.Writer = logFile
	if also != nil {
		out = io.MultiWriter(logFile, also)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so Stop reaches children too and a Ctrl-C in a terminal does not
	// race the harness's own shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after a grace period, and waits.
func (p *Process) Stop() error {
	if p == nil || p.Exited() {
		return nil
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
	return nil
}

// Kill ends the process group at once with SIGKILL, as a crash or an OOM kill would, and waits.
func (p *Process) Kill() {
	if p == nil || p.Exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// WaitHTTP polls url until it answers with any HTTP status, the process exits, or the timeout
// passes.
func WaitHTTP(ctx context.Context, p *Process, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited before it served %s: see %s", p.Name, url, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not serve %s within %s: see %s", p.Name, url, timeout, p.LogPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// ChildProcess is a process whose parent is a given process, as /proc shows it.
type ChildProcess struct {
	PID     int
	Command string // the executable's name, as in /proc/PID/comm
}

// Children lists the living processes whose parent is pid, so tests can check that nothing they
// started outlives them.
func Children(pid int) ([]ChildProcess, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []ChildProcess
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// "PID (comm) STATE PPID ...": comm may hold spaces and parentheses, so split at the last ')'.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue // zombies have stopped; only their exit status is left to collect
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
			out = append(out, ChildProcess{PID: child, Command: s[open+1 : end]})
		}
	}
	return out, nil
}
