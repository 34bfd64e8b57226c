package install

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// nodeIP is the real node's address (cmd/osm-dev): pods reach the host's servers of the ports
	// osm-dev forwards (--node-port) there.
	nodeIP = "10.244.0.1"
	// nodeStartTimeout bounds the wait for osm-dev's env.json: the real node is one per machine,
	// and osm-dev waits up to 15 minutes for another one's to stop, then builds what it runs.
	nodeStartTimeout = 25 * time.Minute
	// nodeStopTimeout is how long osm-dev may take to stop the node after SIGTERM.
	nodeStopTimeout = time.Minute
)

// node is a cluster with a real node: osm-dev's kube-apiserver, kube-controller-manager,
// kube-scheduler, and a kubelet with containerd and runc in a network namespace of its own.
type node struct {
	admin    *rest.Config
	stateDir string
	out      string
}

// nodeOptions say what the node must hold for the release to run on it.
type nodeOptions struct {
	// images are image names and the OCI archives imported under them.
	images map[string]string
	// ports are ports of 127.0.0.1 that pods reach on nodeIP.
	ports []int
}

// startNode starts osm-dev with the real node and without an install of its own (--no-install:
// no CRDs, RBAC, webhooks or manager; the release brings them), and stops it when the test ends,
// also when it fails.
func startNode(t *testing.T, o nodeOptions) *node {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the install test runs the manager as a Pod on osm-dev's real node, which needs root (network namespace, mounts, cgroups)")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "osm-dev")
	run(t, root, nil, "go", "build", "-o", bin, "./cmd/osm-dev")
	n := &node{stateDir: filepath.Join(dir, "state"), out: filepath.Join(dir, "osm-dev.out")}
	args := []string{"--state-dir", n.stateDir, "--certs-dir", filepath.Join(dir, "certs"), "--mkcert", "never",
		"--node=real", "--no-install", "--watch=false"}
	for _, flag := range []string{"api-port", "etcd-port", "etcd-peer-port", "s3-port", "s3-admin-port", "s3-website-port",
		"contract-api-port", "webhook-port", "health-port", "metrics-port", "controller-manager-port", "scheduler-port", "node-proxy-port"} {
		args = append(args, "--"+flag, strconv.Itoa(freePorts(t, 1)[0]))
	}
	for name, archive := range o.images {
		args = append(args, "--node-image="+name+"="+archive)
	}
	for _, port := range o.ports {
		args = append(args, "--node-port="+strconv.Itoa(port))
	}
	out, err := os.Create(n.out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, out, out
	// Its own process group, and it dies with the test binary: what it started stops with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	progress("starting osm-dev with the real node (it waits while another osm-dev holds it): %s", n.out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); _ = out.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("osm-dev did not exit 0 after SIGTERM: %v", err)
			}
		case <-time.After(nodeStopTimeout):
			t.Errorf("osm-dev did not stop within %s of SIGTERM; killing its process group", nodeStopTimeout)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Logf("osm-dev after SIGKILL: %v", <-done)
		}
		if t.Failed() {
			raw, _ := os.ReadFile(n.out)
			t.Logf("osm-dev's output (%s):\n%s", n.out, tail(raw, 40))
		}
	})

	envFile := filepath.Join(n.stateDir, "env.json")
	deadline := time.Now().Add(nodeStartTimeout)
	for {
		if _, err := os.Stat(envFile); err == nil {
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("osm-dev exited (%v) before the node was ready", err)
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatalf("osm-dev did not get the real node ready within %s", nodeStartTimeout)
		}
	}
	raw, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Kubeconfig string `json:"kubeconfig"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	if n.admin, err = clientcmd.BuildConfigFromFlags("", env.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(n.out); !strings.Contains(string(b), "a real node: kubelet, containerd and runc") {
		t.Fatalf("osm-dev did not start the real node:\n%s", b)
	}
	progress("the real node is ready")
	return n
}

// kubeletLog is the tail of the kubelet's log, for a failure's report.
func (n *node) kubeletLog() string {
	raw, err := os.ReadFile(filepath.Join(n.stateDir, "logs", "kubelet.log"))
	if err != nil {
		return fmt.Sprint(err)
	}
	return tail(raw, 30)
}
