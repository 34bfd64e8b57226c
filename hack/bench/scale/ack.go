package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
)

// ACK's s3-controller is the peer: built from the module proxy by hack/tools/ack-s3 (see
// hack/tools/build.sh), run against the same API server and S3 server.
var ackBucketGVR = schema.GroupVersionResource{Group: "s3.services.k8s.aws", Version: "v1alpha1", Resource: "buckets"}

// ackSyncedCondition is the condition ACK sets True once a resource matches AWS.
const ackSyncedCondition = "ACK.ResourceSynced"

// ackModuleDir is where the Go module cache holds ACK's s3-controller, whose CRDs are installed
// from its config/crd.
func ackModuleDir(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws-controllers-k8s/s3-controller")
	cmd.Dir = filepath.Join(root, "hack", "tools", "ack-s3")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating ACK's s3-controller module: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// stsStub answers STS GetCallerIdentity, which ACK asks once at start for the account it runs
// in; nothing else of STS is used without cross-account roles.
func stsStub() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("Action") != "GetCallerIdentity" {
			http.Error(w, "only GetCallerIdentity is stubbed", http.StatusNotImplemented)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		_, _ = fmt.Fprint(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<GetCallerIdentityResult><Arn>arn:aws:iam::000000000000:user/bench</Arn><UserId>BENCH</UserId><Account>000000000000</Account></GetCallerIdentityResult>
<ResponseMetadata><RequestId>bench</RequestId></ResponseMetadata></GetCallerIdentityResponse>`)
	}))
}

// awsDefaults is what AWS answers for a bucket that never configured a sub-resource, by the
// query key that names it: ACK reads them all on every pass, and some S3 servers (versitygw)
// answer 501 NotImplemented instead. An empty code is a 200 with the body; otherwise a 404
// error with that code. get is the SDK's name of the read, for the counts.
var awsDefaults = map[string]struct{ get, code, body string }{
	"accelerate":          {"GetBucketAccelerateConfiguration", "", `<AccelerateConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`},
	"analytics":           {"ListBucketAnalyticsConfigurations", "", `<ListBucketAnalyticsConfigurationResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated></ListBucketAnalyticsConfigurationResult>`},
	"cors":                {"GetBucketCors", "NoSuchCORSConfiguration", ""},
	"encryption":          {"GetBucketEncryption", "", `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault><BucketKeyEnabled>false</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>`},
	"intelligent-tiering": {"ListBucketIntelligentTieringConfigurations", "", `<ListBucketIntelligentTieringConfigurationsOutput xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated></ListBucketIntelligentTieringConfigurationsOutput>`},
	"inventory":           {"ListBucketInventoryConfigurations", "", `<ListInventoryConfigurationsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated></ListInventoryConfigurationsResult>`},
	"lifecycle":           {"GetBucketLifecycleConfiguration", "NoSuchLifecycleConfiguration", ""},
	"logging":             {"GetBucketLogging", "", `<BucketLoggingStatus xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`},
	"metrics":             {"ListBucketMetricsConfigurations", "", `<ListMetricsConfigurationsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated></ListMetricsConfigurationsResult>`},
	"notification":        {"GetBucketNotificationConfiguration", "", `<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`},
	"ownershipControls":   {"GetBucketOwnershipControls", "OwnershipControlsNotFoundError", ""},
	"publicAccessBlock":   {"GetPublicAccessBlock", "NoSuchPublicAccessBlockConfiguration", ""},
	"replication":         {"GetBucketReplication", "ReplicationConfigurationNotFoundError", ""},
	"requestPayment":      {"GetBucketRequestPayment", "", `<RequestPaymentConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Payer>BucketOwner</Payer></RequestPaymentConfiguration>`},
	"website":             {"GetBucketWebsite", "NoSuchWebsiteConfiguration", ""},
	"versioning":          {"GetBucketVersioning", "", `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`},
}

// compatProxy stands in front of the S3 server for ACK only. It forwards every request; a GET
// of a bucket sub-resource the server does not implement (501, or RGW's 405) is answered as AWS answers a
// bucket that never configured it. AWS encrypts every bucket by default since 2023, so a
// missing encryption configuration is answered with AWS's default too. It counts every call by
// operation, and separately those it answered itself.
type compatProxy struct {
	target   *url.URL
	proxy    *httputil.ReverseProxy
	mu       sync.Mutex
	calls    counts
	answered counts
	server   *httptest.Server
}

func newCompatProxy(target string) (*compatProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &compatProxy{target: u, calls: counts{}, answered: counts{}}
	p.proxy = faults.NewReverseProxy(u)
	p.server = httptest.NewServer(p)
	return p, nil
}

func (p *compatProxy) close() { p.server.Close() }

func (p *compatProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := faults.S3Operation(r)
	sub := subresource(r)
	def, known := awsDefaults[sub]
	if known {
		// Name it as the SDK does; faults.S3Operation knows only the operator's sub-resources.
		op = def.get
		if r.Method != http.MethodGet {
			op = r.Method + " " + def.get // a write, which ACK makes only when a spec asks
		}
	}
	p.count(p.calls, op)
	if r.Method != http.MethodGet || !known {
		p.proxy.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	p.proxy.ServeHTTP(rec, r)
	// Ceph RGW answers 405 MethodNotAllowed for a sub-resource it has switched off (website).
	notImplemented := rec.Code == http.StatusNotImplemented || rec.Code == http.StatusMethodNotAllowed
	noEncryption := sub == "encryption" && rec.Code == http.StatusNotFound
	if !notImplemented && !noEncryption {
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	p.count(p.answered, op)
	w.Header().Set("Content-Type", "application/xml")
	if def.code != "" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>answered by the benchmark's compatibility proxy as AWS would</Message></Error>`, def.code)
		return
	}
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + def.body))
}

