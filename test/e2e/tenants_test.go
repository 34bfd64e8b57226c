package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// tarPitBuckets is how many Buckets the tar-pit tenant makes: more than the manager's 32 workers.
const tarPitBuckets = 40

// delaySamples is how many Buckets of another namespace are timed, idle and under attack.
const delaySamples = 3

// maxExtraDelay is how much longer another namespace's Bucket may take to be Ready while a
// tenant's server is a tar pit (issue 47).
const maxExtraDelay = 2 * time.Second

// attacks is what the hostile-tenant suite found: each attack tried, and what got past.
type attacks struct {
	tried   []string
	reached []string // reached another tenant or the cluster network
}

func (a *attacks) try(name string) { a.tried = append(a.tried, name) }

func (a *attacks) got(t *testing.T, format string, args ...any) {
	t.Helper()
	a.reached = append(a.reached, fmt.Sprintf(format, args...))
	t.Errorf(format, args...)
}

// TestTenants is the hostile-tenant suite (issue 47; `make test-tenants`). A tenant, who may
// write the operator's kinds and Secrets in its own namespace, tries each way it had of reaching
// past its own account: the manager calling into the cluster's network for it (a redirect, an
// endpoint in a Secret, a port scan, a notification to a metadata service), answers that take
// the manager down (huge, empty), a server that holds every worker (a tar pit), a bucket that is
// someone else's (COSI's), label values that grow the metrics for ever, and contracts that
// outlive the quota. Its S3 server is one the platform allowed, which then turned hostile. One
// line says what came of it:
//
//	tenants: 11 attacks tried: 0 reached another tenant or the cluster network, 0 crashed the manager, max delay to another namespace's Bucket 0.9 s (idle 0.8 s)
func TestTenants(t *testing.T) {
	env := requireEnv(t)
	if hostileAddr == "" || dev == nil {
		t.Fatalf("the environment was not started by this suite (%s is set), so its hostile server is not on osm-dev's --allowed-endpoints", envFileVar)
	}
	h, err := startHostileS3(hostileAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()
	pid := managerPID(t)
	var a attacks

	t.Run("endpoints-not-allowed", func(t *testing.T) { endpointsNotAllowed(t, env, &a, h) })
	t.Run("redirector", func(t *testing.T) { redirector(t, env, &a, h) })
	t.Run("huge-answer", func(t *testing.T) { hugeAnswerAttack(t, env, &a, h) })
	t.Run("empty-answer", func(t *testing.T) { emptyAnswer(t, env, &a, h) })
	t.Run("adopt-cosi-bucket", func(t *testing.T) { adoptCOSIBucket(t, env, &a) })
	t.Run("metrics-churn", func(t *testing.T) { metricsChurn(t, env, &a) })
	t.Run("topic-repoint", func(t *testing.T) { topicRepoint(t, &a) })
	var idle, loaded time.Duration
	t.Run("tar-pit", func(t *testing.T) { idle, loaded = tarPit(t, env, &a, h) })
	t.Run("quota-bypass", func(t *testing.T) { a.try("quota bypass"); quotaBypass(t, env) })

	crashed := 0
	if now := managerPID(t); now != pid {
		crashed = 1
		t.Errorf("the manager was restarted (pid %d, then %d): a tenant crashed it", pid, now)
	}
	line := fmt.Sprintf("tenants: %d attacks tried: %d reached another tenant or the cluster network, %d crashed the manager, "+
		"max delay to another namespace's Bucket %.1f s (idle %.1f s); the manager's peak RSS %d MiB",
		len(a.tried), len(a.reached), crashed, loaded.Seconds(), idle.Seconds(), peakRSS(t, pid)>>20)
	fmt.Println(line)
	t.Log(line)
}

// tenantRole is what a platform team gives a tenant namespace: every verb on the storage kinds
// and on Secrets, but not the costly ones (abandon, retain), bound to user <namespace>-dev.
const tenantRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: tenant
rules:
- apiGroups: [storage.osm.dev]
  resources: [contracts, buckets, bucketaccesses]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: tenant
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: tenant}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: tenant}
`

// tenantNamespace is a namespace with the tenant's role; its kubectl acts as the tenant.
func tenantNamespace(t *testing.T, env *Env, prefix string) *kubectl {
	t.Helper()
	admin := newNamespace(t, env, prefix)
	applyText(t, admin, tenantRole)
	return admin
}

// asTenant runs kubectl in k's namespace as the tenant, with stdin.
func asTenant(k *kubectl, stdin string, args ...string) kubectlResult {
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	return k.run(quick, in, append([]string{"--as=tenant"}, args...)...)
}

// ownAccount is the tenant's Secret and Contract for an account it brings, at endpoint, signed
// with key.
func ownAccount(name, endpoint, key string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: %[1]s-keys
stringData:
  AWS_ACCESS_KEY_ID: %[3]s
  AWS_SECRET_ACCESS_KEY: not-a-secret
  AWS_ENDPOINT_URL: %[2]s
---
apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: %[1]s
spec:
  credentials:
    secretName: %[1]s-keys
    forcePathStyle: true
`, name, endpoint, key)
}

