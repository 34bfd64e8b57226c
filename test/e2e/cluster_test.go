package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The cases below need the whole cluster osm-dev runs: kube-controller-manager (Deployments,
// Jobs, CronJobs, garbage collection, namespace deletion), kube-scheduler, and kwok's node,
// on which pods "run" and Job pods complete.

const (
	// appTimeout bounds an Application's pods becoming available.
	appTimeout = 2 * time.Minute
	// backupTimeout bounds the first run of a backup scheduled every minute: up to a minute
	// until it is due, then the Job's pod.
	backupTimeout = 3 * time.Minute
	// goneTimeout bounds garbage collection and a namespace's deletion.
	goneTimeout = 2 * time.Minute
)

// storageManifests are a Contract and a Bucket, both with the Delete policy, so nothing stays
// at the provider once they go.
func storageManifests(ns string) string {
	return fmt.Sprintf(`apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: owner
spec:
  plan: standard
  reclaimPolicy: Delete
---
apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: data
spec:
  bucketName: %s-data
  contractName: owner
  bucketReclaimPolicy: Delete
`, ns)
}

// applicationManifest is an Application linking Bucket data, with a backup every minute. The
// backup's own key is WriteOnly, so the command puts objects and never lists (kwok does not run
// it; it is what a user would write).
const applicationManifest = `apiVersion: paas.osm.dev/v1alpha1
kind: Application
metadata:
  name: web
spec:
  image: nginxinc/nginx-unprivileged:1.27-alpine
  port: 8080
  runAsUser: 101
  replicas: 2
  buckets:
  - name: data
  backup:
    bucket: data
    schedule: "* * * * *"
    command: ["sh", "-c", "aws s3 cp --recursive /data s3://$BACKUP_BUCKET/$BACKUP_SNAPSHOT_PREFIX"]
`

// childKinds are what an Application's objects make, all labelled with its name.
const childKinds = "deployments,replicasets,pods,services,cronjobs,jobs,bucketaccesses"

// newNamespace creates a namespace for one test and deletes it when the test ends.
func newNamespace(t *testing.T, env *Env, prefix string) *kubectl {
	t.Helper()
	ns := fmt.Sprintf("e2e-%s-%s", prefix, randomSuffix())
	global := &kubectl{env: env, logf: t.Logf}
	if _, err := global.must(quick, "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	k := &kubectl{env: env, namespace: ns, logf: t.Logf}
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := k.must(quick, "get", "applications,contracts,buckets", "-o", "jsonpath="+statusTemplate); err == nil {
				t.Logf("%s", out)
			}
			if out, err := k.must(quick, "get", "events", "--sort-by=.lastTimestamp"); err == nil {
				t.Logf("%s", out)
			}
		}
		if _, err := global.must(quick, "delete", "namespace", ns, "--ignore-not-found", "--wait=false"); err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		if _, err := global.must(goneTimeout+kubectlSlack, "wait", "--for=delete", "namespace/"+ns, "--timeout="+goneTimeout.String()); err != nil &&
			!strings.Contains(err.Error(), "NotFound") {
			left, _ := k.must(quick, "get", "applications,contracts,buckets,bucketaccesses", "-o", "jsonpath="+statusTemplate)
			t.Errorf("cleanup: %v; what holds the namespace:\n%s", err, left)
		}
	})
	return k
}

func applyText(t *testing.T, k *kubectl, manifests string) {
	t.Helper()
	if r := k.run(quick, []byte(manifests), "apply", "-f", "-"); r.Err != nil {
		t.Fatal(r.Err)
	}
}

func waitFor(t *testing.T, k *kubectl, timeout time.Duration, cond string, resources ...string) {
	t.Helper()
	for _, res := range resources {
		if _, err := k.must(timeout+kubectlSlack, "wait", res, "--for="+cond, "--timeout="+timeout.String()); err != nil {
			t.Fatalf("%v%s", err, (&caseRun{k: k}).conditions(res))
		}
	}
}

// pollJSONPath polls `kubectl get res -o jsonpath=path` until it prints something, and returns it.
func pollJSONPath(t *testing.T, k *kubectl, res, path string, timeout time.Duration) string {
	t.Helper()
	quiet := &kubectl{env: k.env, namespace: k.namespace}
	t.Logf("$ kubectl -n %s get %s -o jsonpath=%s   (until it prints something)", k.namespace, res, path)
	deadline := time.Now().Add(timeout)
	for {
		out, err := quiet.must(quick, "get", res, "-o", "jsonpath="+path)
		if err == nil && out != "" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s still empty after %s (last error: %v)%s", res, path, timeout, err, (&caseRun{k: k}).conditions(res))
		}
		time.Sleep(time.Second)
	}
}

