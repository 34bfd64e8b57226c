package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv/netns"
)

// How the host reaches into the real node's namespace, where nothing on the host routes:
// one HTTP proxy (package netns) that opens connections to the pods', the node's and the
// Services' addresses inside the namespace, and to loopback on the host, and refuses the rest.
// It answers on a unix socket, as the API server's egress to the cluster (kubectl logs, exec,
// port-forward and the API server's proxy reach the kubelet and pods through it), and on
// 127.0.0.1:--node-proxy-port for a terminal (curl -x http://127.0.0.1:18100 http://<cluster IP>/).

// startNodeProxy starts the proxy and writes the API server's egress configuration; before the
// API server, which reads it at start. With the fake node it reaches loopback only.
func (e *environment) startNodeProxy() error {
	e.proxy = &netns.Proxy{Inside: []netip.Prefix{netip.MustParsePrefix(podCIDR), netip.MustParsePrefix(serviceCIDR)}}
	sock := e.egressSocket()
	if err := os.MkdirAll(e.path("apiserver"), 0o700); err != nil {
		return err
	}
	_ = os.Remove(sock) // left by an osm-dev that was killed
	ul, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("node proxy: %w", err)
	}
	tl, err := net.Listen("tcp", hostPort(e.opts.nodeProxyPort))
	if err != nil {
		_ = ul.Close()
		return fmt.Errorf("node proxy: %w", err)
	}
	e.proxy.Serve(ul)
	e.proxy.Serve(tl)
	e.stops = append(e.stops, namedStop{"node-proxy", e.proxy.Close})
	return os.WriteFile(e.egressConfig(), []byte(fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
# The kubelet, pods and Services: through osm-dev's proxy into the node's network namespace.
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, sock)), 0o600)
}

func (e *environment) egressSocket() string { return e.path("apiserver", "egress.sock") }
func (e *environment) egressConfig() string { return e.path("apiserver", "egress.yaml") }

// kubeletClientCert makes, once per state directory, a CA the kubelet trusts for client
// certificates and the API server's certificate signed by it (user kube-apiserver, group
// system:masters, which the kubelet's webhook authorization then allows). It is apart from the
// webhooks' CA in the certificates folder, whose key may be mkcert's.
func (e *environment) kubeletClientCert() error {
	caPath, certPath, keyPath := e.kubeletCA(), e.path("apiserver", "kubelet-client.crt"), e.path("apiserver", "kubelet-client.key")
	if exists(caPath) && exists(certPath) && exists(keyPath) {
		return nil
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "osm-dev kubelet client CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver", Organization: []string{"system:masters"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	for path, block := range map[string]*pem.Block{
		caPath:   {Type: "CERTIFICATE", Bytes: caDER},
		certPath: {Type: "CERTIFICATE", Bytes: der},
		keyPath:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (e *environment) kubeletCA() string { return e.path("apiserver", "kubelet-client-ca.crt") }
