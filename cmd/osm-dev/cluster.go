package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The rest of a cluster around the API server: kube-controller-manager (garbage collection,
// namespace deletion, Deployments, ReplicaSets, Jobs, CronJobs, ServiceAccounts and their
// tokens), kube-scheduler, and one node: a real one (node.go), or kwok playing the kubelet of a
// fake node, where pods are scheduled and "run" without containers, and pods of Jobs complete.

// kwokStages are the kubelet's part that kwok plays (see the file).
//
//go:embed kwok/stages.yaml
var kwokStages []byte

// nodeName is the one node; kwok manages nodes with kwokNodeAnnotation only.
const (
	nodeName           = "osm-dev-node"
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// component is a control-plane client with a static token of its own.
type component struct {
	name string
	// user and groups are what the API server authenticates the token as. The controller
	// manager and the scheduler get the user names the API server's bootstrap RBAC grants
	// their roles to, so they run with the permissions they have in any cluster.
	user, groups string
}

var (
	controllerManager = component{name: "kube-controller-manager", user: "system:kube-controller-manager"}
	scheduler         = component{name: "kube-scheduler", user: "system:kube-scheduler"}
	// kwok plays every kubelet, and deletes pods as a kubelet does once they are stopped.
	kwok = component{name: "kwok", user: "kwok", groups: "system:masters"}
)

var components = []component{controllerManager, scheduler, kwok, kubelet, kubeProxy}

// componentTokens returns the lines of the API server's token file for the components, making
// their tokens the first time, and writes each component's kubeconfig.
func (e *environment) componentTokens() ([]string, error) {
	var lines []string
	for _, c := range components {
		token, err := readOrCreate(e.path(c.name, "token"), func() string { return localenv.RandomHex(24) })
		if err != nil {
			return nil, err
		}
		line := token + "," + c.user + "," + c.user
		if c.groups != "" {
			line += `,"` + c.groups + `"`
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// componentKubeconfig is the kubeconfig of a component, holding its token.
func (e *environment) componentKubeconfig(c component) string { return e.path(c.name, "kubeconfig") }

func (e *environment) writeComponentKubeconfigs() error {
	for _, c := range components {
		token, err := os.ReadFile(e.path(c.name, "token"))
		if err != nil {
			return err
		}
		if err := e.writeKubeconfigFor(e.componentKubeconfig(c), c.user, kubeconfigAuth{token: strings.TrimSpace(string(token))}, ""); err != nil {
			return err
		}
	}
	return nil
}

// startControllers starts kube-controller-manager, kube-scheduler and the node, without waiting
// for them: they get ready while the rest starts, and waitControllers waits at the end.
func (e *environment) startControllers(ctx context.Context) error {
	if err := e.writeComponentKubeconfigs(); err != nil {
		return err
	}
	kcm, err := localenv.Binary("kube-controller-manager")
	if err != nil {
		return err
	}
	kubeconfig := e.componentKubeconfig(controllerManager)
	if e.controllerManager, err = e.start(controllerManager.name, kcm, []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", e.opts.controllerManagerPort),
		"--tls-cert-file=" + e.certPath("tls.crt"), "--tls-private-key-file=" + e.certPath("tls.key"),
		// One instance: leader election would only delay a restart by a lease's duration.
		"--leader-elect=false",
		// Each controller under a ServiceAccount of its own, as kubeadm runs it.
		"--use-service-account-credentials=true",
		// Signs the tokens of ServiceAccount token Secrets, with the API server's key.
		"--service-account-private-key-file=" + e.path("apiserver", "service-account.key"),
		// Published in every namespace as ConfigMap kube-root-ca.crt.
		"--root-ca-file=" + e.certPath("ca.crt"),
	}, nil); err != nil {
		return err
	}

	sched, err := localenv.Binary("kube-scheduler")
	if err != nil {
		return err
	}
	kubeconfig = e.componentKubeconfig(scheduler)
	if e.scheduler, err = e.start(scheduler.name, sched, []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", e.opts.schedulerPort),
		"--tls-cert-file=" + e.certPath("tls.crt"), "--tls-private-key-file=" + e.certPath("tls.key"),
		"--leader-elect=false",
	}, nil); err != nil {
		return err
	}
	return e.startNode(ctx)
}

// startNode starts the node --node asks for. With auto, a machine that cannot run the real one
// (not root, packages missing, containerd failing to start) gets kwok's, with one line saying why.
func (e *environment) startNode(ctx context.Context) error {
	if e.opts.node == "fake" {
		return e.startKwok(ctx)
	}
	why := realNodeUnavailable()
	if why == "" {
		if err := e.forgetFakeNode(ctx); err != nil {
			return err
		}
		err := e.startRealNode(ctx)
		if err == nil {
			e.realNode = true
			return nil
		}
		why = err.Error()
	}
	if e.opts.node == "real" {
		return fmt.Errorf("the real node cannot run: %s", why)
	}
	status("node", "the real node cannot run here (%s): kwok's fake node instead (--node=fake skips the attempt)", why)
	return e.startKwok(ctx)
}

// startKwok starts kwok, which plays the kubelet of a fake node, and makes the node.
func (e *environment) startKwok(ctx context.Context) error {
	bin, err := e.buildTool(ctx, "kwok")
	if err != nil {
		return err
	}
	stages := e.path(kwok.name, "stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return err
	}
	// kwok serves nothing (no --server-address): no kubectl logs or exec, there is no container.
	if e.kwok, err = e.start(kwok.name, bin, []string{
		"--kubeconfig=" + e.componentKubeconfig(kwok),
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		// Pod IPs, apart from the Services' 10.0.0.0/24.
		"--cidr=10.244.0.0/16",
		"--node-ip=127.0.0.1",
		// Renew the node's Lease, as a kubelet does; without one, kube-controller-manager marks
		// the node NotReady within a minute, and with it every pod on it.
		"--node-lease-duration-seconds=40",
	}, nil); err != nil {
		return err
	}
	return e.ensureNode(ctx)
}

// ensureNode makes the fake node, once: its capacity is what the scheduler fits pods into.
func (e *environment) ensureNode(ctx context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        nodeName,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				corev1.LabelHostname: nodeName, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
				"type": "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
				corev1.ResourcePods: resource.MustParse("110"),
			},
		},
	}
	node.Status.Allocatable = node.Status.Capacity
	old := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(node), old); err == nil && old.Annotations[kwokNodeAnnotation] == "" {
		// A real kubelet registered it in an earlier run of this state directory; kwok manages
		// only the nodes it is told to.
		if err := c.Delete(ctx, old); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the real node %s: %w", nodeName, err)
		}
	}
	if err := c.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", nodeName, err)
	}
	return nil
}

