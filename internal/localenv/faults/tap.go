package faults

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Channel is the server a write went to.
type Channel string

const (
	// KubeAPI is the API server.
	KubeAPI Channel = "api"
	// S3 is the S3 endpoint.
	S3 Channel = "s3"
	// ContractAPI is the contract API.
	ContractAPI Channel = "contract"
	// ContractServer is the contract server's own writes: to its records, and to the S3
	// server's admin API.
	ContractServer Channel = "contract-server"
)

// Write is one write the manager (or the contract server) made that a server accepted, as a tap
// saw it.
type Write struct {
	Channel Channel
	// Op names the call: "patch buckets/status", "PutBucketPolicy", "POST /v1/contracts".
	Op string
	// Target is what it wrote: an object's name, a bucket, an idempotency key or an id; a Tap's
	// Name turns it into something that reads the same from one run to the next.
	Target string
	// Fields are, for a patch, the fields it changed ("status.creatingBucket").
	Fields string
	// ResourceVersion is what the API server answered with (KubeAPI only).
	ResourceVersion string
}

// Signature is the write without what differs from run to run.
func (w Write) Signature() string {
	s := string(w.Channel) + " " + w.Op + " " + w.Target
	if w.Fields != "" {
		s += " {" + w.Fields + "}"
	}
	return s
}

// Point is the N-th write (from 1) of a signature in a run: a place where the manager can be
// stopped, the same place in every run of the same workload.
type Point struct {
	Signature string
	N         int
}

func (p Point) String() string { return fmt.Sprintf("%s #%d", p.Signature, p.N) }

// Tap numbers the manager's writes on every channel in the order the servers accepted them
// (Points), and stops the manager at one of them: armed with a point, it lets that write
// through, then calls the hit function (which kills the manager) before the answer goes back,
// and from then on holds every request until Thaw and fails it, so the manager sees nothing
// after that write. Its zero value records.
type Tap struct {
	mu sync.Mutex
	// name rewrites a write's target so that it reads the same in every run (names of
	// resources instead of ids); nil keeps it. seen, when set, is told of every write,
	// numbered, after its server accepted it.
	name   func(Write) Write
	seen   func(Point, Write)
	counts map[string]int
	points []Point
	target *Point
	hit    func(Point, Write)
	frozen chan struct{}
}

// Arm makes the tap call hit right after the write at p, before its answer goes back, and
// freeze.
func (t *Tap) Arm(p Point, hit func(Point, Write)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.target, t.hit = &p, hit
}

// Reset forgets the writes seen and the armed point, and thaws the tap. From then on name
// rewrites each write's target so that it reads the same in every run (names of resources
// instead of ids), and seen is told of every write after its server accepted it; either may be
// nil.
func (t *Tap) Reset(name func(Write) Write, seen func(Point, Write)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts, t.points, t.target, t.hit = nil, nil, nil, nil
	t.name, t.seen = name, seen
	t.thawLocked()
}

// Thaw lets requests through again (a new manager is about to start); those held meanwhile fail.
func (t *Tap) Thaw() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.thawLocked()
}

func (t *Tap) thawLocked() {
	if t.frozen != nil {
		close(t.frozen)
		t.frozen = nil
	}
}

// Points are the writes seen since the last Reset, in order.
func (t *Tap) Points() []Point {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Point(nil), t.points...)
}

