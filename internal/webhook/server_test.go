package webhook

import (
	"crypto/tls"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServerOptions(t *testing.T) {
	tests := []struct {
		name        string
		enableHTTP2 bool
		wantProtos  []string
	}{
		{name: "HTTP/2 off by default", enableHTTP2: false, wantProtos: []string{"http/1.1"}},
		{name: "HTTP/2 on when asked", enableHTTP2: true, wantProtos: []string{"h2", "http/1.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := ServerOptions("/certs", DefaultPort, "127.0.0.1", tt.enableHTTP2)
			if opts.CertDir != "/certs" || opts.Port != DefaultPort || opts.Host != "127.0.0.1" {
				t.Errorf("ServerOptions() = host %q port %d certDir %q, want 127.0.0.1 9443 /certs", opts.Host, opts.Port, opts.CertDir)
			}
			// The webhook server starts from Go's defaults (h2 and http/1.1) and applies TLSOpts.
			cfg := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
			for _, o := range opts.TLSOpts {
				o(cfg)
			}
			if diff := cmp.Diff(tt.wantProtos, cfg.NextProtos); diff != "" {
				t.Errorf("NextProtos mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
