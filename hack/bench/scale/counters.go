package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
)

// counts is a number per name ("GetBucketAcl", "PATCH buckets/status", ...).
type counts map[string]float64

// minus is what happened between two snapshots.
func (c counts) minus(before counts) counts {
	out := counts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (c counts) total() float64 {
	var t float64
	for _, v := range c {
		t += v
	}
	return t
}

// sum adds up the counts whose name keep accepts.
func (c counts) sum(keep func(string) bool) float64 {
	var t float64
	for k, v := range c {
		if keep(k) {
			t += v
		}
	}
	return t
}

func (c counts) names() []string { return slices.Sorted(maps.Keys(c)) }

// s3Calls counts S3 calls by operation ("GetBucketAcl", ...), as the server saw them: the
// operator's own counters could miss retries or count calls that never left.
type s3Calls interface {
	snapshot() counts
}

// s3Counter counts the requests that pass through it, as a proxy in front of the S3 server
// (Ceph RGW, which writes no access log here).
type s3Counter struct {
	mu  sync.Mutex
	ops counts
}

func newS3Counter() *s3Counter { return &s3Counter{ops: counts{}} }

func (c *s3Counter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := faults.S3Operation(r)
		c.mu.Lock()
		c.ops[op]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (c *s3Counter) snapshot() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.ops)
}

// s3LogCounter counts the requests versitygw writes to its access log: counted by the server
// itself, with no proxy between the operator and it (a proxy's second hop cost the benchmark
// about a CPU-second per 1,000 Buckets, on the cores the burst needs).
type s3LogCounter struct {
	path string

	mu      sync.Mutex
	offset  int64
	partial []byte // a line not yet written whole
	ops     counts
}

func newS3LogCounter(path string) *s3LogCounter { return &s3LogCounter{path: path, ops: counts{}} }

// snapshot counts what the log gained since the last snapshot.
func (c *s3LogCounter) snapshot() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := c.readNew()
	if err != nil {
		logf("s3 calls      reading %s: %v", c.path, err)
	}
	b = append(c.partial, b...)
	end := bytes.LastIndexByte(b, '\n') + 1
	for _, line := range bytes.Split(b[:end], []byte("\n")) {
		if op, ok := accessLogOperation(line); ok {
			c.ops[op]++
		}
	}
	c.partial = append([]byte(nil), b[end:]...)
	return maps.Clone(c.ops)
}

// readNew reads the log from where the last read ended.
func (c *s3LogCounter) readNew() ([]byte, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	c.offset += int64(len(b))
	return b, err
}

// accessLogOperation is the S3 operation of one line of versitygw's access log (AWS's server
// access log format: bucket owner, bucket, [time], remote IP, requester, request ID, operation,
// ...), named as faults.S3Operation names it. Other lines ("log starts ...") are not ok.
func accessLogOperation(line []byte) (string, bool) {
	_, rest, ok := bytes.Cut(line, []byte("] "))
	if !ok {
		return "", false
	}
	fields := strings.Fields(string(rest))
	if len(fields) < 4 {
		return "", false
	}
	op, ok := strings.CutPrefix(fields[3], "s3_")
	if !ok {
		return "", false
	}
	if op == "ListAllMyBuckets" {
		op = "ListBuckets"
	}
	return op, true
}

// isS3Write tells S3 calls that change something from reads.
func isS3Write(op string) bool {
	for _, p := range []string{"Put", "Create", "Delete", "Post"} {
		if strings.HasPrefix(op, p) {
			return true
		}
	}
	return false
}

// apiWrites reads the API server's own count of the writes it served
// (apiserver_request_total), by "VERB resource[/subresource]". Leases are left out: the API
// server renews its own, whoever else is running.
func apiWrites(ctx context.Context, cs kubernetes.Interface) (counts, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	out := counts{}
	for _, s := range parseMetric(raw, "apiserver_request_total") {
		switch s.labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY": // as the API server names them
		default:
			continue
		}
		if s.labels["group"] == "coordination.k8s.io" {
			continue
		}
		res := s.labels["resource"]
		if sub := s.labels["subresource"]; sub != "" {
			res += "/" + sub
		}
		if g := s.labels["group"]; g != "" && g != "storage.osm.dev" {
			res += "." + g
		}
		out[s.labels["verb"]+" "+res] += s.value
	}
	return out, nil
}

// sample is one line of the Prometheus text format.
type sample struct {
	labels map[string]string
	value  float64
}

// parseMetric returns the samples of one metric from the Prometheus text format. Only what the
// benchmark reads is handled: counters with plain label values.
func parseMetric(raw []byte, name string) []sample {
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := strings.TrimPrefix(line, name)
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				continue
			}
			for _, kv := range splitLabels(rest[1:end]) {
				k, v, ok := strings.Cut(kv, "=")
				if ok {
					s.labels[k] = strings.Trim(v, `"`)
				}
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// splitLabels splits `a="x",b="y,z"` at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// reconciles reads controller-runtime's count of finished reconciles of one controller from a
// manager's /metrics (served over plain HTTP on loopback for the benchmark).
func reconciles(ctx context.Context, metricsURL, controller string) (float64, error) {
	return gauge(ctx, metricsURL, "controller_runtime_reconcile_total", controller)
}

// gauge sums a metric of one controller from a manager's /metrics.
func gauge(ctx context.Context, metricsURL, metric, controller string) (float64, error) {
	samples, err := scrape(ctx, metricsURL, metric)
	if err != nil {
		return 0, err
	}
	var total float64
	for _, s := range samples {
		if s.labels["controller"] == controller {
			total += s.value
		}
	}
	return total, nil
}

// providerCalls reads the manager's own count of its contract API requests, by operation
// ("GET /v1/contracts/{id}/usage"): the provider's side of what a resync costs.
func providerCalls(ctx context.Context, metricsURL string) (counts, error) {
	samples, err := scrape(ctx, metricsURL, "osm_contract_api_requests_total")
	if err != nil {
		return nil, err
	}
	out := counts{}
	for _, s := range samples {
		out[s.labels["operation"]] += s.value
	}
	return out, nil
}

// scrape reads the samples of one metric from a manager's /metrics.
func scrape(ctx context.Context, metricsURL, metric string) ([]sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	return parseMetric(buf.Bytes(), metric), nil
}

// procStats is what /proc says of one process: CPU seconds used, peak resident memory, and
// what is resident now, split into anonymous memory (the heap, which grows with N) and pages of
// the binary's own file (its code, the same at any N).
type procStats struct {
	cpu        time.Duration
	peakRSS    int64 // bytes
	anon, file int64
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on Linux.
const clockTicks = 100

func readProc(pid int) (procStats, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStats{}, err
	}
	s := string(stat)
	// "PID (comm) STATE PPID ...": comm may hold spaces, so split after the last ')'.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return procStats{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	st := procStats{cpu: time.Duration(utime+stime) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStats{}, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch name {
		case "VmHWM":
			st.peakRSS = kb * 1024
		case "RssAnon":
			st.anon = kb * 1024
		case "RssFile":
			st.file = kb * 1024
		}
	}
	return st, nil
}
