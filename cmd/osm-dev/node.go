package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/netns"
)

// The real node: containerd, runc and the kubelet run pods as containers, and kube-proxy gives
// Services their addresses, all inside a network namespace of their own (nodeNetNS), so the
// bridge, the pod range, routes, ip_forward and iptables rules are made there and the host's
// network is never changed. What crosses between the two are TCP forwards (package netns):
//
//   - inside the namespace, 127.0.0.1:<port> of the API server reaches the host's, so the kubelet
//     and kube-proxy use the same address and certificate as everything else;
//   - on the node's address (nodeIP), the S3 server's and the contract server's ports reach the
//     host's, for pods;
//   - from the host, an HTTP proxy reaches the kubelet, pods and Services (nodeaccess.go).
//
// Pods get addresses in podCIDR on the bridge; the node's own address is the bridge's (the
// kubelet refuses a loopback node IP). Stopping kills every process in the namespace and in the
// pods' cgroups, unmounts what the node mounted under its state directory, and deletes the
// namespace, which takes its interfaces, routes and rules with it (see stopRealNode).

const (
	nodeNetNS  = "osm-node"
	nodeBridge = "osm0"
	// cniNetwork names the pods' network, and CNI's cached results under /var/lib/cni.
	cniNetwork = "osm-dev-node"
	nodeIP     = "10.244.0.1"
	podCIDR    = "10.244.0.0/24"
	// serviceCIDR is the API server's --service-cluster-ip-range; the kubernetes Service gets its
	// first address.
	serviceCIDR         = "10.0.0.0/24"
	kubernetesServiceIP = "10.0.0.1"
	// nodeCgroup is the kubelet's cgroupRoot: the pods' cgroups live under it in every hierarchy,
	// apart from anything else on the machine, and are removed on stop.
	nodeCgroup = "osm-dev"
	// pauseImage is the sandbox image, built here from cmd/osm-dev/pause.
	pauseRepo  = "osm.dev/pause"
	pauseImage = pauseRepo + ":dev"
	// nodeLock makes the real node one per machine: the namespace's name and the bridge's
	// addresses are fixed. With --node=auto, another osm-dev holding it gets the fake node; with
	// --node=real, it waits for it (nodeLockWait).
	nodeLock = "/run/osm-dev-node.lock"
)

var (
	kubelet   = component{name: "kubelet", user: "system:node:" + nodeName, groups: "system:nodes"}
	kubeProxy = component{name: "kube-proxy", user: "system:kube-proxy"}
)

// realNode is what the real node started, for the stop.
type realNode struct {
	ns         netns.Namespace
	lock       *os.File
	forwarders []*netns.Forwarder
	containerd *localenv.Process
	kubelet    *localenv.Process
	kubeProxy  *localenv.Process
	dir        string // its state: containerd's, the kubelet's, CNI's
}

// nodeImages are the --node-image flags: image name to OCI archive.
type nodeImages map[string]string

func (n *nodeImages) String() string {
	var out []string
	for name, path := range *n {
		out = append(out, name+"="+path)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func (n *nodeImages) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("%q is not NAME=ARCHIVE", v)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if *n == nil {
		*n = nodeImages{}
	}
	(*n)[name] = abs
	return nil
}

// nodePorts are the --node-port flags.
type nodePorts []int

func (n *nodePorts) String() string {
	var out []string
	for _, p := range *n {
		out = append(out, strconv.Itoa(p))
	}
	return strings.Join(out, ",")
}

func (n *nodePorts) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("%q is not a port", f)
		}
		*n = append(*n, p)
	}
	return nil
}

// nodeBinaries are the servers of a real node built into bin/ (hack/tools/build.sh).
var nodeBinaries = []string{"containerd", "containerd-shim-runc-v2", "ctr", "kubelet", "kube-proxy"}

// nodeHostTools are what the real node needs from Debian (make deps), by path.
var nodeHostTools = []string{"/usr/sbin/runc", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback", "nsenter", "ip", "iptables", "conntrack"}

// realNodeUnavailable says why this machine cannot run the real node, or "" when it can.
func realNodeUnavailable() string {
	if os.Geteuid() != 0 {
		return "it needs root (network namespace, mounts, cgroups)"
	}
	for _, name := range nodeBinaries {
		if _, err := localenv.Binary(name); err != nil {
			return err.Error()
		}
	}
	for _, tool := range nodeHostTools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("%s is missing: run `make deps`", tool)
		}
	}
	if !exists("/sys/fs/cgroup/memory") && !exists("/sys/fs/cgroup/cgroup.controllers") {
		return "no cgroup hierarchy under /sys/fs/cgroup"
	}
	return ""
}

