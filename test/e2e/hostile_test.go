package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The access keys a tenant signs with to pick what its hostile server answers (hostileS3).
const (
	keyRedirect = "REDIRECT" // the policy is a redirect into the cluster's network
	keyHuge     = "HUGE"     // the policy is 64 MiB long
	keyEmpty    = "EMPTY"    // every answer is an empty 200
	keyTarPit   = "TARPIT"   // the account works, every bucket call hangs
)

// hugeAnswer is how much the hostile server sends as a policy: a quarter of the manager's
// memory limit, read again at every start of an Observe Bucket before answers were bounded.
const hugeAnswer = 64 << 20

// hostileS3 is the S3 endpoint of a tenant that the platform allowed (osm-dev's
// --allowed-endpoints lists it), turned hostile. What it answers depends on the access key the
// request is signed with, one per attack. internal stands for a service of the cluster's
// network (a metadata service, an internal API): the tenant wants its answer in a status.
type hostileS3 struct {
	URL      string
	server   *http.Server
	internal *httptest.Server

	internalHits atomic.Int64 // requests that reached internal
	hugeSent     atomic.Int64 // bytes of huge answers written before the reader stopped
	calls        sync.Map     // key → *atomic.Int64: requests signed with it

	mu       sync.Mutex
	released chan struct{} // closed: the tar pit answers at once, so that deletions finish
}

// startHostileS3 serves on addr, a loopback address osm-dev was told to allow.
func startHostileS3(addr string) (*hostileS3, error) {
	h := &hostileS3{URL: "http://" + addr, released: make(chan struct{})}
	h.internal = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h.internalHits.Add(1)
		_, _ = io.WriteString(w, `{"Statement":[{"Effect":"Allow","Sid":"AccessKeyId-ASIAINTERNAL","Resource":"the cluster's secret"}]}`)
	}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		h.internal.Close()
		return nil, err
	}
	h.server = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.server.Serve(ln) }()
	return h, nil
}

// release ends the tar pit: from now on the server answers at once.
func (h *hostileS3) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.released:
	default:
		close(h.released)
	}
}

func (h *hostileS3) stop() {
	h.release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.server.Shutdown(ctx)
	h.internal.Close()
}

// callsWith is how many requests were signed with key.
func (h *hostileS3) callsWith(key string) int64 {
	n, _ := h.calls.LoadOrStore(key, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

// accessKey is the key a request is signed with (AWS Signature Version 4).
func accessKey(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	key, _, _ := strings.Cut(cred, "/")
	return key
}

func (h *hostileS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := accessKey(r)
	n, _ := h.calls.LoadOrStore(key, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	listBuckets := r.Method == http.MethodGet && r.URL.Path == "/"
	switch {
	case key == keyEmpty:
		return // 200, nothing in it
	case listBuckets:
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, `<ListAllMyBucketsResult><Owner><ID>tenant</ID></Owner><Buckets></Buckets></ListAllMyBucketsResult>`)
		return
	case key == keyTarPit:
		select {
		case <-h.released:
			s3Error(w, http.StatusNotFound, "NoSuchBucket")
		case <-r.Context().Done():
		}
		return
	}
	query := r.URL.Query()
	switch {
	case r.Method == http.MethodHead:
		return // the bucket exists
	case r.Method == http.MethodGet && query.Has("tagging"):
		s3Error(w, http.StatusNotFound, "NoSuchTagSet")
	case r.Method == http.MethodGet && query.Has("policy") && key == keyRedirect:
		http.Redirect(w, r, h.internal.URL+"/latest/meta-data/iam/security-credentials/", http.StatusFound)
	case r.Method == http.MethodGet && query.Has("policy") && key == keyHuge:
		h.sendHugePolicy(w)
	default:
		// Every other setting: unknown here, as on a server that lacks it.
		s3Error(w, http.StatusNotImplemented, "NotImplemented")
	}
}

// sendHugePolicy writes a policy of hugeAnswer bytes, well formed, without holding it in memory.
func (h *hostileS3) sendHugePolicy(w http.ResponseWriter) {
	head, tail := `{"Statement":[{"Effect":"Allow","Sid":"`, `"}]}`
	w.Header().Set("Content-Type", "application/json")
	chunk := []byte(strings.Repeat("x", 64<<10))
	n, _ := io.WriteString(w, head)
	h.hugeSent.Add(int64(n))
	for sent := n; sent < hugeAnswer-len(tail); sent += len(chunk) {
		n, err := w.Write(chunk)
		h.hugeSent.Add(int64(n))
		if err != nil {
			return // the reader hung up
		}
	}
	n, _ = io.WriteString(w, tail)
	h.hugeSent.Add(int64(n))
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}