// Serve passes one request to next. describe says whether the request is a write and what it
// wrote, given its answer; a write's answer is held until the tap has numbered it.
func (t *Tap) Serve(w http.ResponseWriter, r *http.Request, next http.Handler, describe func(*http.Request, *httptest.ResponseRecorder) (Write, bool)) {
	t.mu.Lock()
	frozen := t.frozen
	t.mu.Unlock()
	if frozen != nil {
		// The manager that sent it is being killed: it must see nothing more.
		<-frozen
		panic(http.ErrAbortHandler)
	}
	if !isWrite(r.Method) {
		next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	if write, ok := describe(r, rec); ok && rec.Code < 300 {
		if t.observe(write) {
			panic(http.ErrAbortHandler)
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// observe numbers write and, when it is the armed point, freezes the tap and calls hit; it
// reports whether it did.
func (t *Tap) observe(write Write) bool {
	t.mu.Lock()
	name := t.name
	t.mu.Unlock()
	if name != nil {
		write = name(write)
	}
	t.mu.Lock()
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	sig := write.Signature()
	t.counts[sig]++
	p := Point{Signature: sig, N: t.counts[sig]}
	t.points = append(t.points, p)
	hit := t.hit
	if t.target == nil || *t.target != p || t.frozen != nil {
		hit = nil
	}
	if hit != nil {
		t.frozen = make(chan struct{})
		t.target = nil
	}
	seen := t.seen
	t.mu.Unlock()
	if seen != nil {
		seen(p, write)
	}
	if hit == nil {
		return false
	}
	hit(p, write)
	return true
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// S3Write describes an S3 request as a Write: its operation and bucket. Ceph RGW's admin ops
// (/admin/...) share its endpoint; they are the contract server's (RGWAdminWrite).
func S3Write(r *http.Request, _ *httptest.ResponseRecorder) (Write, bool) {
	if isRGWAdmin(r) {
		return Write{}, false
	}
	bucket, _, _ := strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
	return Write{Channel: S3, Op: S3Operation(r), Target: bucket}, true
}

// ContractAPIWrite describes a contract API request as a Write: its operation and its
// idempotency key, or else the principal or the contract it is about (a key it removes is gone
// from the server's records by the time the tap names it).
func ContractAPIWrite(r *http.Request, _ *httptest.ResponseRecorder) (Write, bool) {
	target := r.Header.Get("Idempotency-Key")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i := 1; i < len(parts) && target == ""; i++ {
		if parts[i-1] == "principals" {
			target = parts[i]
		}
	}
	for i := 1; i < len(parts) && target == ""; i++ {
		if parts[i-1] == "contracts" {
			target = parts[i]
		}
	}
	return Write{Channel: ContractAPI, Op: ContractAPIOperation(r), Target: target}, true
}

// StoreWrite describes the contract server's word that a write to its records committed (a form
// with op and id, which the stack's contract server child posts) as a Write.
func StoreWrite(r *http.Request, _ *httptest.ResponseRecorder) (Write, bool) {
	return Write{Channel: ContractServer, Op: "store " + r.FormValue("op"), Target: r.FormValue("id")}, true
}

// VersityGWAdminWrite describes a call to versitygw's admin API as a Write: create-user with the
// role it gives (the access key it names is new, so it would read differently in every run),
// delete-user with the access key. The admin API's reads are PATCH requests too: they are no
// writes. The body is read through r.GetBody, which the caller sets.
func VersityGWAdminWrite(r *http.Request, _ *httptest.ResponseRecorder) (Write, bool) {
	w := Write{Channel: ContractServer, Op: "versitygw " + strings.Trim(r.URL.Path, "/")}
	switch w.Op {
	case "versitygw create-user":
		w.Target = adminRole(r)
	case "versitygw delete-user":
		w.Target = r.URL.Query().Get("access")
	default:
		return w, false
	}
	return w, true
}

// adminRole is the Role of a create-user body.
func adminRole(r *http.Request) string {
	if r.GetBody == nil {
		return ""
	}
	body, err := r.GetBody()
	if err != nil {
		return ""
	}
	var acc struct {
		Role string `xml:"Role"`
	}
	_ = xml.NewDecoder(body).Decode(&acc)
	return acc.Role
}

// RGWAdminWrite describes a call to Ceph RGW's admin ops API as a Write: the method and the
// resource with its sub-resource ("PUT user?key"), on the user it names.
func RGWAdminWrite(r *http.Request, _ *httptest.ResponseRecorder) (Write, bool) {
	if !isRGWAdmin(r) {
		return Write{}, false
	}
	op := "rgw " + r.Method + " " + strings.TrimPrefix(r.URL.Path, "/admin/")
	q := r.URL.Query()
	for _, sub := range []string{"key", "quota", "caps"} {
		if q.Has(sub) {
			op += "?" + sub
		}
	}
	return Write{Channel: ContractServer, Op: op, Target: q.Get("uid")}, true
}

func isRGWAdmin(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/admin/") }
