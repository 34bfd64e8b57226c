package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// realApplication is config/samples/ on the real node, as a person tries it after make dev: the
// Application's pods run osm-demo for real and serve an object of their linked Bucket; a backup
// Job made from the CronJob runs osm-backup and writes a snapshot with the backup's WriteOnly key;
// a restore Job brings back the same bytes; a rotation of the link's key rolls the pods onto the
// new key, as docs/application.md says.
func realApplication(t *testing.T, d *osmDev, env *Env) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	k := &kubectl{env: env, namespace: "demo", logf: t.Logf}
	if r := k.run(time.Minute, nil, "apply", "-f", filepath.Join(root, "config", "samples")); r.Err != nil {
		t.Fatal(r.Err)
	}
	waitFor(t, k, 3*time.Minute, "condition=Ready", "contract/demo", "bucket/photos", "application/photos")

	// The pods run osm-demo's container, and say so.
	pods, err := k.must(quick, "get", "pods", "-l", "app.kubernetes.io/instance=photos,app.kubernetes.io/component=app", "-o",
		`jsonpath={range .items[*]}{.status.podIP} {.status.containerStatuses[0].image} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].state.running.startedAt}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(pods), "\n")
	if len(lines) != 2 {
		t.Fatalf("the Application's pods: %q, want its 2 replicas", pods)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 4 || f[1] != "osm.dev/demo:dev" || !strings.HasPrefix(f[2], "containerd://") {
			t.Errorf("pod %q: want an address, image osm.dev/demo:dev and a running containerd container", l)
		}
	}
	podIP := strings.Fields(lines[0])[0]

	// An object put with the account's keys, from this machine, as a person would...
	account := accountClient(t, k, "demo")
	cat := []byte("a cat, " + randomSuffix() + "\n")
	catETag := putObject(t, account, "demo-photos", "originals/cat.txt", cat)

	// ...is what the app serves, at its pod and through its Service, reached through the node's
	// proxy from this machine.
	proxy, _ := url.Parse("http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(d.ports["node-proxy-port"])))
	web := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	clusterIP, err := k.must(quick, "get", "service", "photos", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{podIP, clusterIP} {
		servedWithin(t, web, fmt.Sprintf("http://%s:8080/originals/cat.txt", host), string(cat), 30*time.Second)
	}

	// A backup run, made from the CronJob as `kubectl create job --from` makes it.
	if _, err := k.must(quick, "create", "job", "photos-backup-e2e", "--from=cronjob/photos-backup"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, k, 3*time.Minute, "condition=Complete", "job/photos-backup-e2e")
	snapshotKey := "photos/photos-backup-e2e/originals/cat.txt"
	if got := headETag(t, account, "demo-photos", snapshotKey); got != catETag {
		t.Errorf("snapshot %s: ETag %s, want the original's %s", snapshotKey, got, catETag)
	}

	// The original goes; a restore of the snapshot brings back the same bytes.
	if _, err := account.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String("demo-photos"), Key: aws.String("originals/cat.txt")}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.must(quick, "annotate", "application/photos", "paas.osm.dev/restore=photos-backup-e2e"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, k, 3*time.Minute, "jsonpath={.status.restore.phase}=Succeeded", "application/photos")
	if got := headETag(t, account, "demo-photos", "originals/cat.txt"); got != catETag {
		t.Errorf("restored originals/cat.txt: ETag %s, want %s", got, catETag)
	}

	// A new key for the link: the Deployment rolls its pods onto it, and they serve with it.
	// The app's pods that run and are not being deleted.
	appPods := func() []string {
		out, err := k.must(quick, "get", "pods", "-l", "app.kubernetes.io/instance=photos,app.kubernetes.io/component=app",
			"--field-selector=status.phase=Running", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) == 1 {
				names = append(names, f[0])
			}
		}
		return names
	}
	oldPods := appPods()
	before, err := k.must(quick, "get", "bucketaccess", "photos-photos", "-o", "jsonpath={.status.accessKeyID}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.must(quick, "annotate", "bucketaccess", "photos-photos", "storage.osm.dev/rotate-key=e2e"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, k, 3*time.Minute, "condition=KeyRotation", "bucketaccess/photos-photos")
	after, err := k.must(quick, "get", "bucketaccess", "photos-photos", "-o", "jsonpath={.status.accessKeyID}")
	if err != nil || after == before {
		t.Fatalf("the link's key after its rotation: %q (%v), was %q", after, err, before)
	}
	if _, err := k.must(3*time.Minute+kubectlSlack, "rollout", "status", "deployment/photos", "--timeout=3m"); err != nil {
		t.Fatal(err)
	}
	for _, p := range appPods() {
		if slices.Contains(oldPods, p) {
			t.Errorf("pod %s started before the rotation still runs: the pods keep the old key", p)
		}
	}
	// kube-proxy follows the Service's endpoints within a few seconds of the rollout.
	servedWithin(t, web, fmt.Sprintf("http://%s:8080/originals/cat.txt", clusterIP), string(cat), 30*time.Second)
}

// accountClient is an S3 client with the keys of the Contract's Secret. Never log them.
func accountClient(t *testing.T, k *kubectl, contract string) *s3.Client {
	t.Helper()
	r := &caseRun{k: k}
	data, err := r.secretData(contract)
	if err != nil {
		t.Fatal(err)
	}
	return localenv.NewS3Client(data["AWS_ENDPOINT_URL"], data["AWS_REGION"], data["AWS_ACCESS_KEY_ID"], data["AWS_SECRET_ACCESS_KEY"])
}

func putObject(t *testing.T, c *s3.Client, bucket, key string, body []byte) string {
	t.Helper()
	out, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(string(body))})
	if err != nil {
		t.Fatalf("putting s3://%s/%s: %v", bucket, key, err)
	}
	return aws.ToString(out.ETag)
}

func headETag(t *testing.T, c *s3.Client, bucket, key string) string {
	t.Helper()
	out, err := c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Errorf("s3://%s/%s: %v", bucket, key, err)
		return ""
	}
	return aws.ToString(out.ETag)
}

// servedWithin asks for u until the answer is 200 with want, for at most timeout.
func servedWithin(t *testing.T, c *http.Client, u, want string, timeout time.Duration) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(timeout); ; time.Sleep(time.Second) {
		resp, err := c.Get(u)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == want {
				return
			}
			last = fmt.Sprintf("%s %q", resp.Status, body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Errorf("GET %s: %s for %s, want 200 %q", u, last, timeout, want)
			return
		}
	}
}
