package install

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// pod is the manager of an installed Deployment, run as a process the way its Pod would run:
// the Deployment's arguments and environment, its ServiceAccount's token, its Secret volumes.
type pod struct {
	proc *localenv.Process
	// args the manager was started with.
	args []string
	// healthURL is /readyz; webhookAddr where the webhook server listens.
	healthURL, webhookAddr string
}

// podOptions say what differs from a Pod in a cluster, and why.
type podOptions struct {
	// deployment is the installed one; its first container is the manager.
	deployment *appsv1.Deployment
	// binary is the manager taken out of the image.
	binary string
	// contractAPIURL replaces --contract-api-url: the test's contract server.
	contractAPIURL string
	// dir holds the kubeconfig, the Secret volumes and the log.
	dir string
}

// startPod runs the Deployment's manager. Only the listen addresses move (to 127.0.0.1 and
// free ports, since several tests share the machine), --kubeconfig replaces the in-cluster
// config, the leader election lease is put in the Deployment's namespace (in a Pod,
// controller-runtime reads it from the mounted ServiceAccount), and the certificate also names
// localhost, the name under which the test's API server calls the webhooks (it cannot reach a
// Service). Everything else is the Deployment's.
func startPod(ctx context.Context, t *testing.T, admin *rest.Config, c client.Client, o podOptions) *pod {
	t.Helper()
	d := o.deployment
	container := d.Spec.Template.Spec.Containers[0]
	if container.Name != "manager" || len(container.Command) != 1 || container.Command[0] != "/manager" {
		t.Fatalf("Deployment %s: first container %q runs %q, want the manager running /manager", d.Name, container.Name, container.Command)
	}

	kubeconfig := writeKubeconfig(ctx, t, admin, d.Namespace, d.Spec.Template.Spec.ServiceAccountName, o.dir)
	mounts := projectSecretVolumes(ctx, t, c, d, o.dir)

	ports := freePorts(t, 3)
	health, metrics, webhook := ports[0], ports[1], ports[2]
	overrides := map[string]string{
		"--health-probe-bind-address":    hostPort(health),
		"--contract-api-url":             o.contractAPIURL,
		"--webhook-host":                 "127.0.0.1",
		"--webhook-port":                 strconv.Itoa(webhook),
		"--kubeconfig":                   kubeconfig,
		"--webhook-cert-extra-dns-names": "localhost",
	}
	if flagValue(container.Args, "--metrics-bind-address") != "0" {
		overrides["--metrics-bind-address"] = hostPort(metrics)
	}
	if hasFlag(container.Args, "--leader-elect") {
		overrides["--leader-election-namespace"] = d.Namespace
	}
	args := localArgs(container.Args, overrides, mounts)

	var env []string
	for _, e := range container.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+d.Namespace)
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		default:
			t.Fatalf("Deployment %s: env %s comes from %v, which the test does not provide", d.Name, e.Name, e.ValueFrom)
		}
	}
	// Not the test's own environment: the manager sees only what the Pod would.
	env = append(env, "KUBECONFIG=", "OSM_CONTRACT_API_URL=", "OSM_CONTRACT_API_TOKEN_FILE=", "OSM_WATCH_NAMESPACES=")

	proc, err := localenv.StartProcess("manager", filepath.Join(o.dir, "manager.log"), o.binary, args, env)
	if err != nil {
		t.Fatal(err)
	}
	p := &pod{proc: proc, args: args, healthURL: "http://" + hostPort(health) + "/readyz", webhookAddr: hostPort(webhook)}
	t.Cleanup(func() {
		_ = proc.Stop()
		if t.Failed() {
			log, _ := os.ReadFile(proc.LogPath)
			t.Logf("manager log (%s):\n%s", proc.LogPath, tail(log, 60))
		}
	})
	return p
}

// waitReady waits until /readyz answers 200: the webhook server serves, which with
// self-managed certificates means the certificate is issued, mounted and trusted.
func (p *pod) waitReady(ctx context.Context, t *testing.T, timeout time.Duration) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.healthURL, nil)
		if resp, err := hc.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if p.proc.Exited() {
			t.Fatalf("the manager exited before it was ready; see %s", p.proc.LogPath)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the manager's %s did not answer 200 within %s; see %s", p.healthURL, timeout, p.proc.LogPath)
}

