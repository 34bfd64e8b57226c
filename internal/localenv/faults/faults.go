// Package faults puts failures between the operator and the servers it calls, for the fault
// suite: by operation and rate it answers 500 or 503 SlowDown, resets the connection, adds
// latency, or — the case that leaks — lets the request through and then drops the answer; on
// request it also refuses (403 AccessDenied, 400 InvalidRequest), as a server does when a
// permission or a setting is briefly wrong. It
// is an http.Handler middleware, so it stands in front of the contract API (a stack Hook) and,
// as a reverse proxy on 127.0.0.1, in front of the S3 server.
package faults

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// Kind is one kind of failure.
type Kind string

const (
	// ServerError answers 500 without forwarding.
	ServerError Kind = "500"
	// SlowDown answers 503 with Retry-After, as S3 and the contract API throttle.
	SlowDown Kind = "503"
	// Reset closes the connection without forwarding or answering.
	Reset Kind = "reset"
	// Latency delays the request, then forwards it.
	Latency Kind = "latency"
	// DropAnswer forwards the request, lets the server act on it, and closes the connection
	// instead of answering.
	DropAnswer Kind = "drop-answer"
	// Forbidden answers 403 AccessDenied without forwarding.
	Forbidden Kind = "403"
	// BadRequest answers 400 InvalidRequest without forwarding.
	BadRequest Kind = "400"
)

// Kinds are the kinds a server produces by itself under load or failure, the default.
var Kinds = []Kind{ServerError, SlowDown, Reset, Latency, DropAnswer}

// Refusals are the kinds that refuse the request as it stands. An operator retries them only
// slowly (they are not transient), so a scenario that injects them must allow for that.
var Refusals = []Kind{Forbidden, BadRequest}

// Injector decides, per request, whether and how it fails. Its zero value injects nothing.
type Injector struct {
	// Rate is the share of matching requests that fail, from 0 to 1.
	Rate float64
	// Kinds to choose from, uniformly; all Kinds when empty.
	Kinds []Kind
	// Match limits faults to some operations (see Operation); all when nil.
	Match func(operation string) bool
	// Operation names a request: S3Operation, ContractAPIOperation, or the method and path.
	Operation func(*http.Request) string
	// Delay is what Latency adds (100ms when 0).
	Delay time.Duration
	// Seed makes the choices repeatable.
	Seed uint64

	mu       sync.Mutex
	rng      *rand.Rand
	on       bool
	injected map[string]int
	seen     int
}

// Enable turns injection on or off; it starts off, so a test sets up before faults begin.
func (i *Injector) Enable(on bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.on = on
}

// SetKinds changes the kinds to choose from while requests flow.
func (i *Injector) SetKinds(kinds ...Kind) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.Kinds = kinds
}

// Injected reports the faults injected so far, by "operation kind".
func (i *Injector) Injected() map[string]int {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make(map[string]int, len(i.injected))
	for k, v := range i.injected {
		out[k] = v
	}
	return out
}

// Total is the number of faults injected and of requests seen.
func (i *Injector) Total() (faults, requests int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, n := range i.injected {
		faults += n
	}
	return faults, i.seen
}

// Summary is the injected faults as one sorted line.
func (i *Injector) Summary() string {
	var parts []string
	for k, n := range i.Injected() {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// decide returns the fault for r, or "" to let it through.
func (i *Injector) decide(r *http.Request) Kind {
	op := r.Method + " " + r.URL.Path
	if i.Operation != nil {
		op = i.Operation(r)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.seen++
	if !i.on || i.Rate <= 0 || (i.Match != nil && !i.Match(op)) {
		return ""
	}
	if i.rng == nil {
		i.rng = rand.New(rand.NewPCG(i.Seed, 0x05ee))
	}
	if i.rng.Float64() >= i.Rate {
		return ""
	}
	kinds := i.Kinds
	if len(kinds) == 0 {
		kinds = Kinds
	}
	k := kinds[i.rng.IntN(len(kinds))]
	if i.injected == nil {
		i.injected = map[string]int{}
	}
	i.injected[op+" "+string(k)]++
	return k
}

// Wrap puts the injector in front of next.
func (i *Injector) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { i.Serve(w, r, next) })
}

// Serve handles one request: through to next, or failed as decided. It has the shape of a
// stack.Hook.
func (i *Injector) Serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	switch i.decide(r) {
	case "":
		next.ServeHTTP(w, r)
	case ServerError:
		http.Error(w, "injected fault: internal error", http.StatusInternalServerError)
	case SlowDown:
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>injected fault</Message></Error>`)
	case Forbidden:
		refuse(w, http.StatusForbidden, "AccessDenied")
	case BadRequest:
		refuse(w, http.StatusBadRequest, "InvalidRequest")
	case Reset:
		panic(http.ErrAbortHandler) // net/http closes the connection without an answer
	case Latency:
		d := i.Delay
		if d == 0 {
			d = 100 * time.Millisecond
		}
		select {
		case <-time.After(d):
			next.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	case DropAnswer:
		next.ServeHTTP(httptest.NewRecorder(), r) // the server acts; its answer goes nowhere
		panic(http.ErrAbortHandler)
	}
}

// refuse answers as S3 does; the contract API's client reads it as a refusal without a problem
// document.
func refuse(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected fault</Message></Error>`, code)
}

