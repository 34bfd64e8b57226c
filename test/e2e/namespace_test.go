package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// TestNamespaceDeletion deletes a namespace holding a Contract, two Buckets and an Application,
// all with the Delete policy, as a user would with `kubectl delete namespace`: the namespace
// controller deletes everything at once, and the finalizers keep the order (Application, then
// its BucketAccesses, then Buckets, then the Contract and its Secret) so that nothing is left at
// the provider.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	env := requireEnv(t)
	k := newNamespace(t, env, "nsdel")
	ns := k.namespace
	applyText(t, k, storageManifests(ns)+fmt.Sprintf(`---
apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: logs
spec:
  bucketName: %s-logs
  contractName: owner
  bucketReclaimPolicy: Delete
`, ns))
	waitFor(t, k, defaultWaitTimeout, "condition=Ready", "contract/owner", "bucket/data", "bucket/logs")
	applyText(t, k, applicationManifest)
	waitFor(t, k, appTimeout, "condition=Ready", "application/web")
	contractID, err := k.must(quick, "get", "contract/owner", "-o", "jsonpath={.status.contractID}")
	if err != nil || contractID == "" {
		t.Fatalf("contract owner: no status.contractID (%v)", err)
	}
	buckets := []string{ns + "-data", ns + "-logs"}

	// The buckets are looked up with another account's keys, which stay valid: the deleted
	// Contract's keys go with its account.
	witness := newNamespace(t, env, "witness")
	applyText(t, witness, "apiVersion: storage.osm.dev/v1alpha1\nkind: Contract\nmetadata:\n  name: witness\nspec:\n  plan: standard\n  reclaimPolicy: Delete\n")
	waitFor(t, witness, defaultWaitTimeout, "condition=Ready", "contract/witness")
	creds, err := (&caseRun{t: t, k: witness}).secretData("witness")
	if err != nil {
		t.Fatal(err)
	}
	s3c := localenv.NewS3Client(creds["AWS_ENDPOINT_URL"], creds["AWS_REGION"], creds["AWS_ACCESS_KEY_ID"], creds["AWS_SECRET_ACCESS_KEY"])
	for _, b := range buckets {
		if status := headBucket(s3c, b); status != http.StatusForbidden {
			t.Fatalf("bucket %s before the deletion: HeadBucket with another account's keys answered %d, want 403 (it exists)", b, status)
		}
	}

	// Listed in the reverse of the order they must go, since kubectl lists the kinds one after
	// another: an object that must go later is looked for first, so one poll can never see it
	// gone and, a moment later, still see what it had to wait for.
	const kinds = "contracts,secrets,buckets,bucketaccesses,applications"
	before, err := k.must(quick, "get", kinds, "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	global := &kubectl{env: env, logf: t.Logf}
	start := time.Now()
	if _, err := global.must(quick, "delete", "namespace", ns, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	order := watchDisappear(t, k, kinds, strings.Fields(before), goneTimeout)
	if _, err := global.must(goneTimeout+kubectlSlack, "wait", "--for=delete", "namespace/"+ns, "--timeout="+goneTimeout.String()); err != nil {
		t.Fatal(err)
	}
	t.Logf("namespace %s deleted in %.0fs; objects gone, in order: %v", ns, time.Since(start).Seconds(), order)

	// Each object's place in order is the poll that first found it gone.
	for _, name := range []string{"application.paas.osm.dev/web", "bucket.storage.osm.dev/data", "bucket.storage.osm.dev/logs",
		"contract.storage.osm.dev/owner", "secret/owner-credentials"} {
		if _, ok := order[name]; !ok {
			t.Fatalf("%s was not there before the deletion: %v", name, strings.Fields(before))
		}
	}
	app := order["application.paas.osm.dev/web"]
	contract := order["contract.storage.osm.dev/owner"]
	secret := order["secret/owner-credentials"]
	accesses := []string{"bucketaccess.storage.osm.dev/web-data", "bucketaccess.storage.osm.dev/web-backup", "bucketaccess.storage.osm.dev/web-restore"}
	for _, a := range accesses {
		when, ok := order[a]
		switch {
		case !ok:
			t.Errorf("%s was not there before the deletion: %v", a, strings.Fields(before))
		case when < app:
			t.Errorf("%s went before the Application it serves", a)
		case order["bucket.storage.osm.dev/data"] < when:
			t.Errorf("Bucket data went before %s, which names it", a)
		}
	}
	// Only data is linked by the Application; logs has nothing to wait for but its own bucket.
	if order["bucket.storage.osm.dev/data"] < app {
		t.Errorf("bucket.storage.osm.dev/data went before the Application that links it")
	}
	for _, b := range []string{"bucket.storage.osm.dev/data", "bucket.storage.osm.dev/logs"} {
		if contract < order[b] {
			t.Errorf("the Contract went before %s", b)
		}
		if secret < order[b] {
			t.Errorf("the Contract's Secret went before %s, which needs its keys to delete its bucket", b)
		}
	}

	for _, b := range buckets {
		if status := headBucket(s3c, b); status != http.StatusNotFound {
			t.Errorf("bucket %s after the namespace's deletion: HeadBucket answered %d, want 404", b, status)
		}
	}
	if state := contractState(t, env, contractID); state != "cancelled" {
		t.Errorf("contract %s at the provider: state %q, want cancelled", contractID, state)
	}
}

// watchDisappear polls the namespace's objects of the kinds until none is left, and returns for
// each object seen, from those present before, the number of the poll that first found it gone.
func watchDisappear(t *testing.T, k *kubectl, kinds string, present []string, timeout time.Duration) map[string]int {
	t.Helper()
	quiet := &kubectl{env: k.env, namespace: k.namespace}
	t.Logf("$ kubectl -n %s get %s -o name   (polled until empty)", k.namespace, kinds)
	gone := map[string]int{}
	deadline := time.Now().Add(timeout)
	for poll := 0; ; poll++ {
		out, err := quiet.must(quick, "get", kinds, "-o", "name")
		if err != nil && !strings.Contains(err.Error(), "NotFound") {
			t.Fatal(err)
		}
		now := strings.Fields(out)
		for _, name := range present {
			if _, seen := gone[name]; !seen && !slices.Contains(now, name) {
				gone[name] = poll
			}
		}
		for _, name := range now {
			if !slices.Contains(present, name) {
				present = append(present, name)
			}
		}
		if len(now) == 0 {
			return gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still there: %s", timeout, strings.Join(now, " "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// headBucket returns HeadBucket's HTTP status.
func headBucket(c *s3.Client, bucket string) int {
	ctx, cancel := withTimeout(quick)
	defer cancel()
	_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	if err == nil {
		return http.StatusOK
	}
	return httpStatus(err)
}

// contractState asks the contract API for a contract's state, as the provider records it.
func contractState(t *testing.T, env *Env, id string) string {
	t.Helper()
	token, err := os.ReadFile(env.ContractAPITokenFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), quick)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.ContractAPI+"/v1/contracts/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/contracts/%s: %s", id, resp.Status)
	}
	var c struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.State
}
