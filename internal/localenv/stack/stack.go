// Package stack runs the whole operator for integration tests: a real API server and etcd, a real
// versitygw, the reference contract server over it, and the manager built exactly as
// cmd/manager builds it. Each piece can be stopped and started again, so tests can take the
// contract API down or restart the manager mid-flight.
package stack

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
)

// Stack is a running operator with everything it talks to.
type Stack struct {
	// Config and Client reach the API server as an administrator.
	Config *rest.Config
	Client client.Client
	// S3 is the server the contracts' accounts live on.
	S3 S3Server
	// ContractAPI serves the reference contract server.
	ContractAPI *ContractAPI
	// OIDCIssuer serves the discovery of the ServiceAccount tokens' issuer (Options.STS).
	OIDCIssuer *localenv.OIDCIssuer
	// ManagerOptions are used by StartManager; tests may change them between restarts.
	ManagerOptions operator.Options
	// ManagerArgs are more flags for a manager run as its own process ("--zap-log-level=debug").
	ManagerArgs []string
	// ManagerBinary is the manager a process manager runs (Options.ManagerProcess); empty is
	// cmd/manager of this tree. The upgrade test runs an older revision's, then this one's.
	ManagerBinary string
	// ManagerClient is the running manager's cached client, for what only a cache can answer
	// (field-indexed lists).
	ManagerClient client.Client
	// EtcdURL is the API server's etcd: the scale benchmark follows objects there, so that
	// following them costs the API server nothing.
	EtcdURL string
	// KubeProxy, when Options.KubeTap asked for it, is what the manager reaches the API
	// server through.
	KubeProxy *faults.KubeProxy
	// Backend is the contract server's backend over S3: for audits of what the S3 server holds
	// (contractserver.KeyLister).
	Backend contractserver.Backend

	dir string
	// backend is the contract server's backend, as the stack made it and a child makes it.
	backend        childBackend
	env            *envtest.Environment
	manager        *runningManager
	managerProcess bool
	// mu guards process, which KillManager reads from other goroutines.
	mu      sync.Mutex
	process *localenv.Process
}

// S3Server is the S3 endpoint behind the contract server.
type S3Server struct {
	Endpoint string
	Region   string
	// Direct is the server's own endpoint (Endpoint may be a fault proxy in front of it), and
	// AdminAccessKey and AdminSecretKey its administrator's keys, which see every account's
	// buckets: what tests check the operator's work against.
	Direct                         string
	AdminAccessKey, AdminSecretKey string
	// WebsiteEndpoint is where the server serves static websites, with {bucket} for the
	// bucket's name; the contract server reports it with every contract.
	WebsiteEndpoint string
	stop            func() error
}

// Options configures Start.
type Options struct {
	// WebhookPaths are webhook configurations to install into the API server.
	WebhookPaths []string
	// RGW runs the contracts on a single-node Ceph RGW instead of versitygw: the
	// AWS-faithful backend, with group grants and quotas.
	RGW bool
	// S3Faults puts a fault-injecting proxy in front of S3: the endpoint the contracts hand
	// out (so the operator's calls) goes through it.
	S3Faults *faults.Injector
	// ManagerProcess runs the manager as its own process, built from cmd/manager as shipped,
	// and StopManager kills it (SIGKILL) as a crash would; ManagerClient is then nil.
	ManagerProcess bool
	// S3Middleware puts a proxy in front of S3 whose requests all pass through it, before
	// S3Faults (if set) fails some: the scale benchmark counts the operator's calls there on
	// Ceph RGW.
	S3Middleware func(http.Handler) http.Handler
	// S3AccessLog makes versitygw write a line for every S3 request to this file (its
	// --access-log): the scale benchmark counts the operator's calls there, at the server,
	// with no proxy in their way. Ceph RGW writes none.
	S3AccessLog string
	// S3Versioning gives versitygw a versioning directory, so Buckets may be versioned
	// (spec.versioning); without it versitygw refuses PutBucketVersioning. Ceph RGW versions
	// buckets either way.
	S3Versioning bool
	// KubeTap puts a proxy between the manager and the API server (Stack.KubeProxy) whose
	// writes go to this tap, and which can make the manager's view of the cluster stale or
	// coalesce its watch events.
	KubeTap *faults.Tap
	// CRDDir is the folder of CRDs the API server starts with; empty is this tree's.
	CRDDir string
	// ContractServerTap runs the contract server as a child process of the test binary, which
	// ContractAPI.KillServer kills as a crash would, and makes its writes (to its records, and to
	// versitygw's or Ceph RGW's admin API) go through this tap. The test binary's TestMain must
	// call ServeContractServerChild first.
	ContractServerTap *faults.Tap
	// STS runs Ceph RGW (RGW must be set) with STS, kube-apiserver signing ServiceAccount tokens
	// with an RSA key whose discovery Stack.OIDCIssuer serves (RGW fetches it from there), and
	// the contract server trusting that issuer only: keyless access, end to end.
	STS bool
}

