package install

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// managerUID is the user the image runs as (hack/tools/image: 65532:65532, distroless' nonroot).
const managerUID = "65532"

// podsReady waits until every replica of the Deployment runs and is Ready (its readiness probe
// passes) and returns its Pods. A failure, or a container that keeps exiting, says where each
// Pod stands, with its log.
func podsReady(ctx context.Context, t *testing.T, srv *servers, d *appsv1.Deployment, timeout time.Duration) []corev1.Pod {
	t.Helper()
	want := ptr.Deref(d.Spec.Replicas, 1)
	var pods []corev1.Pod
	ready := 0
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pods = deploymentPods(ctx, t, srv.client, d)
		ready = 0
		for _, p := range pods {
			if p.DeletionTimestamp == nil && podReady(&p) {
				ready++
			}
		}
		if ready == int(want) && len(pods) == int(want) {
			return pods
		}
		if crashLooping(pods) {
			break
		}
		time.Sleep(time.Second)
	}
	var report strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&report, "pod %s: phase %s, containers %+v\n", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		fmt.Fprintf(&report, "its log:\n%s\n", podLog(ctx, srv, &p))
	}
	events := &corev1.EventList{}
	if err := srv.client.List(ctx, events, client.InNamespace(d.Namespace)); err == nil {
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning {
				fmt.Fprintf(&report, "event: %s %s: %s (%d times)\n", e.InvolvedObject.Name, e.Reason, e.Message, e.Count)
			}
		}
	}
	t.Fatalf("Deployment %s/%s: %d Pods of %d, %d Ready within %s\n%skubelet:\n%s", d.Namespace, d.Name, len(pods), want, ready, timeout,
		report.String(), srv.node.kubeletLog())
	return nil
}

// crashLooping says whether a container of the pods has exited twice: it will not get Ready by
// waiting.
func crashLooping(pods []corev1.Pod) bool {
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount >= 2 {
				return true
			}
		}
	}
	return false
}

func deploymentPods(ctx context.Context, t *testing.T, c client.Client, d *appsv1.Deployment) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podLog is the tail of the manager container's log, through the API server and the kubelet.
func podLog(ctx context.Context, srv *servers, p *corev1.Pod) string {
	cs, err := kubernetes.NewForConfig(srv.node.admin)
	if err != nil {
		return err.Error()
	}
	raw, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "manager", TailLines: ptr.To[int64](40)}).DoRaw(ctx)
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

// container is the manager's container of a Pod as the node's kernel runs it: its process,
// found by the container's cgroup.
type container struct {
	pid int
	// args are its command line, the binary first.
	args []string
}

// managerContainer finds the process of the Pod's manager container.
func managerContainer(t *testing.T, p *corev1.Pod) *container {
	t.Helper()
	var id string
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == "manager" {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	if id == "" {
		t.Fatalf("pod %s has no running manager container: %+v", p.Name, p.Status.ContainerStatuses)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil || !strings.Contains(string(cg), "/"+id) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		return &container{pid: pid, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}
	}
	t.Fatalf("no process in the cgroup of pod %s's container %s", p.Name, id)
	return nil
}

// checkPod checks the manager's Pod as the node runs it: the image's binary with the
// Deployment's arguments, as the image's non-root user, on a read-only root filesystem, with the
// webhook certificate Secret the manager issued mounted where it reads it, and no restart (its
// liveness probe never failed).
func checkPod(ctx context.Context, t *testing.T, srv *servers, d *appsv1.Deployment, p *corev1.Pod) *container {
	t.Helper()
	if p.Spec.NodeName != "osm-dev-node" || !strings.HasPrefix(p.Status.PodIP, "10.244.0.") {
		t.Errorf("pod %s runs on %q at %q; want osm-dev's real node, in its pod network", p.Name, p.Spec.NodeName, p.Status.PodIP)
	}
	c := managerContainer(t, p)
	spec := d.Spec.Template.Spec.Containers[0]
	if want := append(append([]string{}, spec.Command...), spec.Args...); !slices.Equal(c.args, want) {
		t.Errorf("pod %s runs %q; want the Deployment's command and arguments %q", p.Name, c.args, want)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") && (f[1] != managerUID || f[2] != managerUID) {
			t.Errorf("pod %s's manager runs with %s; want the image's user and group, %s", p.Name, line, managerUID)
		}
		if f := strings.Fields(line); len(f) == 2 && f[0] == "CapEff:" && f[1] != "0000000000000000" {
			t.Errorf("pod %s's manager has capabilities %s; the Deployment drops them all", p.Name, f[1])
		}
	}
	mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	options := map[string]string{}
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 5 {
			options[f[4]] = f[5]
		}
	}
	certDir := flagValue(spec.Args, "--webhook-cert-dir")
	for _, dir := range []string{"/", certDir} {
		if o, ok := options[dir]; !ok || !slices.Contains(strings.Split(o, ","), "ro") {
			t.Errorf("pod %s: %s is mounted with %q (found: %v); want read-only", p.Name, dir, o, ok)
		}
	}
	secret := &corev1.Secret{}
	if err := srv.client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: webhookSecret(t, d)}, secret); err != nil {
		t.Fatal(err)
	}
	served, err := os.ReadFile(fmt.Sprintf("/proc/%d/root%s/tls.crt", c.pid, certDir))
	if err != nil || len(served) == 0 || !bytes.Equal(served, secret.Data["tls.crt"]) {
		t.Errorf("pod %s: %s/tls.crt (%d bytes, %v) is not the certificate in Secret %s", p.Name, certDir, len(served), err, secret.Name)
	}
	fresh := &corev1.Pod{}
	if err := srv.client.Get(ctx, client.ObjectKeyFromObject(p), fresh); err != nil {
		t.Fatal(err)
	}
	for _, s := range fresh.Status.ContainerStatuses {
		if s.RestartCount != 0 {
			t.Errorf("pod %s: container %s restarted %d times (last: %+v)\n%s", p.Name, s.Name, s.RestartCount, s.LastTerminationState, podLog(ctx, srv, p))
		}
	}
	return c
}

// webhookSecret is the Secret the Deployment mounts at --webhook-cert-dir.
func webhookSecret(t *testing.T, d *appsv1.Deployment) string {
	t.Helper()
	spec := d.Spec.Template.Spec
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath != flagValue(spec.Containers[0].Args, "--webhook-cert-dir") {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return v.Secret.SecretName
			}
		}
	}
	t.Fatalf("Deployment %s mounts no Secret at --webhook-cert-dir", d.Name)
	return ""
}

// uninstallManager deletes the Deployment and the webhook configurations of a release and waits
// until its Pods are gone: its webhooks would refuse every write once it is gone
// (failurePolicy Fail), and two managers would reconcile the same objects.
func uninstallManager(ctx context.Context, t *testing.T, c client.Client, d *appsv1.Deployment, prefix string) {
	t.Helper()
	deleteWebhookConfigurations(ctx, t, c, prefix)
	if err := c.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(deploymentPods(ctx, t, c, d)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the Pods of Deployment %s/%s are still there 2 minutes after its deletion", d.Namespace, d.Name)
		}
		time.Sleep(time.Second)
	}
}

func flagValue(args []string, name string) string {
	for _, a := range args {
		if n, v, ok := strings.Cut(a, "="); ok && n == name {
			return v
		}
	}
	return ""
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if n, _, _ := strings.Cut(a, "="); n == name {
			return true
		}
	}
	return false
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		p, err := localenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	return ports
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func tail(b []byte, lines int) string {
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