// startRealNode makes the namespace and its forwards, and starts containerd, the kubelet and
// kube-proxy inside it. It returns errNodeBusy when another osm-dev runs the real node.
func (e *environment) startRealNode(ctx context.Context) (err error) {
	n := &realNode{dir: e.path("node")}
	wait := time.Duration(0)
	if e.opts.node == "real" {
		wait = nodeLockWait
	}
	if n.lock, err = lockNode(ctx, nodeLock, wait, e.opts.stateDir); err != nil {
		return err
	}
	e.node = n
	defer func() {
		if err != nil {
			e.stopRealNode()
		}
	}()
	// A namespace left by an osm-dev that was killed: clear it and what ran in it first.
	if n.ns = (netns.Namespace{Name: nodeNetNS}); n.ns.Exists() {
		status("node", "clearing the real node an earlier osm-dev left behind")
		n.teardown()
	}
	// containerd's and the kubelet's state is rebuilt each start (the pause image is imported
	// again in a second); CNI's address leases would otherwise name pods that are gone.
	if err := os.RemoveAll(n.dir); err != nil {
		return err
	}
	for _, d := range []string{"containerd", "kubelet", "cni/net.d", "cni/ipam", "kube-proxy"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o700); err != nil {
			return err
		}
	}
	if n.ns, err = netns.Create(nodeNetNS); err != nil {
		return err
	}
	for _, step := range [][]string{
		{"link", "add", nodeBridge, "type", "bridge"},
		{"addr", "add", nodeIP + "/24", "dev", nodeBridge},
		{"link", "set", nodeBridge, "up"},
		// What the node itself sends to a Service's address (a forward from the host) needs a
		// route before kube-proxy's rules turn it into a pod's address.
		{"route", "add", serviceCIDR, "dev", nodeBridge, "src", nodeIP},
	} {
		if err := n.ns.IP(step...); err != nil {
			return err
		}
	}
	// Pods reach Services (DNAT by kube-proxy) and each other through the namespace's routing.
	if err := n.ns.Sysctl("net.ipv4.ip_forward", "1"); err != nil {
		return err
	}
	host := func(port int) netns.Side { return netns.Side{Addr: hostPort(port)} }
	inside := func(ip string, port int) netns.Side {
		return netns.Side{NS: &n.ns, Addr: fmt.Sprintf("%s:%d", ip, port)}
	}
	forwards := []struct{ from, to netns.Side }{
		{inside("127.0.0.1", e.opts.apiPort), host(e.opts.apiPort)},
		// Pods reach the API server as in any cluster: the kubernetes Service's address, which
		// kube-proxy sends to this forward (serveKubernetesService).
		{inside(nodeIP, e.opts.apiPort), host(e.opts.apiPort)},
		{inside(nodeIP, e.opts.s3Port), host(e.opts.s3Port)},
		{inside(nodeIP, e.opts.contractAPIPort), host(e.opts.contractAPIPort)},
	}
	for _, port := range e.opts.nodePorts {
		forwards = append(forwards, struct{ from, to netns.Side }{inside(nodeIP, port), host(port)})
	}
	for _, f := range forwards {
		fw, err := netns.Forward(f.from, f.to)
		if err != nil {
			return err
		}
		n.forwarders = append(n.forwarders, fw)
	}

	e.proxy.SetNamespace(&n.ns)
	if err := e.startContainerd(ctx, n); err != nil {
		return err
	}
	if err := e.importImages(ctx, n); err != nil {
		return err
	}
	if err := e.serveKubernetesService(ctx); err != nil {
		return err
	}
	if err := makeCgroups(nodeCgroup); err != nil {
		return fmt.Errorf("making the pods' cgroup %s: %w", nodeCgroup, err)
	}
	if err := e.startKubelet(n); err != nil {
		return err
	}
	return e.startKubeProxy(n)
}

var errNodeBusy = errors.New("another osm-dev runs the real node on this machine")