// handshake checks that the webhook server presents a certificate for serverName that caPEM
// (a webhook configuration's caBundle) vouches for: what the API server checks when it calls
// the webhook Service in a cluster.
func (p *pod) handshake(t *testing.T, serverName string, caPEM []byte) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("caBundle holds no PEM certificate")
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", p.webhookAddr,
		&tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS handshake with the webhook server as %s, trusting the injected caBundle: %v", serverName, err)
	}
	_ = conn.Close()
}

// writeKubeconfig writes a kubeconfig that authenticates as the ServiceAccount with a token from
// the TokenRequest API, as a Pod's projected token does. The token is never logged.
func writeKubeconfig(ctx context.Context, t *testing.T, admin *rest.Config, namespace, serviceAccount, dir string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for ServiceAccount %s/%s: %v", namespace, serviceAccount, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[serviceAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: serviceAccount}
	cfg.CurrentContext = "local"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// projectSecretVolumes does the kubelet's part for the Deployment's Secret volumes: each is
// written to a directory under dir now and kept up to date every 200 ms until the test ends
// (the manager fills its certificate Secret after it starts, and reads the files from the
// mount). It returns the mount paths of the manager container and the directories that stand
// for them.
func projectSecretVolumes(ctx context.Context, t *testing.T, c client.Client, d *appsv1.Deployment, dir string) map[string]string {
	t.Helper()
	mounts := map[string]string{}
	var syncs []func() error
	for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		var vol *corev1.Volume
		for i := range d.Spec.Template.Spec.Volumes {
			if d.Spec.Template.Spec.Volumes[i].Name == m.Name {
				vol = &d.Spec.Template.Spec.Volumes[i]
			}
		}
		if vol == nil || vol.Secret == nil {
			t.Fatalf("Deployment %s: volume %s is not a Secret, which the test cannot stand in for", d.Name, m.Name)
		}
		local := filepath.Join(dir, "volumes", m.Name)
		if err := os.MkdirAll(local, 0o700); err != nil {
			t.Fatal(err)
		}
		mounts[m.MountPath] = local
		key := types.NamespacedName{Namespace: d.Namespace, Name: vol.Secret.SecretName}
		items := vol.Secret.Items
		syncs = append(syncs, func() error { return syncSecret(ctx, c, key, items, local) })
	}
	syncAll := func() error {
		for _, sync := range syncs {
			if err := sync(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := syncAll(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
				_ = syncAll()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return mounts
}

// syncSecret writes the Secret's keys (or its items) as files in dir, each replaced whole and
// only when it changed; tls.crt last, since the manager looks for it to know the pair is there.
func syncSecret(ctx context.Context, c client.Client, key types.NamespacedName, items []corev1.KeyToPath, dir string) error {
	s := &corev1.Secret{}
	if err := c.Get(ctx, key, s); err != nil {
		return fmt.Errorf("the Pod's Secret volume %s: %w", key, err)
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		for k, v := range s.Data {
			files[k] = v
		}
	} else {
		for _, it := range items {
			if v, ok := s.Data[it.Key]; ok {
				files[it.Path] = v
			}
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if name != "tls.crt" {
			names = append(names, name)
		}
	}
	if _, ok := files["tls.crt"]; ok {
		names = append(names, "tls.crt")
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := os.WriteFile(path+".tmp", files[name], 0o600); err != nil {
			return err
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return err
		}
	}
	return nil
}

// localArgs are the Deployment's arguments with the values of the flags in overrides replaced
// (and those it lacks appended), and paths under a mount moved to the directory standing for it.
func localArgs(args []string, overrides map[string]string, mounts map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		if v, ok := overrides[name]; ok {
			out = append(out, name+"="+v)
			seen[name] = true
			continue
		}
		if hasValue {
			for mountPath, local := range mounts {
				if value == mountPath || strings.HasPrefix(value, mountPath+"/") {
					value = local + strings.TrimPrefix(value, mountPath)
				}
			}
			a = name + "=" + value
		}
		out = append(out, a)
	}
	names := make([]string, 0, len(overrides))
	for name := range overrides {
		if !seen[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, name+"="+overrides[name])
	}
	return out
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