// Proxy is a reverse proxy on 127.0.0.1 in front of target, failing requests as inj decides.
type Proxy struct {
	// URL is the proxy's address, to hand to clients instead of the target's.
	URL    string
	server *httptest.Server
}

// NewProxy starts a proxy in front of target. Close it when done.
func NewProxy(target string, inj *Injector) (*Proxy, error) {
	return NewProxyWith(target, inj.Wrap)
}

// NewProxyWith starts a proxy in front of target whose requests pass through wrap first: an
// Injector's Wrap, or a middleware that only counts (the scale benchmark's). Close it when done.
func NewProxyWith(target string, wrap func(http.Handler) http.Handler) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %w", target, err)
	}
	rp := NewReverseProxy(u)
	srv := httptest.NewServer(wrap(rp)) // httptest listens on 127.0.0.1
	return &Proxy{URL: srv.URL, server: srv}, nil
}

// NewReverseProxy forwards every request to target with the Host the client signed (S3
// signatures cover it), over connections it keeps open.
func NewReverseProxy(target *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport: localenv.KeepAliveTransport(),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.server.CloseClientConnections()
	p.server.Close()
}

// S3Operation names an S3 request as the SDK names its operations, from its method, path and
// query: "CreateBucket", "PutBucketTagging", "GetBucketAcl", "ListObjectsV2", ...
func S3Operation(r *http.Request) string {
	bucket := strings.Trim(r.URL.Path, "/")
	q := r.URL.Query()
	if bucket == "" {
		return "ListBuckets"
	}
	if strings.Contains(bucket, "/") {
		return object[r.Method] + "Object"
	}
	for _, sub := range []struct{ query, name string }{
		{"acl", "BucketAcl"}, {"policy", "BucketPolicy"}, {"tagging", "BucketTagging"},
		{"versioning", "BucketVersioning"}, {"lifecycle", "BucketLifecycleConfiguration"}, {"cors", "BucketCors"},
	} {
		if q.Has(sub.query) {
			return object[r.Method] + sub.name
		}
	}
	switch r.Method {
	case http.MethodHead:
		return "HeadBucket"
	case http.MethodPut:
		return "CreateBucket"
	case http.MethodDelete:
		return "DeleteBucket"
	case http.MethodGet:
		if q.Get("list-type") == "2" {
			return "ListObjectsV2"
		}
		return "ListObjects"
	}
	return r.Method + " " + r.URL.Path
}

var object = map[string]string{
	http.MethodGet: "Get", http.MethodHead: "Head", http.MethodPut: "Put", http.MethodDelete: "Delete", http.MethodPost: "Post",
}

// ContractAPIOperation names a contract API request by method and path template, ids removed:
// "POST /v1/contracts", "GET /v1/contracts/{id}", "DELETE /v1/contracts/{id}/principals/{principalId}/keys/{accessKeyId}".
func ContractAPIOperation(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i := 1; i < len(parts); i++ {
		if id, ok := pathIDs[parts[i-1]]; ok {
			parts[i] = id
		}
	}
	return r.Method + " /" + strings.Join(parts, "/")
}

// pathIDs names the segment that follows each collection of the contract API.
var pathIDs = map[string]string{"contracts": "{id}", "principals": "{principalId}", "keys": "{accessKeyId}"}
