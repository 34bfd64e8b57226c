package main

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
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// servers are the real servers of the test harness (kube-apiserver and etcd, versitygw, the
// reference contract server), with the S3 calls counted (from versitygw's access log, or at a
// proxy in front of Ceph RGW), and clients for them. The operator and ACK run as processes of
// their own against them.
type servers struct {
	stk *stack.Stack
	s3  s3Calls
	dir string
	cfg *rest.Config // the benchmark's ServiceAccount, an administrator, without client-side rate limits
	cs  kubernetes.Interface
	dyn dynamic.Interface
	// meta writes as the operator does: merge patches answered with the object's metadata only.
	meta metadata.Interface
}

func startServers(ctx context.Context, root, dir string, rgw bool) (*servers, error) {
	s := &servers{dir: dir}
	// The operator's webhooks, as installed: they put a resource's finalizer on at creation, which
	// saves its controller a write, and cost the burst's creates their calls. The bound's
	// namespaces are not admitted by them (boundLabel): the bound is the servers' work alone.
	opts := stack.Options{RGW: rgw, WebhookPaths: []string{filepath.Join(root, "config", "webhook")}}
	if rgw {
		proxy := newS3Counter()
		s.s3, opts.S3Middleware = proxy, proxy.wrap
	} else {
		opts.S3AccessLog = filepath.Join(dir, "versitygw-access.log")
		s.s3 = newS3LogCounter(opts.S3AccessLog)
	}
	stk, err := stack.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.stk = stk
	if err := exemptBoundNamespaces(ctx, stk.Client); err != nil {
		s.close()
		return nil, err
	}
	// The harness's certificate only makes the benchmark's own ServiceAccount.
	if s.cs, err = kubernetes.NewForConfig(stk.Config); err != nil {
		s.close()
		return nil, err
	}
	// The benchmark authenticates as the manager does, with a ServiceAccount token, which the
	// API server verifies once and then caches. A client certificate is verified on every
	// request: 5 % of the API server's CPU in the API half of the bound, which made that half
	// slower than the same writes sent by the manager.
	token, err := s.serviceAccountToken(ctx, benchNamespace, benchServiceAccount)
	if err == nil {
		err = stk.BindClusterRole(ctx, "osm-bench-scale", "cluster-admin", benchNamespace, benchServiceAccount)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.cfg = rest.AnonymousClientConfig(stk.Config)
	s.cfg.BearerToken = token
	// The benchmark's own client must not be what limits a burst.
	s.cfg.QPS, s.cfg.Burst = -1, 0
	if s.cs, err = kubernetes.NewForConfig(s.cfg); err != nil {
		s.close()
		return nil, err
	}
	if s.dyn, err = dynamic.NewForConfig(s.cfg); err != nil {
		s.close()
		return nil, err
	}
	if s.meta, err = metadata.NewForConfig(s.cfg); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *servers) close() { s.stk.Stop() }

// The benchmark's own ServiceAccount, an administrator.
const (
	benchNamespace      = "osm-bench-scale"
	benchServiceAccount = "bench"
)

// kubeconfig writes a kubeconfig for the administrator: the benchmark's ServiceAccount.
func (s *servers) kubeconfig(name string) (string, error) {
	return s.writeKubeconfig(name, &clientcmdapi.AuthInfo{Token: s.cfg.BearerToken})
}

// managerKubeconfig writes a kubeconfig for the manager's ServiceAccount, with a token of it
// (TokenRequest), as the manager authenticates in a cluster; its RBAC is the one the operator
// ships, as in every suite.
func (s *servers) managerKubeconfig(ctx context.Context) (string, error) {
	token, err := s.serviceAccountToken(ctx, stack.ManagerNamespace, stack.ManagerServiceAccount)
	if err != nil {
		return "", err
	}
	return s.writeKubeconfig("manager", &clientcmdapi.AuthInfo{Token: token})
}

// serviceAccountToken makes the ServiceAccount (and its namespace) if they are missing, and
// returns a token of it that lasts the run.
func (s *servers) serviceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := s.cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	token, err := s.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](int64(24 * time.Hour / time.Second))},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return token.Status.Token, nil
}

