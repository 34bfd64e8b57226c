package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// KubeProxy stands between the manager and the API server, as an HA control plane's API server
// might stand: it numbers the manager's writes on a Tap, and, on request, serves a stale view
// (lists from an older resource version, and watch events held back until it catches up) or
// coalesces watch events (only the newest version of an object within a window reaches the
// manager). It speaks plain HTTP on 127.0.0.1 and reaches the API server with the transport it
// is given, so the manager acts as whoever that transport authenticates.
type KubeProxy struct {
	// URL is the proxy's address, for the manager's kubeconfig.
	URL string
	// Tap numbers the manager's writes.
	Tap *Tap

	server *httptest.Server
	mu     sync.Mutex
	stale  staleView
	window time.Duration
}

// staleView is a view of the cluster as of resourceVersion, served for hold from the first
// list it answers.
type staleView struct {
	resourceVersion string
	hold            time.Duration
	// until is when the view catches up: zero until it served its first list.
	until time.Time
	// served counts the lists served from resourceVersion.
	served int
}

// active reports whether the view is (still) served at now.
func (v staleView) active(now time.Time) bool {
	return v.resourceVersion != "" && (v.until.IsZero() || now.Before(v.until))
}

// NewKubeProxy starts a proxy in front of the API server at target, reached with transport,
// whose writes go to tap. Close it when done.
func NewKubeProxy(target *url.URL, transport http.RoundTripper, tap *Tap) *KubeProxy {
	p := &KubeProxy{Tap: tap}
	rp := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// JSON, so the proxy can read what it passes on; clients accept it for every kind.
			pr.Out.Header.Set("Accept", "application/json")
			p.rewriteList(pr.Out)
		},
		ModifyResponse: p.modifyWatch,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.refuseWatchList(w, r) {
			return
		}
		r, err := keepBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.Tap.Serve(w, r, rp, kubeWrite)
	}))
	p.URL = p.server.URL
	return p
}

// Close stops the proxy and closes its connections.
func (p *KubeProxy) Close() {
	p.server.CloseClientConnections()
	p.server.Close()
}

// ServeStale makes lists that accept a cached answer (resourceVersion 0, as an informer's
// first list asks) answer as of resourceVersion, and holds back the events of watches started
// meanwhile, until hold has passed since the first such list: then the view catches up at once.
// This is what a client sees of an API server whose cache lags behind, as an HA control plane's
// can after a failover.
func (p *KubeProxy) ServeStale(resourceVersion string, hold time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stale = staleView{resourceVersion: resourceVersion, hold: hold}
}

// StaleServed is how many lists the stale view served since ServeStale, and when it catches
// up (zero while it has served none).
func (p *KubeProxy) StaleServed() (lists int, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stale.served, p.stale.until
}

// Coalesce makes every watch deliver, per window, only the newest event of each object; 0
// turns it off.
func (p *KubeProxy) Coalesce(window time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.window = window
}

// staleUntil is the stale view's resource version and when it catches up, or "" when none is
// served.
func (p *KubeProxy) staleUntil() (string, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stale.active(time.Now()) {
		return "", time.Time{}
	}
	return p.stale.resourceVersion, p.stale.until
}

// refuseWatchList answers a streaming list (sendInitialEvents) with 400 while the view is
// stale, as an API server without the feature would: client-go then falls back to a list,
// which the stale view can answer as of an older resource version.
func (p *KubeProxy) refuseWatchList(w http.ResponseWriter, r *http.Request) bool {
	if rv, _ := p.staleUntil(); rv == "" || r.URL.Query().Get("sendInitialEvents") != "true" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"the stale view serves no streaming lists"}`)
	return true
}

// rewriteList makes a list that accepts a cached answer read as of the stale view's version.
func (p *KubeProxy) rewriteList(out *http.Request) {
	q := out.URL.Query()
	if out.Method != http.MethodGet || q.Get("watch") == "true" || q.Get("resourceVersion") != "0" {
		return
	}
	if _, name, _, ok := parseKubePath(out.URL.Path); !ok || name != "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.stale.active(now) {
		return
	}
	if p.stale.until.IsZero() {
		p.stale.until = now.Add(p.stale.hold)
	}
	p.stale.served++
	q.Set("resourceVersion", p.stale.resourceVersion)
	q.Set("resourceVersionMatch", "Exact")
	out.URL.RawQuery = q.Encode()
}

// modifyWatch puts a watch's events through the stale view's hold and the coalescing window.
func (p *KubeProxy) modifyWatch(resp *http.Response) error {
	if resp.Request.URL.Query().Get("watch") != "true" || resp.StatusCode != http.StatusOK {
		return nil
	}
	rv, until := p.staleUntil()
	p.mu.Lock()
	window := p.window
	p.mu.Unlock()
	if rv == "" && window == 0 {
		return nil
	}
	resp.Body = delayEvents(resp.Body, until, window)
	return nil
}

// kubeWrite describes a write to the API server; events and reviews are not writes of state.
func kubeWrite(r *http.Request, rec *httptest.ResponseRecorder) (Write, bool) {
	resource, name, sub, ok := parseKubePath(r.URL.Path)
	if !ok || slices.Contains([]string{"events", "tokenreviews", "subjectaccessreviews", "leases"}, resource) {
		return Write{}, false
	}
	var answer struct {
		Metadata struct{ Name, ResourceVersion string } `json:"metadata"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &answer)
	if name == "" {
		name = answer.Metadata.Name
	}
	op := strings.ToLower(map[string]string{http.MethodPost: "create", http.MethodPut: "update",
		http.MethodPatch: "patch", http.MethodDelete: "delete"}[r.Method]) + " " + resource
	if sub != "" {
		op += "/" + sub
	}
	w := Write{Channel: KubeAPI, Op: op, Target: name, ResourceVersion: answer.Metadata.ResourceVersion}
	if r.Method == http.MethodPatch {
		w.Fields = patchFields(r)
	}
	return w, true
}

// patchFields lists the fields a JSON merge patch sets, two levels deep ("status.keyStatus").
func patchFields(r *http.Request) string {
	body, ok := r.Context().Value(bodyKey{}).([]byte)
	if !ok {
		return ""
	}
	var patch map[string]any
	if json.Unmarshal(body, &patch) != nil {
		return ""
	}
	var fields []string
	for top, v := range patch {
		inner, ok := v.(map[string]any)
		if !ok || len(inner) == 0 {
			fields = append(fields, top)
			continue
		}
		for k := range inner {
			if top == "metadata" && k == "resourceVersion" {
				continue
			}
			fields = append(fields, top+"."+k)
		}
	}
	sort.Strings(fields)
	return strings.Join(fields, ",")
}

// bodyKey holds a request's body in its context, for the tap to read after it was sent.
type bodyKey struct{}

// keepBody reads a patch's body so that patchFields can read it after the request was sent.
func keepBody(r *http.Request) (*http.Request, error) {
	if r.Method != http.MethodPatch || r.Body == nil {
		return r, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the patch: %w", err)
	}
	_ = r.Body.Close()
	out := r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	out.Body = io.NopCloser(bytes.NewReader(body))
	return out, nil
}

// parseKubePath splits an API path (/api/v1/..., /apis/group/version/...) into the resource,
// the object's name and the subresource; ok is false for anything else (discovery, /healthz).
func parseKubePath(path string) (resource, name, sub string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "", "", "", false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 1:
		return parts[0], "", "", true
	case 2:
		return parts[0], parts[1], "", true
	case 3:
		return parts[0], parts[1], parts[2], true
	}
	return "", "", "", false
}
