package e2e

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRealNode is make dev's real node: a kubelet with containerd and runc that runs a pod as a
// container, whose network lives in a namespace of its own, and runs the samples' Application
// for real (realApplication). The host's network is the same before the start and after the
// stop (ip link, ip route, iptables-save), and nothing the node made is left: no namespace, no
// mount under its state directory, no cgroup, no process.
func TestRealNode(t *testing.T) {
	before := hostNetwork(t)
	// Folders containerd and CNI use outside the node's state directory, when they make them.
	outside := []string{"/run/containerd", "/run/nri", "/var/lib/cni"}
	existed := map[string]bool{}
	for _, p := range outside {
		_, err := os.Stat(p)
		existed[p] = err == nil
	}
	d, env, err := launchOSMDev("--watch=false", "--node=real")
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		for _, err := range d.stop() {
			t.Error(err)
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() && d != nil {
			t.Logf("last lines of osm-dev's output (%s):\n%s", d.outPath, tail(d.outPath, 40))
			t.Logf("last lines of the kubelet's log:\n%s", tail(filepath.Join(d.stateDir, "logs", "kubelet.log"), 40))
		}
		if d != nil {
			_ = os.RemoveAll(d.root)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// What the node made outside its state directory, by inode: another osm-dev that waited for
	// the node (a suite beside this one) makes its own as soon as this one stops.
	made := map[string]uint64{}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/osm-dev")
	for _, p := range append(append([]string{"/run/netns/osm-node"}, cgroups...), outside...) {
		if ino, ok := inode(p); ok && !existed[p] {
			made[p] = ino
		}
	}
	if _, ok := made["/run/netns/osm-node"]; !ok {
		t.Errorf("no network namespace osm-node while the real node runs")
	}
	out, _ := os.ReadFile(d.outPath)
	if !strings.Contains(string(out), "a real node: kubelet, containerd and runc") {
		t.Errorf("osm-dev's output does not say the node is real:\n%s", out)
	}

	k := &kubectl{env: env, namespace: "default", logf: t.Logf}
	runtime, err := k.must(time.Minute, "get", "node", "osm-dev-node", "-o", "jsonpath={.status.nodeInfo.containerRuntimeVersion}")
	if err != nil || !strings.HasPrefix(runtime, "containerd://") {
		t.Fatalf("node's runtime: %q (%v), want containerd", runtime, err)
	}
	// The sandbox image osm-dev built and imported: the one image the node has without a registry.
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: real
spec:
  containers:
  - name: pause
    image: osm.dev/pause:dev
    imagePullPolicy: Never
    securityContext:
      runAsNonRoot: true
      allowPrivilegeEscalation: false
`
	// A pod is refused until kube-controller-manager has made the namespace's ServiceAccount.
	if _, err := k.must(time.Minute, "wait", "--for=create", "--timeout=50s", "serviceaccount/default"); err != nil {
		t.Fatal(err)
	}
	if r := k.run(time.Minute, []byte(pod), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	if _, err := k.must(2*time.Minute, "wait", "--for=condition=Ready", "--timeout=90s", "pod/real"); err != nil {
		t.Fatal(err)
	}
	got, err := k.must(time.Minute, "get", "pod", "real", "-o",
		`jsonpath={.status.podIP} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].state.running.startedAt}`)
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(got); len(f) != 3 || !strings.HasPrefix(f[0], "10.244.0.") || !strings.HasPrefix(f[1], "containerd://") {
		t.Errorf("pod real: %q, want an address in 10.244.0.0/24 and a running containerd container", got)
	}

	// The API server reaches the kubelet through osm-dev's proxy (its egress to the cluster)...
	if _, err := k.must(time.Minute, "logs", "real"); err != nil {
		t.Errorf("kubectl logs through the node proxy: %v", err)
	}
	// ...and so does a terminal: the kubelet answers, and asks who is calling.
	proxy, _ := url.Parse("http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(d.ports["node-proxy-port"])))
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxy),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the kubelet's self-signed certificate
	}}
	if resp, err := c.Get("https://10.244.0.1:10250/healthz"); err != nil {
		t.Errorf("the kubelet through the node proxy: %v", err)
	} else {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the kubelet through the node proxy: %s, want 401 Unauthorized", resp.Status)
		}
	}
	// An address neither on loopback nor inside the namespace is refused.
	if resp, err := c.Get("http://192.0.2.1/"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("192.0.2.1 through the node proxy: %s, want 502 Bad Gateway", resp.Status)
		}
	}

	t.Run("the samples' Application runs, backs up and restores", func(t *testing.T) { realApplication(t, d, env) })

	stop()
	if diff := cmp.Diff(before, hostNetwork(t)); diff != "" {
		t.Errorf("the host's network changed across a start and stop of the real node (-before +after):\n%s", diff)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), d.stateDir) {
		t.Errorf("mounts under %s outlived osm-dev", d.stateDir)
	}
	for p, ino := range made {
		if now, ok := inode(p); ok && now == ino {
			t.Errorf("%s outlived osm-dev", p)
		}
	}
}

// inode is path's inode number (a network namespace's own, for a file under /run/netns).
func inode(path string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// counters are the packet and byte counts iptables-save prints for each chain: traffic, not
// configuration.
var counters = regexp.MustCompile(`\[\d+:\d+\]`)

// hostNetwork is the host's interfaces, routes and iptables rules, as the three commands print
// them (without iptables-save's timestamps and counters).
func hostNetwork(t *testing.T) map[string]string {
	t.Helper()
	got := map[string]string{}
	for name, args := range map[string][]string{
		"ip link":       {"ip", "link"},
		"ip route":      {"ip", "route"},
		"iptables-save": {"iptables-save"},
	} {
		out, err := exec.Command(args[0], args[1:]...).Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, counters.ReplaceAllString(l, "[]"))
			}
		}
		got[name] = strings.Join(lines, "\n")
	}
	return got
}