func (s *servers) writeKubeconfig(name string, user *clientcmdapi.AuthInfo) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: s.stk.Config.Host, CertificateAuthorityData: s.stk.Config.CAData}
	kc.AuthInfos["bench"] = user
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	kc.CurrentContext = "bench"
	path := filepath.Join(s.dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// process is a controller running as its own process, measured through /proc.
type process struct {
	proc       *localenv.Process
	metricsURL string

	mu                 sync.Mutex
	peakAnon, peakFile int64
}

// watchMemory samples the process's resident memory four times a second until it exits, for
// the peaks of its parts (VmHWM has only the peak of the sum).
func (p *process) watchMemory() {
	go func() {
		for !p.proc.Exited() {
			if st, err := readProc(p.proc.PID()); err == nil {
				p.mu.Lock()
				p.peakAnon, p.peakFile = max(p.peakAnon, st.anon), max(p.peakFile, st.file)
				p.mu.Unlock()
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()
}

// memory is the peak RSS and the peaks of its anonymous and file-backed parts.
func (p *process) memory() (peak, anon, file int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats().peakRSS, p.peakAnon, p.peakFile
}

// shippedManager is cmd/manager as its Deployment runs it: the binary, built as shipped
// (`go build ./cmd/manager`), and the environment config/manager/manager.yaml gives the
// container (GODEBUG, which the runtime reads only at start).
type shippedManager struct {
	bin string
	env []string
}

// buildManager builds cmd/manager into dir and reads the environment its Deployment gives it.
func buildManager(ctx context.Context, root, dir string) (shippedManager, error) {
	out := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/manager")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return shippedManager{}, fmt.Errorf("building the manager: %v\n%s", err, b)
	}
	env, err := deploymentEnv(filepath.Join(root, "config", "manager", "manager.yaml"), "manager")
	if err != nil {
		return shippedManager{}, err
	}
	return shippedManager{bin: out, env: env}, nil
}

// deploymentEnv returns the variables with a value of their own (not from a field or a Secret)
// that the Deployment in the manifest at path gives its container named container, as NAME=value.
func deploymentEnv(path, container string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	docs := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var d appsv1.Deployment
		if err := docs.Decode(&d); errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no Deployment with a container %q", path, container)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name != container {
				continue
			}
			return localenv.ContainerEnv(c), nil
		}
	}
}

// startManager runs the manager binary under the ServiceAccount the operator ships, with its
// metrics on loopback over plain HTTP (so the benchmark can read its reconcile counts) and its
// webhooks served where the stack installed them, plus extra flags.
func (s *servers) startManager(ctx context.Context, m shippedManager, extra []string) (*process, error) {
	kubeconfig, err := s.managerKubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	metricsPort, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--contract-api-url=" + s.stk.ContractAPI.URL,
		"--contract-api-token-file=" + s.stk.ContractAPI.TokenFile,
		"--metrics-bind-address=" + hostPort(metricsPort),
		"--metrics-insecure",
		"--health-probe-bind-address=" + hostPort(healthPort),
	}, append(s.stk.WebhookFlags(), extra...)...)
	p, err := localenv.StartProcess("manager", filepath.Join(s.dir, "manager.log"), m.bin, args, m.env)
	if err != nil {
		return nil, err
	}
	proc := &process{proc: p, metricsURL: "http://" + hostPort(metricsPort) + "/metrics"}
	proc.watchMemory()
	if err := waitOK(ctx, p, "http://"+hostPort(healthPort)+"/readyz", time.Minute); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return proc, nil
}

func (p *process) stats() procStats {
	st, err := readProc(p.proc.PID())
	if err != nil {
		return procStats{}
	}
	return st
}

// waitOK polls url until it answers 200 OK.
func waitOK(ctx context.Context, p *localenv.Process, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("%s exited before it was ready: see %s", p.Name, p.LogPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 OK within %s: see %s", url, timeout, p.LogPath)
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// boundLabel marks the namespaces of the bound's writes, which the operator's webhooks do not
// admit: the bound is what the API server alone takes for the work.
const boundLabel = "bench.osm.dev/bound"

// exemptBoundNamespaces makes every webhook of the operator skip namespaces with boundLabel.
func exemptBoundNamespaces(ctx context.Context, c client.Client) error {
	skip := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: boundLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	if err := c.List(ctx, mutating); err != nil {
		return err
	}
	for i := range mutating.Items {
		for j := range mutating.Items[i].Webhooks {
			mutating.Items[i].Webhooks[j].NamespaceSelector = skip
		}
		if err := c.Update(ctx, &mutating.Items[i]); err != nil {
			return err
		}
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := c.List(ctx, validating); err != nil {
		return err
	}
	for i := range validating.Items {
		for j := range validating.Items[i].Webhooks {
			validating.Items[i].Webhooks[j].NamespaceSelector = skip
		}
		if err := c.Update(ctx, &validating.Items[i]); err != nil {
			return err
		}
	}
	return nil
}