// nodeLockWait is how long --node=real waits for another osm-dev's real node to stop: longer
// than a test suite that uses it (test/install, TestRealNode) takes, so that suites started side
// by side take turns instead of failing.
const nodeLockWait = 15 * time.Minute

// lockNode takes the real node's lock (the file path, nodeLock), waiting up to wait while another
// osm-dev holds it (with a line saying who, from what the holder wrote into the lock file), and
// writes who holds it now.
func lockNode(ctx context.Context, path string, wait time.Duration, stateDir string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || !time.Now().Before(deadline) {
			_ = f.Close()
			if wait > 0 {
				return nil, fmt.Errorf("%w (waited %s for %s)", errNodeBusy, wait, nodeHolder(f.Name()))
			}
			return nil, errNodeBusy
		}
		if !said {
			status("node", "waiting up to %s for the real node: %s holds %s", wait, nodeHolder(f.Name()), path)
			said = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if said {
		status("node", "the real node is free: starting it")
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("osm-dev pid %d, state directory %s\n", os.Getpid(), stateDir)), 0)
	}
	return f, nil
}

// nodeHolder says who holds the node's lock, as the holder wrote it, when that process still
// runs: what an osm-dev that was killed wrote stays in the file, and an older osm-dev writes
// nothing.
func nodeHolder(path string) string {
	b, err := os.ReadFile(path)
	who := strings.TrimSpace(string(b))
	var pid int
	if _, scanErr := fmt.Sscanf(who, "osm-dev pid %d,", &pid); err == nil && scanErr == nil && exists(fmt.Sprintf("/proc/%d", pid)) {
		return who
	}
	return "another osm-dev"
}

// unlockNode clears who held the node's lock and lets it go.
func unlockNode(f *os.File) {
	_ = f.Truncate(0)
	_ = f.Close()
}

// nsStart starts bin inside the node's namespace (nsenter: the network namespace only).
func (e *environment) nsStart(n *realNode, name, bin string, args, env []string) (*localenv.Process, error) {
	cmd, cmdArgs := n.ns.Command(bin, args...)
	return e.start(name, cmd, cmdArgs, env)
}

func (e *environment) startContainerd(ctx context.Context, n *realNode) error {
	bin, err := localenv.Binary("containerd")
	if err != nil {
		return err
	}
	dir := filepath.Join(n.dir, "containerd")
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, []byte(containerdConfig(n.dir)), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.dir, "cni", "net.d", "10-osm-dev.conflist"), []byte(cniConfig(n.dir)), 0o600); err != nil {
		return err
	}
	binDir := filepath.Dir(bin)
	// Its shim is found on PATH: bin/ first, so the shim built with it is the one it runs.
	env := []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")}
	if n.containerd, err = e.nsStart(n, "containerd", bin, []string{"--config", config}, env); err != nil {
		return err
	}
	return waitFor(ctx, 30*time.Second, "answer from containerd", func() bool { return e.ctr(ctx, n, "version") == nil }, n.containerd)
}

func (n *realNode) containerdSocket() string {
	return filepath.Join(n.dir, "containerd", "containerd.sock")
}

// ctr runs ctr against the node's containerd, in the namespace Kubernetes' images live in.
func (e *environment) ctr(ctx context.Context, n *realNode, args ...string) error {
	_, err := n.ctr(ctx, args...)
	return err
}

