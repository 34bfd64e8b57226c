package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/testenv"
)

func (e *environment) managerArgs() []string {
	return []string{
		"--kubeconfig=" + e.kubeconfig,
		"--contract-api-url=" + e.contractAPI,
		"--contract-api-token-file=" + e.contractToken,
		"--webhook-cert-dir=" + e.certPath(""),
		"--webhook-host=127.0.0.1",
		fmt.Sprintf("--webhook-port=%d", e.opts.webhookPort),
		"--health-probe-bind-address=" + hostPort(e.opts.healthPort),
		"--metrics-bind-address=0",
	}
}

// startManager runs the manager, its log shown in this terminal and kept in logs/manager.log,
// and waits until it is ready and its webhook server answers.
func (e *environment) startManager(ctx context.Context, args []string) error {
	p, err := testenv.StartProcessTee("manager", e.path("logs", "manager.log"), os.Stdout, e.path("bin", "manager"), args, nil)
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	if err := testenv.WaitHTTP(ctx, p, "http://"+hostPort(e.opts.healthPort)+"/readyz", 60*time.Second); err != nil {
		return err
	}
	if err := e.waitWebhookServer(ctx, p); err != nil {
		return err
	}
	status("manager", "ready (pid %d); webhooks on https://%s", p.PID(), hostPort(e.opts.webhookPort))
	return nil
}

// waitWebhookServer waits until the webhook server completes a TLS handshake with .certs' CA.
func (e *environment) waitWebhookServer(ctx context.Context, p *testenv.Process) error {
	ca, err := os.ReadFile(e.certPath("ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	dialer := &tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := dialer.DialContext(ctx, "tcp", hostPort(e.opts.webhookPort))
		if err == nil {
			return conn.Close()
		}
		if p.Exited() {
			return fmt.Errorf("the manager exited; see %s", p.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the webhook server did not answer on %s within 30s", hostPort(e.opts.webhookPort))
}

// printManagerCommand says how to run the manager by hand against this environment.
func (e *environment) printManagerCommand(args []string) {
	line := strings.Join(args, " \\\n    ")
	fmt.Printf(`
manager          not started (--no-manager). Run it yourself against this environment:

  go run ./cmd/manager \
    %s

  or under a debugger, with breakpoints in Reconcile:

  dlv debug ./cmd/manager -- \
    %s

  The webhooks are registered with failurePolicy Fail: until the manager runs,
  kubectl apply of a Contract or Bucket is refused.
`, line, line)
}
