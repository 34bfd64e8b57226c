package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/podendpoints"
)

// managerArgs are the arguments of the install's manager container, with what differs outside
// a pod set for this machine.
func (e *environment) managerArgs() []string {
	local := []string{
		// The ServiceAccount's token, in place of the one a pod would have mounted.
		"--kubeconfig=" + e.managerKubeconfig(),
		"--contract-api-url=" + e.contractAPI,
		"--contract-api-token-file=" + e.contractToken,
		// The certificates are osm-dev's own (mkcert or Go), in place of the ones the installed
		// manager keeps for itself in a Secret of its namespace.
		"--webhook-cert-management=external",
		"--webhook-cert-dir=" + e.certPath(""),
		"--webhook-host=127.0.0.1",
		fmt.Sprintf("--webhook-port=%d", e.opts.webhookPort),
		"--health-probe-bind-address=" + hostPort(e.opts.healthPort),
		"--metrics-bind-address=" + hostPort(e.opts.metricsPort),
		// Out of a pod the manager cannot tell its namespace; its lease goes where a pod's would.
		"--leader-election-namespace=" + e.install.namespace,
		// As a platform team would list its own S3 server, for the accounts tenants bring
		// (Contract spec.credentials); and notification receivers a developer runs on this
		// machine.
		"--" + egress.EndpointsFlag + "=" + strings.Trim(e.s3Endpoint+","+e.opts.allowed.String(), ","),
		"--" + egress.NotificationEndpointsFlag + "=http://127.0.0.1:*",
	}
	if e.realNode {
		// Pods reach the S3 server through the node's forward, not at the host's loopback.
		local = append(local, fmt.Sprintf("--%s=%s=http://%s:%d", podendpoints.Flag, e.s3Endpoint, nodeIP, e.opts.s3Port))
	}
	names := map[string]bool{}
	for _, a := range local {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		names[name] = true
	}
	return append(installArgs(e.install.args, names, !e.opts.debug && !e.opts.noManager), local...)
}

// buildManager compiles ./cmd/manager into out and returns the compiler's output. With --debug
// it keeps what a debugger needs: no optimisation, no inlining. Otherwise it leaves out the
// symbol table and DWARF, which a second of the link goes to (of about five on two cores);
// panics still print file and line.
func (e *environment) buildManager(ctx context.Context, out string) ([]byte, error) {
	args := []string{"build", "-o", out}
	if e.opts.debug {
		args = append(args, "-gcflags=all=-N -l")
	} else {
		args = append(args, "-ldflags=-s -w")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/manager")...)
	cmd.Dir = e.root
	return cmd.CombinedOutput()
}

// startManager runs the manager (under Delve with --debug), its log appended to
// logs/manager.log and never shown in this terminal, which keeps the start-up summary and the
// reload lines; it waits until the manager is ready and its webhook server answers.
func (e *environment) startManager(ctx context.Context) error {
	bin, args := e.path("bin", "manager"), e.managerArgs()
	if e.opts.debug {
		// --continue: the manager runs at once, as without a debugger; breakpoints are set by
		// whoever attaches. --accept-multiclient: detaching leaves it running.
		args = append([]string{"exec", "--headless", "--listen=" + hostPort(e.opts.debugPort),
			"--api-version=2", "--accept-multiclient", "--continue", bin, "--"}, args...)
		bin = e.dlv
	}
	// The Deployment's environment too: it tunes the runtime (GODEBUG), not only the code.
	p, err := localenv.StartProcess("manager", e.path("logs", "manager.log"), bin, args, e.install.env)
	if err != nil {
		return err
	}
	// Recorded before waiting, so that Ctrl-C during the wait still stops it.
	e.manager = p
	if err := waitReadyz(ctx, p, "http://"+hostPort(e.opts.healthPort)+"/readyz", 60*time.Second); err != nil {
		return err
	}
	return e.waitWebhookServer(ctx, p)
}

// waitReadyz polls the manager's /readyz until it answers 200 OK: an answer alone only says the
// probe server is up, and a reload that reports "restarted" must mean ready.
func waitReadyz(ctx context.Context, p *localenv.Process, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("the manager exited before it was ready; see %s", p.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer 200 OK within %s; see %s", url, timeout, p.LogPath)
}

// stopManager stops the running manager, if any, and waits until it has exited.
func (e *environment) stopManager() {
	if e.manager == nil {
		return
	}
	_ = e.manager.Stop()
	e.manager = nil
}

// waitWebhookServer waits until the webhook server completes a TLS handshake with .certs' CA.
func (e *environment) waitWebhookServer(ctx context.Context, p *localenv.Process) error {
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