// TestApplicationInTheCluster follows an Application as a cluster runs it: Ready once its
// Deployment's pods are available, its backup times from the Jobs its CronJob starts, and its
// children garbage-collected when it goes.
func TestApplicationInTheCluster(t *testing.T) {
	t.Parallel()
	env := requireEnv(t)
	k := newNamespace(t, env, "app")
	applyText(t, k, storageManifests(k.namespace))
	waitFor(t, k, defaultWaitTimeout, "condition=Ready", "contract/owner", "bucket/data")
	start := time.Now()
	applyText(t, k, applicationManifest)

	waitFor(t, k, appTimeout, "condition=Ready", "application/web")
	t.Logf("Application Ready %.0fs after it was applied", time.Since(start).Seconds())
	// The pods read the keys of the link's BucketAccess, never the Contract's.
	if got, err := k.must(quick, "get", "deployment/web", "-o",
		`jsonpath={range .spec.template.spec.containers[*].env[*]}{.valueFrom.secretKeyRef.name} {end}`); err != nil ||
		strings.Join(strings.Fields(got), " ") != "web-data-credentials web-data-credentials" {
		t.Errorf("deployment web reads Secrets %q (%v), want web-data-credentials twice (the BucketAccess web-data's)", got, err)
	}
	if got, err := k.must(quick, "get", "bucketaccess", "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.spec.access}:{.status.conditions[?(@.type=="Ready")].status} {end}`); err != nil ||
		strings.Join(strings.Fields(got), " ") != "web-backup=WriteOnly:True web-data=ReadWrite:True web-data-read=ReadOnly:True web-restore=ReadOnly:True" {
		t.Errorf("BucketAccesses %q (%v), want web-backup WriteOnly, web-data ReadWrite, web-data-read ReadOnly (the backup's read of the data), web-restore ReadOnly, all Ready", got, err)
	}
	if got, err := k.must(quick, "get", "deployment/web", "-o", "jsonpath={.status.availableReplicas}"); err != nil || got != "2" {
		t.Errorf("deployment web: availableReplicas %q (%v), want 2", got, err)
	}
	nodes, err := k.must(quick, "get", "pods", "-l", "app.kubernetes.io/instance=web,app.kubernetes.io/component=app",
		"-o", `jsonpath={range .items[*]}{.spec.nodeName}/{.status.phase} {end}`)
	if err != nil || strings.TrimSpace(nodes) != "osm-dev-node/Running osm-dev-node/Running" {
		t.Errorf("the application's pods: %q (%v), want two Running on osm-dev-node", nodes, err)
	}

	success := pollJSONPath(t, k, "application/web", "{.status.lastSuccessfulBackupTime}", backupTimeout)
	scheduled := pollJSONPath(t, k, "application/web", "{.status.lastBackupTime}", quick)
	t.Logf("backup scheduled at %s, succeeded at %s (%.0fs after the Application was applied)", scheduled, success, time.Since(start).Seconds())
	s, err1 := time.Parse(time.RFC3339, scheduled)
	d, err2 := time.Parse(time.RFC3339, success)
	if err1 != nil || err2 != nil || d.Before(s) {
		t.Errorf("lastBackupTime %q, lastSuccessfulBackupTime %q: want two times, the success not before the run", scheduled, success)
	}
	if got, err := k.must(quick, "get", "jobs", "-l", "app.kubernetes.io/instance=web",
		"-o", `jsonpath={.items[0].status.conditions[?(@.type=="Complete")].status}`); err != nil || got != "True" {
		t.Errorf("the backup Job: Complete=%q (%v), want True", got, err)
	}

	if _, err := k.must(quick, "delete", "application/web", "--wait=false"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, k, childKinds, "app.kubernetes.io/instance=web", goneTimeout)
}

// waitGone waits until nothing of the kinds carries the label selector.
func waitGone(t *testing.T, k *kubectl, kinds, selector string, timeout time.Duration) {
	t.Helper()
	quiet := &kubectl{env: k.env, namespace: k.namespace}
	t.Logf("$ kubectl -n %s get %s -l %s -o name   (until it prints nothing)", k.namespace, kinds, selector)
	deadline := time.Now().Add(timeout)
	for {
		out, err := quiet.must(quick, "get", kinds, "-l", selector, "-o", "name")
		if err == nil && strings.TrimSpace(out) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still there: %s (%v)", timeout, strings.Join(strings.Fields(out), " "), err)
		}
		time.Sleep(time.Second)
	}
}
