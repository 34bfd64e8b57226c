package faults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTapStopsTheManagerRightAfterTheArmedWrite: the write goes through, the hit is called
// before its answer goes back, the client gets no answer, and nothing the dead manager sends
// afterwards reaches the server until the tap thaws.
func TestTapStopsTheManagerRightAfterTheArmedWrite(t *testing.T) {
	var served atomic.Int32
	server := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "done")
	})
	tap := &Tap{}
	tap.Reset(nil, nil)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tap.Serve(w, r, server, S3Write)
	}))
	defer front.Close()
	hit := make(chan Point, 1)
	tap.Arm(Point{Signature: "s3 CreateBucket b", N: 2}, func(p Point, _ Write) { hit <- p })

	do := func(method, path string) error {
		req, _ := http.NewRequest(method, front.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	for i, want := range []bool{true, false} {
		if err := do(http.MethodPut, "/b"); (err == nil) != want {
			t.Fatalf("CreateBucket #%d: error %v, want an answer: %v", i+1, err, want)
		}
	}
	if p := <-hit; p.String() != "s3 CreateBucket b #2" {
		t.Errorf("hit at %s", p)
	}
	if served.Load() != 2 {
		t.Errorf("the server acted on %d requests, want 2: the armed write goes through", served.Load())
	}
	held := make(chan error, 1)
	go func() { held <- do(http.MethodGet, "/b?acl") }()
	select {
	case err := <-held:
		t.Fatalf("a request after the armed write was answered (%v) before the tap thawed", err)
	case <-time.After(200 * time.Millisecond):
	}
	tap.Thaw()
	if err := <-held; err == nil {
		t.Error("a request the dead manager sent was answered after the thaw")
	}
	if err := do(http.MethodGet, "/b?acl"); err != nil || served.Load() != 3 {
		t.Errorf("after the thaw: %v, %d served", err, served.Load())
	}
	want := []Point{{"s3 CreateBucket b", 1}, {"s3 CreateBucket b", 2}}
	if diff := cmp.Diff(want, tap.Points()); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}

func TestKubeWriteNamesWhatAPatchChanged(t *testing.T) {
	rec := httptest.NewRecorder()
	_, _ = io.WriteString(rec, `{"metadata":{"name":"b","resourceVersion":"42"}}`)
	r := httptest.NewRequest(http.MethodPatch, "/apis/storage.osm.dev/v1alpha1/namespaces/ns/buckets/b/status",
		strings.NewReader(`{"metadata":{"resourceVersion":"41"},"status":{"creatingBucket":"x","conditions":null}}`))
	r, err := keepBody(r)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := kubeWrite(r, rec)
	want := Write{Channel: KubeAPI, Op: "patch buckets/status", Target: "b", Fields: "status.conditions,status.creatingBucket", ResourceVersion: "42"}
	if !ok || got != want {
		t.Errorf("kubeWrite = %+v, %v; want %+v", got, ok, want)
	}
	rec = httptest.NewRecorder()
	_, _ = io.WriteString(rec, `{"metadata":{"name":"s-credentials","resourceVersion":"7"}}`)
	got, _ = kubeWrite(httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/ns/secrets", nil), rec)
	if got.Signature() != "api create secrets s-credentials" {
		t.Errorf("a create is %q", got.Signature())
	}
	if _, ok := kubeWrite(httptest.NewRequest(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/ns/events", nil), rec); ok {
		t.Error("an event counted as a write of state")
	}
}

// TestWatchEventsAreHeldThenCoalesced: a stale view holds every event until it catches up; a
// coalescing window lets only the newest event of each object through.
func TestWatchEventsAreHeldThenCoalesced(t *testing.T) {
	events := func(evs ...string) io.ReadCloser {
		var b strings.Builder
		for _, e := range evs {
			b.WriteString(e + "\n")
		}
		return io.NopCloser(strings.NewReader(b.String()))
	}
	ev := func(typ, name, rv string) string {
		return fmt.Sprintf(`{"type":%q,"object":{"metadata":{"namespace":"ns","name":%q,"resourceVersion":%q}}}`, typ, name, rv)
	}
	read := func(body io.ReadCloser) (got []string, took time.Duration) {
		start := time.Now()
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			var e struct {
				Type   string
				Object struct {
					Metadata struct{ Name, ResourceVersion string }
				}
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			got = append(got, e.Type+" "+e.Object.Metadata.Name+"@"+e.Object.Metadata.ResourceVersion)
		}
		return got, time.Since(start)
	}

	held, took := read(delayEvents(events(ev("ADDED", "a", "1"), ev("MODIFIED", "a", "2")), time.Now().Add(300*time.Millisecond), 0))
	if diff := cmp.Diff([]string{"ADDED a@1", "MODIFIED a@2"}, held); diff != "" || took < 250*time.Millisecond {
		t.Errorf("held for %s (want 300ms), events (-want +got):\n%s", took, diff)
	}
	coalesced, _ := read(delayEvents(events(ev("ADDED", "a", "1"), ev("ADDED", "b", "2"), ev("MODIFIED", "a", "3"),
		ev("DELETED", "b", "4"), `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}`), time.Time{}, time.Hour))
	if diff := cmp.Diff([]string{"ADDED a@3", "DELETED b@4", "BOOKMARK @5"}, coalesced); diff != "" {
		t.Errorf("coalesced events (-want +got):\n%s", diff)
	}
}

// TestStaleViewRewritesInformerLists: while the view is stale, an informer's first list (RV 0)
// is read as of the older version and a streaming list is refused; a consistent read is not
// touched, and neither is anything once the view caught up.
func TestStaleViewRewritesInformerLists(t *testing.T) {
	var seen []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Query().Get("resourceVersion")+"/"+r.URL.Query().Get("resourceVersionMatch"))
		_, _ = io.WriteString(w, `{"metadata":{}}`)
	}))
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)
	p := NewKubeProxy(target, http.DefaultTransport, &Tap{})
	defer p.Close()
	get := func(query string) int {
		resp, err := http.Get(p.URL + "/apis/storage.osm.dev/v1alpha1/namespaces/ns/buckets?" + query)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	p.ServeStale("17", 300*time.Millisecond)
	if code := get("watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"); code != http.StatusBadRequest {
		t.Errorf("a streaming list while stale: %d, want 400", code)
	}
	time.Sleep(350 * time.Millisecond) // the view lasts from its first list on
	get("resourceVersion=0")
	get("resourceVersion=")
	time.Sleep(350 * time.Millisecond)
	get("resourceVersion=0")
	if diff := cmp.Diff([]string{"17/Exact", "/", "0/"}, seen); diff != "" {
		t.Errorf("lists reaching the API server (-want +got):\n%s", diff)
	}
	if n, until := p.StaleServed(); n != 1 || until.IsZero() {
		t.Errorf("StaleServed() = %d, %s; want 1 list and when it caught up", n, until)
	}
}
