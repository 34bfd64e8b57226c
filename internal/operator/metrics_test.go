package operator

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The metrics server, like the webhook server, speaks HTTP/2 only when --enable-http2 asks for
// it: whoever reaches the port can open streams before the filter has judged their token.
func TestMetricsServerOffersHTTP2OnlyWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		enableHTTP2 bool
		want        string
	}{
		{enableHTTP2: false, want: "http/1.1"},
		{enableHTTP2: true, want: "h2"},
	} {
		t.Run("enableHTTP2="+strconv.FormatBool(tt.enableHTTP2), func(t *testing.T) {
			port, err := localenv.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			opts := metricsOptions(Options{MetricsBindAddress: addr, EnableHTTP2: tt.enableHTTP2})
			opts.CertDir = t.TempDir() // no certificate there: the server makes a self-signed one
			// The filter asks the API server only when a scrape comes; a handshake is not one.
			srv, err := metricsserver.NewServer(opts, &rest.Config{Host: "https://127.0.0.1:1"}, http.DefaultClient)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- srv.Start(ctx) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("metrics server: %v", err)
				}
			})

			var conn *tls.Conn
			deadline := time.Now().Add(10 * time.Second)
			for {
				conn, err = tls.Dial("tcp", addr, &tls.Config{
					NextProtos:         []string{"h2", "http/1.1"},
					InsecureSkipVerify: true, //nolint:gosec // only the protocol it offers is looked at
				})
				if err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("no TLS handshake with the metrics server: %v", err)
			}
			defer func() { _ = conn.Close() }()
			if got := conn.ConnectionState().NegotiatedProtocol; got != tt.want {
				t.Errorf("a client offering h2 and http/1.1 gets %q, want %q", got, tt.want)
			}
		})
	}
}
