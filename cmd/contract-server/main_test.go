package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The server serves HTTPS with the files given, and picks up a renewed certificate without a
// restart; a broken renewal keeps the last good certificate.
func TestServesHTTPSAndFollowsCertificateRotation(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	roots := x509.NewCertPool()
	roots.AddCert(writeCert(t, certFile, keyFile, 1))
	var logs syncBuffer
	addr := startRun(t, &logs, "--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile)

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		DisableKeepAlives: true, // a handshake per request, so each sees the current certificate
	}}
	serial := func() int64 {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/v1/contracts/none", nil)
		req.Header.Set("Authorization", "Bearer test-token")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET over HTTPS: %v", err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET over HTTPS: %s, want the 404 of an unknown contract", resp.Status)
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 1 {
		t.Fatalf("serving certificate %d, want 1", got)
	}
	if resp, err := http.Get("http://" + addr + "/v1/contracts/none"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP: %s, want Go's 400 for HTTP on an HTTPS port", resp.Status)
		}
	}

	roots.AddCert(writeCert(t, certFile, keyFile, 2))
	waitFor(t, "the renewed certificate", func() bool { return serial() == 2 })

	if err := os.WriteFile(certFile, []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(certRecheck + 100*time.Millisecond)
	if got := serial(); got != 2 {
		t.Errorf("after a broken renewal: certificate %d, want the last good one, 2", got)
	}
	if !strings.Contains(logs.String(), "Keeping the last TLS certificate") {
		t.Errorf("the broken renewal was not logged:\n%s", logs.String())
	}
}

func TestParseFlagsTLSGoTogether(t *testing.T) {
	base := []string{"--token-file=t", "--data-dir=d", "--encryption-key-file=k"}
	for _, extra := range [][]string{{"--tls-cert-file=c"}, {"--tls-private-key-file=k"}} {
		if _, err := parseFlags(append(base, extra...)); err == nil || !strings.Contains(err.Error(), "both or neither") {
			t.Errorf("parseFlags(%v): %v, want an error saying both or neither", extra, err)
		}
	}
}

// startRun runs the command on a free 127.0.0.1 port over a versitygw backend it never calls,
// until the test ends, and returns the address once it answers.
func startRun(t *testing.T, logs *syncBuffer, extraArgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("test-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "encryption.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := localenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := append([]string{
		"--listen=" + addr, "--token-file=" + tokenFile, "--data-dir=" + filepath.Join(dir, "data"), "--encryption-key-file=" + keyFile,
		"--s3-endpoint=http://127.0.0.1:1", "--admin-endpoint=http://127.0.0.1:1",
		"--admin-access-key=root", "--admin-secret-key=root-secret",
	}, extraArgs...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, slog.New(slog.NewTextHandler(logs, nil)), args) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	waitFor(t, "the server to listen", func() bool {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("run ended: %v\n%s", err, logs.String())
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return addr
}

// writeCert writes a self-signed certificate for 127.0.0.1 with this serial, and its key.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("contract-server %d", serial)},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// The key first: a reader that sees the new certificate with the old key fails and retries.
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a log destination the server's goroutines and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestParseFlagsReadsNewFlagsFromTheEnvironment(t *testing.T) {
	t.Setenv("CONTRACT_SERVER_ENCRYPTION_KEY_FILE", "/etc/osm/key")
	t.Setenv("CONTRACT_SERVER_TLS_CERT_FILE", "/etc/osm/tls.crt")
	t.Setenv("CONTRACT_SERVER_TLS_PRIVATE_KEY_FILE", "/etc/osm/tls.key")
	t.Setenv("CONTRACT_SERVER_MAX_REQUEST_BYTES", "1024")
	t.Setenv("CONTRACT_SERVER_ALLOWED_PUSH_ENDPOINTS", "https://events.example.com/hooks,http://receiver.events:8080")
	o, err := parseFlags([]string{"--token-file=t", "--data-dir=d"})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.pushEndpoints.String(); got != "https://events.example.com/hooks, http://receiver.events:8080" {
		t.Errorf("parseFlags from the environment: push endpoints %q", got)
	}
	if o.encryptionKeyFile != "/etc/osm/key" || o.tlsCertFile != "/etc/osm/tls.crt" || o.tlsKeyFile != "/etc/osm/tls.key" || o.maxRequestBytes != 1024 {
		t.Errorf("parseFlags from the environment: key %q, cert %q, private key %q, max %d",
			o.encryptionKeyFile, o.tlsCertFile, o.tlsKeyFile, o.maxRequestBytes)
	}
}

// --version answers without the flags a server needs, so `contract-server --version` works on
// any machine and in the image.
func TestVersionNeedsNoOtherFlag(t *testing.T) {
	o, err := parseFlags([]string{"--version"})
	if err != nil || !o.version {
		t.Fatalf("parseFlags(--version) = version %t, error %v; want version and no error", o.version, err)
	}
}

// Every phase of a connection has a bound, so a client that is slow on purpose (headers,
// body, reading the answer, idling) holds it for a bounded time; and the write bound leaves
// room for the longest backend call, so no answer of a single call is cut off.
func TestTheServerBoundsEveryPhaseOfAConnection(t *testing.T) {
	hs := newHTTPServer(http.NotFoundHandler())
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": hs.ReadHeaderTimeout, "ReadTimeout": hs.ReadTimeout,
		"WriteTimeout": hs.WriteTimeout, "IdleTimeout": hs.IdleTimeout,
	} {
		if d <= 0 {
			t.Errorf("%s is not set", name)
		}
	}
	if hs.ReadHeaderTimeout > hs.ReadTimeout {
		t.Errorf("ReadHeaderTimeout %s is longer than ReadTimeout %s", hs.ReadHeaderTimeout, hs.ReadTimeout)
	}
	if hs.WriteTimeout <= contractserver.BackendTimeout {
		t.Errorf("WriteTimeout %s would cut off the answer of a backend call of up to %s", hs.WriteTimeout, contractserver.BackendTimeout)
	}
	if hs.MaxHeaderBytes <= 0 {
		t.Error("MaxHeaderBytes is not set")
	}
}

// The rate limits are on without a flag: a tenant past its burst (ten seconds' worth of
// --tenant-rate-limit) is answered 429, and another tenant is answered at once.
func TestRateLimitsAreOnByDefault(t *testing.T) {
	var logs syncBuffer
	addr := startRun(t, &logs)
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(tenant string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/v1/contracts/none", nil)
		req.Header.Set("Authorization", "Bearer test-token")
		req.Header.Set(contractapi.TenantHeader, tenant)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	burst := burstOf(contractserver.DefaultTenantRequestsPerSecond)
	answered := 0
	for range 2 * burst {
		if get("busy") != http.StatusNotFound {
			break
		}
		answered++
	}
	// The budget refills while the loop runs: a few hundred requests take a second or so.
	if answered < burst || answered > burst+3*int(contractserver.DefaultTenantRequestsPerSecond) {
		t.Errorf("a tenant had %d requests answered before a 429, want its burst of %d and what refilled meanwhile", answered, burst)
	}
	if got := get("quiet"); got != http.StatusNotFound {
		t.Errorf("another tenant's request: %d, want the 404 of an unknown contract", got)
	}
}
