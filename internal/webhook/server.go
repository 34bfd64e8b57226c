// Package webhook configures the manager's webhook server; the webhooks themselves live in the
// per-group packages below it.
package webhook

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// DefaultPort is where the webhook server listens, and where config/webhook's Service and
// config/local/webhook's URLs point.
const DefaultPort = 9443

// ServerOptions returns the webhook server options for certificates tls.crt and tls.key in
// certDir, listening on host:port (host "" means every address).
//
// HTTP/2 is off unless enableHTTP2 is set: the HTTP/2 Stream Cancellation and Rapid Reset
// vulnerabilities (GHSA-qppj-fm5r-hxr3, GHSA-4374-p667-p6c8) let a client exhaust the server, and
// the API server talks HTTP/1.1 to webhooks just as well. This mirrors kubebuilder's
// --enable-http2 flag.
func ServerOptions(certDir string, port int, host string, enableHTTP2 bool) webhook.Options {
	return webhook.Options{
		Host:    host,
		Port:    port,
		CertDir: certDir,
		TLSOpts: TLSOptions(enableHTTP2),
	}
}

// TLSOptions are the TLS options of a server the manager serves over HTTPS (the webhook server,
// the metrics server): HTTP/1.1 only unless enableHTTP2, for the reasons ServerOptions gives.
func TLSOptions(enableHTTP2 bool) []func(*tls.Config) {
	if enableHTTP2 {
		return nil
	}
	return []func(*tls.Config){disableHTTP2}
}

// disableHTTP2 offers only HTTP/1.1 in the TLS handshake.
func disableHTTP2(c *tls.Config) {
	c.NextProtos = []string{"http/1.1"}
}