func (p *compatProxy) count(c counts, op string) {
	p.mu.Lock()
	c[op]++
	p.mu.Unlock()
}

func (p *compatProxy) snapshot() (calls, answered counts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.calls), maps.Clone(p.answered)
}

// subresource is the sub-resource of awsDefaults a bucket request names in its query ("cors",
// "lifecycle", ...), or "".
func subresource(r *http.Request) string {
	if strings.Contains(strings.Trim(r.URL.Path, "/"), "/") {
		return "" // an object
	}
	for k := range r.URL.Query() {
		if _, ok := awsDefaults[k]; ok {
			return k
		}
	}
	return ""
}

// ackRun is one run of ACK: its flags and the name it is reported under.
type ackRun struct {
	name  string
	flags []string
}

// runACK runs ACK's s3-controller through a burst and a deletion of n Buckets, in one account
// (the first Contract's: ACK has no notion of Contracts).
func runACK(ctx context.Context, s *servers, bin string, run ackRun, o options, accessKey, secretKey string) (*result, error) {
	kubeconfig, err := s.kubeconfig("ack")
	if err != nil {
		return nil, err
	}
	sts := stsStub()
	defer sts.Close()
	compat, err := newCompatProxy(s.stk.S3.Direct)
	if err != nil {
		return nil, err
	}
	defer compat.close()
	metricsPort, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := localenv.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--aws-region=" + s.stk.S3.Region,
		"--aws-endpoint-url=" + compat.server.URL,
		"--aws-identity-endpoint-url=" + sts.URL,
		"--allow-unsafe-aws-endpoint-urls",
		"--metrics-addr=" + hostPort(metricsPort),
		"--healthz-addr=" + hostPort(healthPort),
	}, run.flags...)
	// Credentials through the environment, never on a command line. ACK's HTTP client refuses a
	// custom CA bundle, so AWS_CA_BUNDLE must not be set (main unsets it).
	env := []string{"KUBECONFIG=" + kubeconfig, "AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey,
		"AWS_REGION=" + s.stk.S3.Region}
	logName := "ack-" + strings.ReplaceAll(strings.ToLower(run.name), " ", "-") + ".log"
	p, err := localenv.StartProcess("ack-s3-controller", filepath.Join(s.dir, logName), bin, args, env)
	if err != nil {
		return nil, err
	}
	defer func() { _ = p.Stop() }()
	proc := &process{proc: p, metricsURL: "http://" + hostPort(metricsPort) + "/metrics"}
	proc.watchMemory()
	if err := waitOK(ctx, p, "http://"+hostPort(healthPort)+"/readyz", time.Minute); err != nil {
		return nil, err
	}
	logf("ack           %s started (pid %d) with %v", run.name, p.PID(), run.flags)

	ns := "ack-" + strings.ReplaceAll(strings.ToLower(run.name), " ", "-")
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	t, err := newTracker(ctx, s.dyn, s.stk.EtcdURL, ackBucketGVR, ns, ackSyncedCondition)
	if err != nil {
		return nil, err
	}
	defer t.close()
	var objs []*unstructured.Unstructured
	var names []string
	for i := range o.n {
		name := fmt.Sprintf("b-%d", i)
		names = append(names, name)
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "s3.services.k8s.aws/v1alpha1", "kind": "Bucket",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"name": fmt.Sprintf("%s-b-%d", ns, i)},
		}})
	}
	res := &result{name: "ACK s3-controller " + run.name, n: o.n}
	calls := func() counts { c, _ := compat.snapshot(); return c }
	_, answered0 := compat.snapshot()
	if err := burst(ctx, s, calls, t, proc, objs, names, "POST buckets.s3.services.k8s.aws", o.ackDeadline(), res); err != nil {
		return nil, err
	}
	_, answered1 := compat.snapshot()
	answered := answered1.minus(answered0)
	logf("ack burst     %d of %d Ready in %s; S3 calls %.0f, of which the compatibility proxy answered %.0f",
		res.ready, o.n, res.burst.Round(10*time.Millisecond), res.s3.total(), answered.total())
	res.compat = answered
	if p.Exited() {
		return nil, fmt.Errorf("ACK exited during the burst: see %s", p.LogPath)
	}
	if err := deleteBurst(ctx, t, names, o.ackDeadline(), res); err != nil {
		return nil, err
	}
	logf("ack delete    %d of %d gone in %s", res.gone, o.n, res.delete.Round(10*time.Millisecond))
	res.rss, res.anon, res.file = proc.memory()
	if res.gone < o.n {
		// Let the namespace go without ACK: drop the finalizers of what is left.
		for _, name := range names {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			_, _ = s.dyn.Resource(ackBucketGVR).Namespace(ns).Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{})
		}
	}
	return res, nil
}

// installACKCRDs installs the CRDs ACK's s3-controller ships (its Bucket, and the common
// AdoptedResource and FieldExport), and the namespace it keeps its account map in.
func installACKCRDs(ctx context.Context, s *servers, moduleDir string) error {
	_, err := envtest.InstallCRDs(s.stk.Config, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(moduleDir, "config", "crd", "bases"), filepath.Join(moduleDir, "config", "crd", "common", "bases")},
		ErrorIfPathMissing: true,
	})
	if err != nil {
		return fmt.Errorf("installing ACK's CRDs: %w", err)
	}
	_, err = s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ack-system"}}, metav1.CreateOptions{})
	return err
}