// Start brings up the control plane, versitygw and the contract server. The manager is started
// separately with StartManager, so tests can set options first.
func Start(ctx context.Context, opts Options) (_ *Stack, err error) {
	// s is not the named result: `return nil, err` must not hide from the clean-up below what
	// was already started.
	s := &Stack{managerProcess: opts.ManagerProcess}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if s.dir, err = os.MkdirTemp("", "osm-stack-"); err != nil {
		return nil, err
	}
	cpOpts := localenv.ControlPlaneOptions{WebhookPaths: opts.WebhookPaths, CRDDir: opts.CRDDir}
	var issuers egress.Allowlist
	if opts.STS {
		if !opts.RGW || opts.ContractServerTap != nil {
			return nil, errors.New("STS: only on Ceph RGW (RGW), with the contract server in process")
		}
		if cpOpts.ServiceAccountIssuer, cpOpts.ServiceAccountKeyFile, err = s.startOIDCIssuer(); err != nil {
			return nil, err
		}
		if issuers, err = egress.ParseList(s.OIDCIssuer.URL); err != nil {
			return nil, err
		}
	}
	env, cfg, err := localenv.StartControlPlane(cpOpts)
	if err != nil {
		return nil, err
	}
	s.env, s.Config, s.EtcdURL = env, cfg, env.ControlPlane.Etcd.URL.String()
	if s.Client, err = client.New(cfg, client.Options{Scheme: operator.Scheme}); err != nil {
		return nil, err
	}
	if err := s.bindManagerRole(ctx); err != nil {
		return nil, err
	}
	if opts.KubeTap != nil {
		if err := s.proxyKube(opts.KubeTap); err != nil {
			return nil, err
		}
	}
	backend, err := s.startS3(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.Backend = backend
	// As a platform and its provider would: the S3 server tenants may name for an account of
	// their own is this stack's, and the test receivers of notifications listen on loopback.
	endpoints, err := egress.ParseList(s.S3.Endpoint)
	if err != nil {
		return nil, err
	}
	receivers, err := egress.ParseList("http://127.0.0.1:*")
	if err != nil {
		return nil, err
	}
	serverDir := filepath.Join(s.dir, "contract-server")
	if opts.ContractServerTap != nil {
		s.ContractAPI, err = s.startContractServerChild(serverDir, receivers, opts.ContractServerTap)
	} else {
		s.ContractAPI, err = startContractAPI(backend, serverDir, s.S3.WebsiteEndpoint, receivers, issuers)
	}
	if err != nil {
		return nil, err
	}
	metricsPort, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	s.ManagerOptions = operator.Options{
		AllowedEndpoints:             endpoints,
		AllowedNotificationEndpoints: receivers,
		ContractAPIURL:               s.ContractAPI.URL,
		ContractAPITokenFile:         s.ContractAPI.TokenFile,
		ContractAPITimeout:           10 * time.Second,
		MaxConcurrentReconciles:      2,
		// Served as shipped: HTTPS behind the API server's authentication and authorization.
		MetricsBindAddress:     net.JoinHostPort("127.0.0.1", strconv.Itoa(metricsPort)),
		HealthProbeBindAddress: "0",
		SkipNameValidation:     true,
	}
	return s, nil
}

// WebhookFlags are the flags that make a manager process serve the webhooks this stack installed
// (Options.WebhookPaths), on the loopback port and with the certificates envtest chose for
// them; nil when none were installed.
func (s *Stack) WebhookFlags() []string {
	o := s.env.WebhookInstallOptions
	if len(o.Paths) == 0 {
		return nil
	}
	return []string{"--webhook-host=" + o.LocalServingHost, "--webhook-port=" + strconv.Itoa(o.LocalServingPort),
		"--webhook-cert-dir=" + o.LocalServingCertDir}
}

// InstallWebhooks installs the webhook configurations in paths in place of those the stack
// started with, served on the same port with new certificates: a manager started after it
// serves them with WebhookFlags. The upgrade test installs this tree's after an older one's.
func (s *Stack) InstallWebhooks(paths []string) error {
	o := s.env.WebhookInstallOptions
	next := envtest.WebhookInstallOptions{Paths: paths, LocalServingHost: o.LocalServingHost, LocalServingPort: o.LocalServingPort}
	if err := next.Install(s.Config); err != nil {
		return fmt.Errorf("installing the webhook configurations of %v: %w", paths, err)
	}
	_ = o.Cleanup()
	s.env.WebhookInstallOptions = next
	return nil
}

// ReconcileCounts are the passes each controller of the running manager has made
// (controller_runtime_reconcile_total) and the requests in its queue (workqueue_depth), by
// controller name; the manager must serve its metrics over plain HTTP (--metrics-insecure in
// ManagerArgs). Tests wait with them for the manager to have looked at what they changed.
func (s *Stack) ReconcileCounts(ctx context.Context) (passes, queued map[string]float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.ManagerOptions.MetricsBindAddress+"/metrics", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	byController := func(metric, label string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range families[metric].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
		return out
	}
	return byController("controller_runtime_reconcile_total", "controller"), byController("workqueue_depth", "name"), nil
}

// MetricsURL is where the running manager serves /metrics.
func (s *Stack) MetricsURL() string {
	return "https://" + s.ManagerOptions.MetricsBindAddress + "/metrics"
}

// StartManager starts the operator's manager with s.ManagerOptions.
func (s *Stack) StartManager() error {
	s.mu.Lock()
	running := s.manager != nil || s.process != nil
	s.mu.Unlock()
	if running {
		return errors.New("the manager is already running")
	}
	if s.managerProcess {
		return s.startManagerProcess()
	}
	mgr, err := operator.NewManager(s.managerConfig(), s.ManagerOptions)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &runningManager{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		m.err = mgr.Start(ctx)
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		<-m.done
		return fmt.Errorf("the manager's cache did not sync: %v", m.err)
	}
	s.manager = m
	s.ManagerClient = mgr.GetClient()
	return nil
}

// StopManager stops the manager and waits until it has.
func (s *Stack) StopManager() error {
	s.mu.Lock()
	p := s.process
	s.process = nil
	s.mu.Unlock()
	if p != nil {
		p.Kill()
		return nil
	}
	if s.manager == nil {
		return nil
	}
	m := s.manager
	s.manager = nil
	m.cancel()
	<-m.done
	return m.err
}

// KillManager kills the manager's process at once (SIGKILL), as a crash would, and returns when
// it is gone; StopManager is still called before StartManager. Unlike StopManager it may be
// called from any goroutine, such as a proxy's that just passed on the write to crash after.
func (s *Stack) KillManager() {
	s.mu.Lock()
	p := s.process
	s.mu.Unlock()
	p.Kill()
}

// Stop ends everything Start and StartManager started and removes the state directory.
func (s *Stack) Stop() {
	_ = s.StopManager()
	if s.KubeProxy != nil {
		s.KubeProxy.Close()
	}
	if s.ContractAPI != nil {
		s.ContractAPI.Stop()
		s.ContractAPI.closeServer()
	}
	if s.S3.stop != nil {
		_ = s.S3.stop()
	}
	if s.env != nil {
		_ = s.env.Stop()
	}
	if s.OIDCIssuer != nil {
		_ = s.OIDCIssuer.Stop()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

type runningManager struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// ContractAPI is the reference contract server on a fixed 127.0.0.1 port, which can be stopped
// and started again on the same address (the contract API "goes down").
type ContractAPI struct {
	// URL is the API's base URL; Token its bearer token, also written to TokenFile.
	URL       string
	Token     string
	TokenFile string
	addr      string
	// server is the contract server in this process, or child the one in a child process.
	server *contractserver.Server
	child  *serverChild
	mu     sync.Mutex
	http   *http.Server
	hook   Hook
	calls  []Call
}

// Call is one request the contract API answered.
type Call struct {
	Method, Path, IdempotencyKey string
	// Tenant is the namespace the request named (contractapi.TenantHeader).
	Tenant string
	Status int
	// At is when it arrived.
	At time.Time
}

// Hook stands in front of the server for every request; it calls next to let one through.
type Hook func(w http.ResponseWriter, r *http.Request, next http.Handler)

// SetHook installs h in front of the server; nil removes it.
func (a *ContractAPI) SetHook(h Hook) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hook = h
}

// Contracts lists every contract the server has recorded.
func (a *ContractAPI) Contracts() ([]contractserver.ContractSummary, error) {
	if a.child != nil {
		return summaries[contractserver.ContractSummary](a.child, "contracts")
	}
	return a.server.Contracts()
}

// Principals lists every principal the server has recorded, deleted ones included while their
// tombstones are kept (a day by default).
func (a *ContractAPI) Principals() ([]contractserver.PrincipalSummary, error) {
	if a.child != nil {
		return summaries[contractserver.PrincipalSummary](a.child, "principals")
	}
	return a.server.Principals()
}

// KillServer kills the contract server's child process (Options.ContractServerTap) with
// SIGKILL, as a crash would; RestartServer starts it again on its records.
func (a *ContractAPI) KillServer() { a.child.kill() }

func (a *ContractAPI) RestartServer() error { return a.child.restart() }

// Server is the contract server's API without the hook in front: what a test asks behind the
// manager's back.
func (a *ContractAPI) Server() http.Handler { return a.handler() }

// handler is what serves the API behind the hook.
func (a *ContractAPI) handler() http.Handler {
	if a.child != nil {
		return a.child.proxy
	}
	return a.server.Handler()
}

func (a *ContractAPI) closeServer() {
	if a.child != nil {
		a.child.stop()
		return
	}
	_ = a.server.Close()
}

// Calls returns the requests answered so far that match keep (all when keep is nil).
func (a *ContractAPI) Calls(keep func(Call) bool) []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Call
	for _, c := range a.calls {
		if keep == nil || keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// ServeHTTP records the call and passes it through the hook, if any, to the server.
func (a *ContractAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	hook := a.hook
	a.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	at := time.Now()
	defer func() {
		a.mu.Lock()
		a.calls = append(a.calls, Call{Method: r.Method, Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key"),
			Tenant: r.Header.Get(contractapi.TenantHeader), Status: rec.status, At: at})
		a.mu.Unlock()
	}()
	if hook != nil {
		hook(rec, r, a.handler())
		return
	}
	a.handler().ServeHTTP(rec, r)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// startS3 starts versitygw or Ceph RGW and returns the contract server backend over it.
func (s *Stack) startS3(ctx context.Context, opts Options) (contractserver.Backend, error) {
	if opts.RGW {
		if opts.S3AccessLog != "" {
			return nil, errors.New("S3AccessLog: only versitygw writes an access log here")
		}
		ceph, err := localenv.StartCeph(ctx, localenv.CephOptions{Dir: filepath.Join(s.dir, "ceph"), STS: opts.STS})
		if err != nil {
			return nil, err
		}
		s.S3 = S3Server{Endpoint: ceph.Endpoint, Region: ceph.Region, Direct: ceph.Endpoint,
			AdminAccessKey: ceph.AdminAccessKey, AdminSecretKey: ceph.AdminSecretKey, WebsiteEndpoint: ceph.WebsiteEndpoint, stop: ceph.Stop}
		if err := s.proxyS3(opts); err != nil {
			return nil, err
		}
		// The admin ops go through the proxy too; they happen when a contract is bought or
		// changed, not while Buckets are reconciled.
		s.backend = childBackend{Kind: "rgw", Endpoint: s.S3.Endpoint, Region: ceph.Region,
			AdminAccessKey: ceph.AdminAccessKey, AdminSecretKey: ceph.AdminSecretKey}
		return s.backend.build()
	}
	gw, err := localenv.StartVersityGW(ctx, localenv.VersityGWOptions{Dir: filepath.Join(s.dir, "versitygw"), AccessLog: opts.S3AccessLog,
		Versioning: opts.S3Versioning})
	if err != nil {
		return nil, err
	}
	s.S3 = S3Server{Endpoint: gw.Endpoint, Region: gw.Region, Direct: gw.Endpoint,
		AdminAccessKey: gw.RootAccessKey, AdminSecretKey: gw.RootSecretKey, WebsiteEndpoint: gw.WebsiteEndpoint, stop: gw.Stop}
	if err := s.proxyS3(opts); err != nil {
		return nil, err
	}
	s.backend = childBackend{Kind: "versitygw", Endpoint: s.S3.Endpoint, Region: gw.Region, AdminEndpoint: gw.AdminEndpoint,
		AdminAccessKey: gw.RootAccessKey, AdminSecretKey: gw.RootSecretKey}
	return s.backend.build()
}

// proxyKube starts Stack.KubeProxy in front of the API server, reaching it as the manager's
// ServiceAccount.
func (s *Stack) proxyKube(tap *faults.Tap) error {
	target, err := url.Parse(s.Config.Host)
	if err != nil {
		return err
	}
	transport, err := rest.TransportFor(ManagerConfig(s.Config))
	if err != nil {
		return err
	}
	s.KubeProxy = faults.NewKubeProxy(target, transport, tap)
	return nil
}

// managerConfig is how the manager reaches the API server: as its ServiceAccount, through
// KubeProxy when there is one (which then authenticates it).
func (s *Stack) managerConfig() *rest.Config {
	if s.KubeProxy != nil {
		return &rest.Config{Host: s.KubeProxy.URL}
	}
	return ManagerConfig(s.Config)
}

// proxyS3 puts a proxy in front of s.S3 when opts ask for S3Faults or S3Middleware, or for a
// ContractServerTap on Ceph RGW (whose admin ops share the S3 endpoint): the endpoint the
// contracts hand out, and so every call of the operator, goes through it.
func (s *Stack) proxyS3(opts Options) error {
	rgwTap := opts.RGW && opts.ContractServerTap != nil
	if opts.S3Faults == nil && opts.S3Middleware == nil && !rgwTap {
		return nil
	}
	wrap := func(h http.Handler) http.Handler { return h }
	if rgwTap {
		wrap = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				opts.ContractServerTap.Serve(w, r, h, faults.RGWAdminWrite)
			})
		}
	}
	if opts.S3Faults != nil {
		inner := wrap
		wrap = func(h http.Handler) http.Handler { return opts.S3Faults.Wrap(inner(h)) }
	}
	if opts.S3Middleware != nil {
		inner := wrap
		wrap = func(h http.Handler) http.Handler { return opts.S3Middleware(inner(h)) }
	}
	proxy, err := faults.NewProxyWith(s.S3.Direct, wrap)
	if err != nil {
		return err
	}
	s.S3.Endpoint = proxy.URL
	stop := s.S3.stop
	s.S3.stop = func() error { proxy.Close(); return stop() }
	return nil
}

// serverToken is the contract API's bearer token in every stack.
const serverToken = "stack-token"

// serverFiles makes the contract server's directory and token file, and an encryption key:
// the stack keeps one server for its life, so a key in memory seals its secrets.
func serverFiles(dir string) (tokenFile string, key []byte, err error) {
	tokenFile = filepath.Join(dir, "token")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(tokenFile, []byte(serverToken+"\n"), 0o600); err != nil {
		return "", nil, err
	}
	key = make([]byte, contractserver.EncryptionKeySize)
	_, _ = rand.Read(key)
	return tokenFile, key, nil
}

func startContractAPI(backend contractserver.Backend, dir, websiteEndpoint string, pushEndpoints, oidcIssuers egress.Allowlist) (*ContractAPI, error) {
	token := serverToken
	tokenFile, key, err := serverFiles(dir)
	if err != nil {
		return nil, err
	}
	server, err := contractserver.New(contractserver.Config{
		Token:           token,
		DataDir:         dir,
		EncryptionKey:   key,
		Backend:         backend,
		WebsiteEndpoint: websiteEndpoint,
		PushEndpoints:   pushEndpoints,
		OIDCIssuers:     oidcIssuers,
		Logger:          slog.New(slog.NewTextHandler(logFile(filepath.Join(dir, "server.log")), nil)),
	})
	if err != nil {
		return nil, err
	}
	return serveContractAPI(&ContractAPI{Token: token, TokenFile: tokenFile, server: server})
}

// startContractServerChild runs the contract server as a child process, its writes going
// through tap (Options.ContractServerTap).
func (s *Stack) startContractServerChild(dir string, pushEndpoints egress.Allowlist, tap *faults.Tap) (*ContractAPI, error) {
	tokenFile, key, err := serverFiles(dir)
	if err != nil {
		return nil, err
	}
	child, err := startServerChild(childConfig{DataDir: dir, Token: serverToken, EncryptionKey: key, WebsiteEndpoint: s.S3.WebsiteEndpoint,
		PushEndpoints: pushEndpoints.String(), Backend: s.backend}, tap, dir)
	if err != nil {
		if child != nil {
			child.stop()
		}
		return nil, err
	}
	api, err := serveContractAPI(&ContractAPI{Token: serverToken, TokenFile: tokenFile, child: child})
	if err != nil {
		child.stop()
	}
	return api, err
}

// serveContractAPI serves api on a free 127.0.0.1 port.
func serveContractAPI(api *ContractAPI) (*ContractAPI, error) {
	port, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	api.addr = net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	api.URL = "http://" + api.addr
	return api, api.Start()
}

// Start serves the API (again) on its address.
func (a *ContractAPI) Start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.http != nil {
		return nil
	}
	l, err := net.Listen("tcp", a.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", a.addr, err)
	}
	a.http = &http.Server{Handler: a, ReadHeaderTimeout: 5 * time.Second}
	go func(srv *http.Server) { _ = srv.Serve(l) }(a.http)
	return nil
}

// Stop closes the listener and every open connection: calls fail as if the API were down.
func (a *ContractAPI) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.http != nil {
		_ = a.http.Close()
		a.http = nil
	}
}

func logFile(path string) *os.File {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return os.Stderr
	}
	return f
}

// startOIDCIssuer makes the RSA key kube-apiserver signs ServiceAccount tokens with and serves
// its discovery; it returns the issuer and the key's file.
func (s *Stack) startOIDCIssuer() (issuer, keyFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	keyFile = filepath.Join(s.dir, "sa-signer.key")
	raw := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, raw, 0o600); err != nil {
		return "", "", err
	}
	if s.OIDCIssuer, err = localenv.StartOIDCIssuer(key); err != nil {
		return "", "", err
	}
	return s.OIDCIssuer.URL, keyFile, nil
}