// observeBucket is an Observe Bucket of contract over bucket: it reads, and shows in status.
func observeBucket(name, contract, bucket string) string {
	return fmt.Sprintf(`apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: %s
spec:
  contractName: %s
  bucketName: %s
  managementPolicy: Observe
`, name, contract, bucket)
}

// readyReason waits until res's Ready condition has reason, and returns its message.
func readyReason(t *testing.T, k *kubectl, res, reason string) string {
	t.Helper()
	deadline := time.Now().Add(defaultWaitTimeout)
	for {
		got, _ := k.must(quick, "get", res, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)
		if got == reason {
			msg, _ := k.must(quick, "get", res, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`)
			return msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Ready's reason is %q after %s, want %s%s", res, got, defaultWaitTimeout, reason, (&caseRun{k: k}).conditions(res))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// endpointsNotAllowed: the tenant names endpoints in the cluster's network (a metadata service,
// the API server's port, a closed port), in the spec and in a Secret, and as a notification
// receiver. Nothing is called, and the answer is the same whether something listens there or not.
func endpointsNotAllowed(t *testing.T, env *Env, a *attacks, h *hostileS3) {
	k := tenantNamespace(t, env, "scan")
	a.try("an endpoint in the cluster network, in the spec")
	r := asTenant(k, fmt.Sprintf(`apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: metadata
spec:
  credentials:
    secretName: metadata-keys
    endpoint: %s/latest/meta-data
`, h.internal.URL), "create", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Err.Error(), "spec.credentials.endpoint: Forbidden") {
		a.got(t, "a Contract naming a metadata service was admitted: %v", r.Err)
	}

	a.try("a port scan through a Secret's AWS_ENDPOINT_URL")
	open := env.APIServer // the API server listens there
	closedURL := "http://127.0.0.1:1"
	for name, endpoint := range map[string]string{"open": open, "closed": closedURL} {
		if r := asTenant(k, ownAccount(name, endpoint, "SCAN"), "apply", "-f", "-"); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	openMsg := readyReason(t, k, "contract/open", storagev1alpha1.ReasonEndpointNotAllowed)
	closedMsg := readyReason(t, k, "contract/closed", storagev1alpha1.ReasonEndpointNotAllowed)
	if strings.ReplaceAll(openMsg, open, "X") != strings.ReplaceAll(closedMsg, closedURL, "X") {
		a.got(t, "an open port and a closed one read differently:\n%s\n%s", openMsg, closedMsg)
	}

	a.try("a notification to a metadata service")
	r = asTenant(k, `apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: tell
spec:
  contractName: open
  bucketName: tell
  notifications:
  - name: all
    endpoint: http://169.254.169.254/latest/api/token
    events: ["s3:ObjectCreated:*"]
`, "create", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Err.Error(), "spec.notifications[0].endpoint: Forbidden") {
		a.got(t, "a notification to a metadata service was admitted: %v", r.Err)
	}
	if n := h.internalHits.Load(); n > 0 {
		a.got(t, "the cluster-network service was called %d times", n)
	}
}

// redirector: the tenant's allowed server answers ?policy with a redirect into the cluster's
// network, whose answer the tenant wants to read in the Bucket's status.policy.
func redirector(t *testing.T, env *Env, a *attacks, h *hostileS3) {
	a.try("a redirect into the cluster network")
	k := tenantNamespace(t, env, "redirect")
	if r := asTenant(k, ownAccount("own", h.URL, keyRedirect)+"---\n"+observeBucket("peek", "own", "anything"), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	waitFor(t, k, defaultWaitTimeout, "condition=Ready", "contract/own")
	msg := readyReason(t, k, "bucket/peek", storagev1alpha1.ReasonAnswerRefused)
	if !strings.Contains(msg, "redirected to another host") {
		t.Errorf("AnswerRefused does not say why: %s", msg)
	}
	policy, _ := k.must(quick, "get", "bucket/peek", "-o", "jsonpath={.status.policy}")
	if n := h.internalHits.Load(); n > 0 || policy != "" {
		a.got(t, "the redirect was followed (%d calls inside) or status shows a policy: %q", n, policy)
	}
}

// hugeAnswerAttack: a 64 MiB policy, which an Observe Bucket read whole and kept in status.
func hugeAnswerAttack(t *testing.T, env *Env, a *attacks, h *hostileS3) {
	a.try("a 64 MiB answer")
	k := tenantNamespace(t, env, "huge")
	if r := asTenant(k, ownAccount("own", h.URL, keyHuge)+"---\n"+observeBucket("big", "own", "anything"), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	msg := readyReason(t, k, "bucket/big", storagev1alpha1.ReasonAnswerRefused)
	if !strings.Contains(msg, "longer than the 131072 bytes read of it") {
		t.Errorf("AnswerRefused does not say why: %s", msg)
	}
	t.Logf("the hostile server got %d KiB of its %d MiB policy out before the manager stopped reading", h.hugeSent.Load()>>10, hugeAnswer>>20)
	if sent := h.hugeSent.Load(); sent >= hugeAnswer {
		a.got(t, "the manager read the whole %d-byte answer", sent)
	}
}

// emptyAnswer: a 200 with nothing in it used to pass a Contract's check of its keys.
func emptyAnswer(t *testing.T, env *Env, a *attacks, h *hostileS3) {
	a.try("an empty 200 for every call")
	k := tenantNamespace(t, env, "empty")
	if r := asTenant(k, ownAccount("own", h.URL, keyEmpty), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	msg := readyReason(t, k, "contract/own", storagev1alpha1.ReasonAnswerRefused)
	if !strings.Contains(msg, "names no owner") {
		t.Errorf("AnswerRefused does not say why: %s", msg)
	}
}

// boughtContract is a Contract that buys an account, and its keys once Ready.
func boughtContract(t *testing.T, k *kubectl, name string) *s3.Client {
	t.Helper()
	applyText(t, k, fmt.Sprintf("apiVersion: storage.osm.dev/v1alpha1\nkind: Contract\nmetadata:\n  name: %s\nspec:\n  plan: standard\n", name))
	waitFor(t, k, defaultWaitTimeout, "condition=Ready", "contract/"+name)
	creds, err := (&caseRun{t: t, k: k}).secretData(name)
	if err != nil {
		t.Fatal(err)
	}
	return localenv.NewS3Client(creds["AWS_ENDPOINT_URL"], creds["AWS_REGION"], creds["AWS_ACCESS_KEY_ID"], creds["AWS_SECRET_ACCESS_KEY"])
}

// adoptCOSIBucket: a bucket the COSI driver made in the account (its grants to other
// namespaces' keys would be in its policy, which an adoption rebuilds from the tenant's spec);
// the tenant adopts it.
func adoptCOSIBucket(t *testing.T, env *Env, a *attacks) {
	a.try("an adopt of a COSI bucket")
	k := tenantNamespace(t, env, "cosi")
	s3c := boughtContract(t, k, "shared")
	ctx, cancel := context.WithTimeout(context.Background(), quick)
	defer cancel()
	name := k.namespace + "-cosi"
	tag := types.Tag{Key: aws.String(storagev1alpha1.COSIBucketTag), Value: aws.String("ba-other-namespace")}
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	// Before the namespace goes: an account that still owns a bucket is never cancelled, so its
	// Contract would wait for ever. The Bucket goes first: once the COSI bucket is gone, its
	// next pass would make the bucket it names, and keep it (bucketReclaimPolicy Retain).
	t.Cleanup(func() {
		if r := k.run(quick, nil, "delete", "bucket/taken", "--ignore-not-found"); r.Err != nil {
			t.Errorf("deleting Bucket taken: %v", r.Err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), quick)
		defer cancel()
		if _, err := s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Errorf("deleting the COSI bucket: %v", err)
		}
	})
	if _, err := s3c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(name), Tagging: &types.Tagging{TagSet: []types.Tag{tag}}}); err != nil {
		t.Fatal(err)
	}
	if r := asTenant(k, fmt.Sprintf(`apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: taken
spec:
  contractName: shared
  bucketName: %s
  adopt: true
  policy: {"Version":"2012-10-17","Statement":[{"Sid":"mine","Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/*"}]}
`, name, name), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	msg := readyReason(t, k, "bucket/taken", storagev1alpha1.ReasonBucketAlreadyExists)
	if !strings.Contains(msg, storagev1alpha1.COSIBucketTag) {
		t.Errorf("the refusal does not name the COSI tag: %s", msg)
	}
	if policy, err := s3c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(name)}); err == nil {
		a.got(t, "the tenant's policy was put on the COSI bucket: %s", aws.ToString(policy.Policy))
	}
	tags, err := s3c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
	if err != nil || len(tags.TagSet) != 1 {
		a.got(t, "the COSI bucket's tags were changed: %v %v", tags, err)
	}
}

// metricsChurn: Buckets and BucketAccesses made and deleted, twice, under new names each time.
// No series may carry a value the tenant chose, and the second round adds no series.
func metricsChurn(t *testing.T, env *Env, a *attacks) {
	a.try("a churn of metric label values")
	k := tenantNamespace(t, env, "churn")
	boughtContract(t, k, "churn")
	token := adminToken(t, env.Kubeconfig)
	var counts [2]int
	var names []string
	for round := range 2 {
		var manifests strings.Builder
		for i := range 8 {
			name := fmt.Sprintf("r%d-b%d-%s", round, i, randomSuffix())
			names = append(names, name)
			fmt.Fprintf(&manifests, "---\napiVersion: storage.osm.dev/v1alpha1\nkind: Bucket\nmetadata:\n  name: %[1]s\nspec:\n  contractName: churn\n  bucketName: %[2]s-%[1]s\n  bucketReclaimPolicy: Delete\n", name, k.namespace)
			if i < 3 {
				fmt.Fprintf(&manifests, "---\napiVersion: storage.osm.dev/v1alpha1\nkind: BucketAccess\nmetadata:\n  name: %[1]s-key\nspec:\n  bucket: %[1]s\n  access: ReadOnly\n", name)
			}
		}
		if r := asTenant(k, manifests.String(), "apply", "-f", "-"); r.Err != nil {
			t.Fatal(r.Err)
		}
		if _, err := k.must(defaultWaitTimeout+kubectlSlack, "wait", "bucketaccesses", "--all", "--for=condition=Ready", "--timeout="+defaultWaitTimeout.String()); err != nil {
			t.Fatal(err)
		}
		if _, err := k.must(goneTimeout+kubectlSlack, "delete", "bucketaccesses,buckets", "--all", "--timeout="+goneTimeout.String()); err != nil {
			t.Fatal(err)
		}
		series := scrape(t, env.ManagerMetrics, token)
		counts[round] = len(series)
		for _, s := range series {
			for _, n := range append(names, k.namespace) {
				if strings.Contains(s, n) {
					a.got(t, "a metric series carries a value the tenant chose (%s): %s", n, s)
				}
			}
		}
	}
	t.Logf("series after each round: %v", counts)
	if counts[1] > counts[0]+5 {
		a.got(t, "the second round of churn added %d series", counts[1]-counts[0])
	}
}

// topicRepoint: with its own account keys, a tenant lists, repoints, deletes and attaches another
// contract's notification topic at Ceph RGW 16.2, where RGW checks no permission on topics of one
// RGW tenant. Notifications are RGW's (this suite's S3 server, versitygw, has none), and the
// attack is one the contract server's RGW test makes, on a Ceph of its own, against contracts
// the server sells (each now an RGW tenant of its own): it is run here as it stands, so the two
// never drift apart.
func topicRepoint(t *testing.T, a *attacks) {
	a.try("a repoint of another contract's topic (Ceph RGW)")
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestRGWTopicsAcrossContracts$/^in_a_tenant_of_its_own", "-v", "./internal/contractserver/")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		a.got(t, "another contract's keys reached its topic: %v\n%s", err, out)
		return
	}
	if !strings.Contains(string(out), "--- PASS: TestRGWTopicsAcrossContracts/in_a_tenant_of_its_own") {
		t.Fatalf("the RGW topic test did not run:\n%s", out)
	}
}

// scrape returns the series /metrics serves, one per line.
func scrape(t *testing.T, url, token string) []string {
	t.Helper()
	resp := metricsResponse(t, url, token)
	defer func() { _ = resp.Body.Close() }()
	var series []string
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<20))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			series = append(series, line)
		}
	}
	return series
}

// tarPit: the tenant's allowed server accepts connections and never answers, under more Buckets
// than the manager has workers. Another namespace's Buckets, timed from `kubectl apply` to
// Ready, must take at most maxExtraDelay longer than when the manager is idle.
func tarPit(t *testing.T, env *Env, a *attacks, h *hostileS3) (idle, loaded time.Duration) {
	a.try("a tar pit under more Buckets than the manager has workers")
	victim := newNamespace(t, env, "victim")
	boughtContract(t, victim, "v")
	timeBucket := func(name string) time.Duration {
		start := time.Now()
		applyText(t, victim, fmt.Sprintf("apiVersion: storage.osm.dev/v1alpha1\nkind: Bucket\nmetadata:\n  name: %[1]s\nspec:\n  contractName: v\n  bucketName: %[2]s-%[1]s\n  bucketReclaimPolicy: Delete\n", name, victim.namespace))
		waitFor(t, victim, defaultWaitTimeout, "condition=Ready", "bucket/"+name)
		return time.Since(start)
	}
	for i := range delaySamples {
		idle = max(idle, timeBucket(fmt.Sprintf("idle-%d", i)))
	}

	pit := tenantNamespace(t, env, "tarpit")
	t.Cleanup(h.release) // before the namespace goes: its deletions must get answers
	if r := asTenant(pit, ownAccount("own", h.URL, keyTarPit), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	waitFor(t, pit, defaultWaitTimeout, "condition=Ready", "contract/own")
	var manifests strings.Builder
	for i := range tarPitBuckets {
		fmt.Fprintf(&manifests, "---\napiVersion: storage.osm.dev/v1alpha1\nkind: Bucket\nmetadata:\n  name: pit-%[1]d\nspec:\n  contractName: own\n  bucketName: pit-%[1]d\n", i)
	}
	if r := asTenant(pit, manifests.String(), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
	// Until the pit holds as many workers as it will get.
	deadline := time.Now().Add(quick)
	for h.callsWith(keyTarPit) < int64(tarPitBuckets/8) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	held := h.callsWith(keyTarPit)
	for i := range delaySamples {
		loaded = max(loaded, timeBucket(fmt.Sprintf("loaded-%d", i)))
	}
	t.Logf("idle: %s; with %d calls hanging in the tar pit: %s", idle, held, loaded)
	if loaded > idle+maxExtraDelay {
		a.got(t, "another namespace's Bucket took %s to be Ready beside the tar pit, %s idle: more than %s longer", loaded, idle, maxExtraDelay)
	}
	return idle, loaded
}

// managerPID is the pid of the manager osm-dev runs (its binary is <state-dir>/bin/manager).
func managerPID(t *testing.T) int {
	t.Helper()
	bin := filepath.Join(dev.stateDir, "bin", "manager")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmdline), bin+"\x00") {
			return pid
		}
	}
	t.Fatalf("no process runs %s", bin)
	return 0
}

var vmHWM = regexp.MustCompile(`VmHWM:\s+(\d+) kB`)

// peakRSS is the most memory process pid has held, in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	m := vmHWM.FindSubmatch(status)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}