// waitControllers waits until the controller manager and the scheduler answer their health
// checks and the node is Ready.
func (e *environment) waitControllers(ctx context.Context) error {
	for _, w := range []struct {
		p    *localenv.Process
		port int
		path string
	}{
		{e.controllerManager, e.opts.controllerManagerPort, "/healthz"},
		{e.scheduler, e.opts.schedulerPort, "/readyz"},
	} {
		if err := e.waitHTTPS(ctx, w.p, "https://"+hostPort(w.port)+w.path, "", 90*time.Second); err != nil {
			return err
		}
		status(w.p.Name, "ready on https://%s (pid %d)", hostPort(w.port), w.p.PID())
	}
	if e.realNode {
		// The first start of a kubelet registers the node, then waits for containerd's and the
		// network's status: about 10 s on two busy cores.
		if err := e.waitRealNode(ctx, 2*time.Minute); err != nil {
			return err
		}
		n := e.node
		status("node", "%s Ready, a real node: kubelet, containerd and runc run pods as containers in network namespace %s, pods in %s (pids %d %d %d)",
			nodeName, nodeNetNS, podCIDR, n.kubelet.PID(), n.containerd.PID(), n.kubeProxy.PID())
		return nil
	}
	if err := e.waitNodeReady(ctx, 60*time.Second); err != nil {
		return err
	}
	status(kwok.name, "node %s Ready: pods are scheduled and \"run\" without containers (pid %d)", nodeName, e.kwok.PID())
	return nil
}

func (e *environment) waitNodeReady(ctx context.Context, timeout time.Duration) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	return waitFor(ctx, timeout, fmt.Sprintf("node %s Ready", nodeName), func() bool { return nodeReady(ctx, c) }, e.kwok)
}

// nodeReady says whether the node reports Ready.
func nodeReady(ctx context.Context, c client.Client) bool {
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return false
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// waitFor polls ready every 200 ms until it holds; it gives up when one of procs, the processes
// that are to make it hold, exits, when ctx ends, or after timeout, saying what it waited for and
// where the first process logs.
func waitFor(ctx context.Context, timeout time.Duration, what string, ready func() bool, procs ...*localenv.Process) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ready() {
			return nil
		}
		for _, p := range procs {
			if p.Exited() {
				return fmt.Errorf("%s exited; see %s", p.Name, p.LogPath)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no %s after %s; see %s", what, timeout, procs[0].LogPath)
}
