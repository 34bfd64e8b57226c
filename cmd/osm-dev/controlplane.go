package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

func (e *environment) startEtcd(ctx context.Context) error {
	bin, err := localenv.Binary("etcd")
	if err != nil {
		return err
	}
	client := "http://" + hostPort(e.opts.etcdPort)
	peer := "http://" + hostPort(e.opts.etcdPeerPort)
	p, err := e.start("etcd", bin, []string{
		"--name=osm-dev",
		"--data-dir=" + e.path("etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=osm-dev=" + peer,
		// A laptop's disk, not a datacenter's: do not wait on fsync for a dev cluster.
		"--unsafe-no-fsync",
	}, nil)
	if err != nil {
		return err
	}
	if err := localenv.WaitHTTP(ctx, p, client+"/health", 30*time.Second); err != nil {
		return err
	}
	status("etcd", "ready on %s (pid %d)", client, p.PID())
	return nil
}

// startAPIServer runs kube-apiserver with the serving certificate from the certificates folder,
// its own service-account key, and static tokens for the admin and the control plane's
// components, and writes the admin's kubeconfig.
func (e *environment) startAPIServer(ctx context.Context) error {
	bin, err := localenv.Binary("kube-apiserver")
	if err != nil {
		return err
	}
	token, err := readOrCreate(e.path("apiserver", "admin-token"), func() string { return localenv.RandomHex(24) })
	if err != nil {
		return err
	}
	saKey := e.path("apiserver", "service-account.key")
	if replaced, err := ensureServiceAccountKey(saKey); err != nil {
		return fmt.Errorf("service-account key: %w", err)
	} else if replaced {
		status("kube-apiserver", "replaced %s, which kube-apiserver cannot read", saKey)
	}
	componentTokens, err := e.componentTokens()
	if err != nil {
		return err
	}
	tokens := e.path("apiserver", "tokens.csv")
	lines := append([]string{token + ",admin,admin,system:masters"}, componentTokens...)
	if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	if err := e.startNodeProxy(); err != nil {
		return err
	}
	if err := e.kubeletClientCert(); err != nil {
		return fmt.Errorf("the API server's kubelet client certificate: %w", err)
	}
	p, err := e.start("kube-apiserver", bin, []string{
		"--etcd-servers=http://" + hostPort(e.opts.etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", e.opts.apiPort),
		"--tls-cert-file=" + e.certPath("tls.crt"), "--tls-private-key-file=" + e.certPath("tls.key"),
		"--token-auth-file=" + tokens,
		// Node: a kubelet may read what its own pods need, as in any cluster.
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		// As OpenShift and hardened clusters do (and the tests' API server): setting
		// blockOwnerDeletion on an owner reference needs update on the owner's finalizers, which
		// the RBAC the manager runs under must then grant.
		"--enable-admission-plugins=OwnerReferencesPermissionEnforcement,NodeRestriction",
		"--allow-privileged=true",
		// The kubernetes Service cannot point at a loopback address; nothing here needs it.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + e.path("apiserver"),
		// To the kubelet (logs, exec, port-forward) and pods: through osm-dev's node proxy, with
		// a client certificate the kubelet trusts (nodeaccess.go).
		"--egress-selector-config-file=" + e.egressConfig(),
		"--kubelet-client-certificate=" + e.path("apiserver", "kubelet-client.crt"),
		"--kubelet-client-key=" + e.path("apiserver", "kubelet-client.key"),
		// The node's name resolves nowhere; its address is what the proxy knows.
		"--kubelet-preferred-address-types=InternalIP",
	}, nil)
	if err != nil {
		return err
	}
	e.apiServer = "https://" + hostPort(e.opts.apiPort)
	if err := e.waitHTTPS(ctx, p, e.apiServer+"/readyz", token, 90*time.Second); err != nil {
		return err
	}
	e.kubeconfig = e.path("kubeconfig")
	if err := e.writeKubeconfigFor(e.kubeconfig, "admin", kubeconfigAuth{token: token}, "demo"); err != nil {
		return err
	}
	status("kube-apiserver", "ready on %s (pid %d)", e.apiServer, p.PID())
	return nil
}

// waitHTTPS polls url, with token as bearer token when set, until it answers 200 OK over TLS
// verified with the certificates folder's CA.
func (e *environment) waitHTTPS(ctx context.Context, p *localenv.Process, url, token string, timeout time.Duration) error {
	ca, err := os.ReadFile(e.certPath("ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("%s exited; see %s", p.Name, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer 200 OK within %s; see %s", url, timeout, p.LogPath)
}

// kubeconfigAuth is how a kubeconfig's user authenticates: a token, or a file holding one that
// clients read again as it is refreshed.
type kubeconfigAuth struct {
	token, tokenFile string
}

// writeKubeconfigFor writes a kubeconfig for the API server with one user and context, the
// namespace its default.
func (e *environment) writeKubeconfigFor(path, user string, auth kubeconfigAuth, namespace string) error {
	ca, err := os.ReadFile(e.certPath("ca.crt"))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["osm-dev"] = &clientcmdapi.Cluster{Server: e.apiServer, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: auth.token, TokenFile: auth.tokenFile}
	cfg.Contexts["osm-dev"] = &clientcmdapi.Context{Cluster: "osm-dev", AuthInfo: user, Namespace: namespace}
	cfg.CurrentContext = "osm-dev"
	return clientcmd.WriteToFile(*cfg, path)
}
