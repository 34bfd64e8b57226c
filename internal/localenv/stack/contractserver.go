package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
)

// The contract server can run as a child process of the test binary itself
// (Options.ContractServerTap), so that a test kills it as a crash would: nothing of it runs
// after the kill, no deferred call, no rollback. The child is the test binary started again with
// childEnv set, whose TestMain calls ServeContractServerChild first.
const childEnv = "OSM_STACK_CONTRACT_SERVER_CHILD"

// childStart bounds how long the child takes to start serving.
const childStart = 30 * time.Second

// summariesPath is where the child serves its records' summaries to the stack, beside the API.
const summariesPath = "/_stack/"

// childConfig is what the child serves.
type childConfig struct {
	Listen, DataDir, Token, WebsiteEndpoint, PushEndpoints string
	EncryptionKey                                          []byte
	Backend                                                childBackend
	// StoreWriteHook is told of every store write, and answers once the tap has numbered it.
	StoreWriteHook string
}

// childBackend is the child's backend: versitygw (with AdminEndpoint) or Ceph RGW (Kind "rgw",
// whose admin ops share Endpoint).
type childBackend struct {
	Kind, Endpoint, Region, AdminEndpoint, AdminAccessKey, AdminSecretKey string
}

// ServeContractServerChild serves the contract server and exits when this process was started
// as the stack's contract server child; otherwise it returns at once. Call it first in the
// TestMain of a test binary whose stacks set Options.ContractServerTap.
func ServeContractServerChild() {
	raw := os.Getenv(childEnv)
	if raw == "" {
		return
	}
	fmt.Fprintln(os.Stderr, serveChild(raw))
	os.Exit(1)
}

func serveChild(raw string) error {
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return err
	}
	backend, err := cfg.Backend.build()
	if err != nil {
		return err
	}
	push, err := egress.ParseList(cfg.PushEndpoints)
	if err != nil {
		return err
	}
	server, err := contractserver.New(contractserver.Config{Token: cfg.Token, DataDir: cfg.DataDir, EncryptionKey: cfg.EncryptionKey,
		Backend: backend, WebsiteEndpoint: cfg.WebsiteEndpoint, PushEndpoints: push,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), AfterStoreWrite: tellStoreWrite(cfg.StoreWriteHook)})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", server.Handler())
	mux.HandleFunc("GET "+summariesPath+"contracts", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, server.Contracts) })
	mux.HandleFunc("GET "+summariesPath+"principals", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, server.Principals) })
	return (&http.Server{Addr: cfg.Listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}).ListenAndServe()
}

// build makes the backend.
func (b childBackend) build() (contractserver.Backend, error) {
	if b.Kind == "rgw" {
		return contractserver.NewRGWBackend(contractserver.RGWConfig{Endpoint: b.Endpoint, Region: b.Region,
			AdminAccessKey: b.AdminAccessKey, AdminSecretKey: b.AdminSecretKey})
	}
	return contractserver.NewVersityGWBackend(contractserver.VersityGWConfig{S3Endpoint: b.Endpoint, Region: b.Region,
		AdminEndpoint: b.AdminEndpoint, AdminAccessKey: b.AdminAccessKey, AdminSecretKey: b.AdminSecretKey})
}

// tellStoreWrite posts each store write to hook and waits for the answer: the stack's tap may
// kill this process meanwhile, right after the write.
func tellStoreWrite(hook string) func(op, id string) {
	return func(op, id string) {
		if resp, err := http.PostForm(hook, url.Values{"op": {op}, "id": {id}}); err == nil {
			_ = resp.Body.Close()
		}
	}
}

func writeJSON[T any](w http.ResponseWriter, list func() (T, error)) {
	v, err := list()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// serverChild is the contract server running as a child process, with the tap's doors: the
// hook that hears of store writes, and a proxy in front of versitygw's admin API (nil on RGW).
type serverChild struct {
	cfg     childConfig
	logPath string
	url     string
	proxy   http.Handler
	admin   *faults.Proxy
	hookSrv *httptest.Server
	mu      sync.Mutex
	process *localenv.Process
}

// startServerChild starts the child with cfg, its store writes and versitygw admin writes going
// through tap (RGW's admin ops pass the stack's S3 proxy, which taps them: proxyS3).
func startServerChild(cfg childConfig, tap *faults.Tap, dir string) (*serverChild, error) {
	port, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	c := &serverChild{logPath: filepath.Join(dir, "server.log")}
	if cfg.Backend.Kind != "rgw" {
		c.admin, err = faults.NewProxyWith(cfg.Backend.AdminEndpoint, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rereadable(r)
				tap.Serve(w, r, next, faults.VersityGWAdminWrite)
			})
		})
		if err != nil {
			return nil, err
		}
		cfg.Backend.AdminEndpoint = c.admin.URL
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	c.hookSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tap.Serve(w, r, ok, faults.StoreWrite) }))
	cfg.Listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg.StoreWriteHook = c.hookSrv.URL
	target := &url.URL{Scheme: "http", Host: cfg.Listen}
	c.cfg, c.url, c.proxy = cfg, target.String(), faults.NewReverseProxy(target)
	return c, c.start()
}

// rereadable buffers r's body so that a tap's describe can read it again (GetBody).
func rereadable(r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

func (c *serverChild) start() error {
	raw, err := json.Marshal(c.cfg)
	if err != nil {
		return err
	}
	p, err := localenv.StartProcess("contract-server", c.logPath, os.Args[0], []string{"-test.run=^$"}, []string{childEnv + "=" + string(raw)})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.process = p
	c.mu.Unlock()
	// Any answer will do: the API answers a request without the token 401.
	return localenv.WaitHTTP(context.Background(), p, c.url+"/v1/contracts/none", childStart)
}

// kill ends the child at once (SIGKILL), and restart starts it again on its records.
func (c *serverChild) kill() {
	c.mu.Lock()
	p := c.process
	c.mu.Unlock()
	p.Kill()
}

func (c *serverChild) restart() error {
	c.kill()
	return c.start()
}

func (c *serverChild) stop() {
	c.kill()
	if c.admin != nil {
		c.admin.Close()
	}
	c.hookSrv.Close()
}

// summaries reads the child's list of contracts or principals, asking again while the child is
// killed or being started again (a crash run kills it at any moment, also mid-answer).
func summaries[T any](c *serverChild, what string) ([]T, error) {
	deadline := time.Now().Add(childStart)
	for {
		out, err := readSummaries[T](c.url + summariesPath + what)
		if err == nil || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func readSummaries[T any](from string) ([]T, error) {
	resp, err := http.Get(from)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s %s", from, resp.Status, body)
	}
	var out []T
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