func (n *realNode) ctr(ctx context.Context, args ...string) (string, error) {
	bin, err := localenv.Binary("ctr")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--address", n.containerdSocket(), "--namespace", "k8s.io"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// removeContainers deletes every container through containerd while it runs, so that each shim
// exits on its own and removes its socket (under /run/containerd/s, which containerd does not
// let us move). Bounded: what is left is killed by teardown.
func (n *realNode) removeContainers() {
	if n.containerd == nil || n.containerd.Exited() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, list := range [][]string{{"tasks", "ls", "-q"}, {"containers", "ls", "-q"}} {
		out, err := n.ctr(ctx, list...)
		if err != nil {
			return
		}
		for _, id := range strings.Fields(out) {
			if list[0] == "tasks" {
				_, _ = n.ctr(ctx, "tasks", "delete", "--force", id)
			} else {
				_, _ = n.ctr(ctx, "containers", "delete", id)
			}
		}
	}
}

// builtImage is an image the real node runs that is built here, from a static binary, as the
// release's images are (hack/tools/image): nothing on this machine can pull one.
type builtImage struct {
	name, pkg, repo string
}

// builtImages are the sandbox image (pauseImage, which containerd's config names) and the
// images config/samples' Application runs (docs/development.md).
var builtImages = []builtImage{
	{name: "pause", pkg: "./cmd/osm-dev/pause", repo: pauseRepo},
	{name: "osm-demo", pkg: "./cmd/osm-demo", repo: "osm.dev/demo"},
	{name: "osm-backup", pkg: "./cmd/osm-backup", repo: "osm.dev/backup"},
}

// nodeImagesDir is where buildNodeImages writes the images, NAME.tar each.
func (e *environment) nodeImagesDir() string { return e.path("bin", "node-images") }

// buildNodeImages builds builtImages into nodeImagesDir.
func (e *environment) buildNodeImages(ctx context.Context) error {
	out := e.nodeImagesDir()
	bins := filepath.Join(out, "bin")
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", bins + string(filepath.Separator)}
	imageArgs := []string{"run", ".", "-out", out, "-version", "dev"}
	for _, img := range builtImages {
		args = append(args, img.pkg)
		imageArgs = append(imageArgs, img.name+"="+filepath.Join(bins, filepath.Base(img.pkg)))
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir, build.Env = e.root, append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the node's images: %w: %s", err, b)
	}
	image := exec.CommandContext(ctx, "go", imageArgs...)
	image.Dir = filepath.Join(e.root, "hack", "tools", "image")
	if b, err := image.CombinedOutput(); err != nil {
		return fmt.Errorf("building the node's images: %w: %s", err, b)
	}
	return nil
}

// importImages imports the images built here (builtImages, by the binaries step) and the
// --node-image archives, each under its name, by tag and by digest. Without --base-name,
// containerd would name them import-<date>.
func (e *environment) importImages(ctx context.Context, n *realNode) error {
	archives := map[string]string{}
	for _, img := range builtImages {
		archives[img.repo] = filepath.Join(e.nodeImagesDir(), img.name+".tar")
	}
	maps.Copy(archives, e.opts.nodeImages)
	for _, name := range slices.Sorted(maps.Keys(archives)) {
		if err := e.ctr(ctx, n, "images", "import", "--base-name", name, "--digests", "--local", archives[name]); err != nil {
			return err
		}
		if _, given := e.opts.nodeImages[name]; given {
			status("node", "image %s imported from %s", name, archives[name])
		}
	}
	return nil
}

// kubernetesSlice is the EndpointSlice osm-dev writes for the kubernetes Service: the API
// server's own reconciler is off (it cannot name a loopback address).
const kubernetesSlice = "kubernetes-osm-dev"

// serveKubernetesService points the kubernetes Service (10.0.0.1:443, which in-cluster clients
// call) at the forward on the node's address to the API server, so a pod reaches the API server
// as it does in any cluster; the API server's certificate names 10.0.0.1 (certificates).
func (e *environment) serveKubernetesService(ctx context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: kubernetesSlice, Labels: map[string]string{
			discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "osm-dev",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{nodeIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(e.opts.apiPort)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	old := &discoveryv1.EndpointSlice{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(slice), old); {
	case apierrors.IsNotFound(err):
		return c.Create(ctx, slice)
	case err != nil:
		return err
	}
	slice.ResourceVersion = old.ResourceVersion
	return c.Update(ctx, slice)
}

func (e *environment) startKubelet(n *realNode) error {
	bin, err := localenv.Binary("kubelet")
	if err != nil {
		return err
	}
	dir := filepath.Join(n.dir, "kubelet")
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(kubeletConfig(n.dir, e.kubeletCA(), n.containerdSocket())), 0o600); err != nil {
		return err
	}
	n.kubelet, err = e.nsStart(n, kubelet.name, bin, []string{
		"--config=" + config,
		"--kubeconfig=" + e.componentKubeconfig(kubelet),
		"--root-dir=" + dir,
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--hostname-override=" + nodeName,
		"--node-ip=" + nodeIP,
		"--node-labels=type=osm-dev",
	}, nil)
	return err
}

func (e *environment) startKubeProxy(n *realNode) error {
	bin, err := localenv.Binary("kube-proxy")
	if err != nil {
		return err
	}
	config := filepath.Join(n.dir, "kube-proxy", "config.yaml")
	if err := os.WriteFile(config, []byte(kubeProxyConfig(e.componentKubeconfig(kubeProxy))), 0o600); err != nil {
		return err
	}
	n.kubeProxy, err = e.nsStart(n, kubeProxy.name, bin, []string{"--config=" + config}, nil)
	return err
}

// stopRealNode stops the node and removes everything it made; the namespace goes last.
func (e *environment) stopRealNode() {
	n := e.node
	if n == nil {
		return
	}
	for _, p := range []*localenv.Process{n.kubeProxy, n.kubelet} {
		_ = p.Stop()
	}
	if e.proxy != nil {
		e.proxy.SetNamespace(nil)
	}
	for _, f := range n.forwarders {
		_ = f.Close()
	}
	n.forwarders = nil
	n.removeContainers()
	n.teardown()
	// containerd was killed with everything else in the namespace; collect its exit.
	_ = n.containerd.Stop()
	if n.lock != nil {
		unlockNode(n.lock)
	}
	// Out of the processes osm-dev watches: after a failed start, kwok takes over.
	procs := e.procs[:0]
	for _, p := range e.procs {
		if p != n.containerd && p != n.kubelet && p != n.kubeProxy {
			procs = append(procs, p)
		}
	}
	e.procs = procs
	e.node = nil
	status("node", "stopped (kubelet, containerd, kube-proxy and the pods' containers); network namespace %s, its bridge, routes and rules removed", nodeNetNS)
}

// teardown ends every process in the node's namespace and in its pods' cgroups (containers,
// their shims, containerd, the kubelet), unmounts what they mounted under the node's state
// directory (container filesystems, volumes, the pods' namespaces), deletes the namespace and
// removes the pods' cgroups. It works the same on what an osm-dev that was killed left behind.
func (n *realNode) teardown() {
	inode := netnsInode(n.ns.Path())
	for round := 0; round < 3; round++ {
		sig := syscall.SIGTERM
		if round > 0 {
			sig = syscall.SIGKILL
		}
		pids := nodeProcesses(inode)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		// Bounded: a process that ignores SIGTERM gets SIGKILL in the next round.
		for i := 0; i < 50 && len(nodeProcesses(inode)) > 0; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	unmountUnder(n.dir)
	_ = n.ns.Delete()
	removeCgroups(nodeCgroup)
	// What CNI and containerd keep outside the node's state directory: CNI's cache of results,
	// named after the network, and the shims' socket folder, once empty.
	results, _ := filepath.Glob("/var/lib/cni/results/" + cniNetwork + "-*")
	for _, r := range results {
		_ = os.Remove(r)
	}
	for _, dir := range []string{"/var/lib/cni/results", "/var/lib/cni", "/run/containerd/s", "/run/containerd"} {
		_ = syscall.Rmdir(dir) // only when empty: another containerd may use them
	}
}

// netnsInode is the inode of a network namespace file, 0 when there is none.
func netnsInode(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	return st.Ino
}

// nodeProcesses lists the processes in the network namespace with that inode, and those in the
// pods' cgroups (containers have network namespaces of their own).
func nodeProcesses(nsInode uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, ent := range entries {
		var pid int
		if _, err := fmt.Sscanf(ent.Name(), "%d", &pid); err != nil || pid == self {
			continue
		}
		if nsInode != 0 {
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join("/proc", ent.Name(), "ns", "net"), &st); err == nil && st.Ino == nsInode {
				pids = append(pids, pid)
				continue
			}
		}
		cg, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cgroup"))
		if err == nil && strings.Contains(string(cg), ":/"+nodeCgroup+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// unmountUnder detaches every mount at or below dir, deepest first.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		// Spaces and such are octal-escaped in mountinfo; the node's paths have none.
		if p := fields[4]; p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		_ = syscall.Unmount(points[i], syscall.MNT_DETACH)
	}
}

// makeCgroups makes the kubelet's cgroupRoot in every hierarchy (the kubelet checks that it is
// there). A new cpuset cgroup has no CPUs or memory nodes of its own: it gets its parent's.
func makeCgroups(name string) error {
	if exists("/sys/fs/cgroup/cgroup.controllers") { // cgroup v2 alone
		return os.MkdirAll("/sys/fs/cgroup/"+name, 0o755)
	}
	hierarchies, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return err
	}
	for _, h := range hierarchies {
		if !h.IsDir() || h.Name() == "unified" {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup", h.Name(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if h.Name() == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuset", f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// removeCgroups removes the kubelet's cgroup tree under name from every hierarchy, deepest first
// (only empty cgroups can go, so this runs once the processes are gone).
func removeCgroups(name string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	if exists("/sys/fs/cgroup/" + name) {
		roots = append(roots, "/sys/fs/cgroup/"+name)
	}
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = syscall.Rmdir(dirs[i])
		}
	}
}

// waitRealNode waits for the kubelet to register the node and report it Ready.
func (e *environment) waitRealNode(ctx context.Context, timeout time.Duration) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	n := e.node
	return waitFor(ctx, timeout, fmt.Sprintf("node %s Ready", nodeName), func() bool { return nodeReady(ctx, c) },
		n.kubelet, n.containerd, n.kubeProxy)
}

// forgetFakeNode deletes a node kwok played in an earlier run of this state directory: the
// kubelet registers its own.
func (e *environment) forgetFakeNode(ctx context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, fake := node.Annotations[kwokNodeAnnotation]; !fake {
		return nil
	}
	if err := c.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func containerdConfig(dir string) string {
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q

[plugins."io.containerd.cri.v1.runtime"]
  # Without CAP_SYS_RESOURCE a container cannot get a lower OOM score than containerd's own:
  # asking for one makes every sandbox fail ("can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  # The pods' network namespaces are mounted under the node's state, not /var/run/netns.
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = %[5]q
    # The pods' loopback is brought up by containerd itself, not by CNI's plugin, whose cached
    # results would be left under /var/lib/cni.
    use_internal_loopback = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
        # runc's state, under the node's state rather than /run/containerd/runc.
        Root = %[7]q

[plugins."io.containerd.cri.v1.images"]
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %[6]q

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true

# No NRI plugins here: it would make /run/nri.
[plugins."io.containerd.nri.v1.nri"]
  disable = true
`, filepath.Join(dir, "containerd", "root"), filepath.Join(dir, "containerd", "state"),
		filepath.Join(dir, "containerd", "containerd.sock"), filepath.Join(dir, "containerd", "containerd.sock.ttrpc"),
		filepath.Join(dir, "cni", "net.d"), pauseImage, filepath.Join(dir, "containerd", "runc"))
}

// cniConfig is the pods' network: the bridge made with the namespace, addresses from podCIDR,
// and a default route through the node (without it a pod cannot reach a Service's address:
// "network is unreachable").
func cniConfig(dir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %q,
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`, cniNetwork, nodeBridge, filepath.Join(dir, "cni", "ipam"), podCIDR, nodeIP)
}

func kubeletConfig(dir, clientCA, containerdSocket string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# On the bridge inside the node's namespace; its health check on the namespace's loopback.
address: %[1]s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
# cgroup v1 and no systemd in a dev container; cgroupRoot keeps the pods apart.
cgroupDriver: cgroupfs
cgroupRoot: /%[2]s
failCgroupV1: false
failSwapOn: false
# The namespace's iptables are kube-proxy's; the kubelet's own chains are not needed.
makeIPTablesUtilChains: false
containerRuntimeEndpoint: unix://%[3]s
podLogsDir: %[4]s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[5]s
authorization:
  mode: Webhook
# A developer's disk is often fuller than a server's: evict on memory only.
evictionHard:
  memory.available: 100Mi
  nodefs.available: "0%%"
  imagefs.available: "0%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
`, nodeIP, nodeCgroup, containerdSocket, filepath.Join(dir, "kubelet", "logs"), clientCA)
}

func kubeProxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]s
hostnameOverride: %[2]s
mode: iptables
clusterCIDR: %[3]s
bindAddress: %[4]s
nodePortAddresses: [primary]
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables:
  # The bridge does not pass its frames through iptables (br_netfilter is the host's, and not
  # loaded): masquerading every Service connection brings the answer back through the node.
  masqueradeAll: true
conntrack:
  # The conntrack table's size is the host's, not the namespace's: leave it alone.
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, nodeName, podCIDR, nodeIP)
}
