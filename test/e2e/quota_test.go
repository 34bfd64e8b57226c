package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// quotaCycles is how often the tenant buys and deletes a Contract.
const quotaCycles = 5

// quotaWait bounds how long a purchase waits for kube-controller-manager's quota controller to
// release the deleted Contract's share of the quota.
const quotaWait = time.Minute

// tenantSetup is what a platform team gives a tenant namespace (docs/install.md): a
// ResourceQuota of one Contract, and a Role with every verb on the storage kinds but the costly
// ones (abandon, retain), bound to the tenant.
const tenantSetup = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: contracts
spec:
  hard:
    count/contracts.storage.osm.dev: "1"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: storage-edit
rules:
- apiGroups: [storage.osm.dev]
  resources: [contracts, buckets, bucketaccesses]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: storage-edit
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: storage-edit}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: team-a-dev}
`

const tenantContract = `apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: %s
spec:
  plan: standard
`

// tenantBucket holds Contract %[1]s while the tenant tries to take its finalizer off: deleted
// first, the Contract waits until no Bucket names it.
const tenantBucket = `apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: %[1]s
spec:
  bucketName: %[2]s-%[1]s
  contractName: %[1]s
  bucketReclaimPolicy: Delete
`

// quotaBypass is a tenant who tries to buy more than the quota of one
// Contract allows (issue 47): five times it buys a Contract, makes a Bucket of it, deletes the
// Contract (which waits for the Bucket), tries each way of keeping the contract after the
// resource goes (reclaimPolicy Retain, the abandon annotation, removing the finalizer), and
// deletes the Bucket. Each way is refused, so each deletion cancels its contract: at most one
// runs at the provider at a time, and none at the end. kube-controller-manager's quota
// controller counts the Contracts, as in a cluster.
// It is one of TestTenants' attacks.
func quotaBypass(t *testing.T, env *Env) {
	admin := newNamespace(t, env, "quota")
	applyText(t, admin, tenantSetup)
	// Until the quota controller has written the quota's status, admission cannot count against
	// it and lets every Contract in.
	pollJSONPath(t, admin, "resourcequota/contracts", "{.status.hard}", quotaWait)
	tenant := func(args ...string) []string { return append([]string{"--as=team-a-dev"}, args...) }

	var bought []string
	for cycle := 1; cycle <= quotaCycles; cycle++ {
		name := fmt.Sprintf("team-%d", cycle)
		contract, bucket := "contract/"+name, "bucket/"+name
		// The quota controller releases the last Contract's share a moment after it is gone.
		deadline := time.Now().Add(quotaWait)
		for {
			r := admin.run(quick, []byte(fmt.Sprintf(tenantContract, name)), tenant("create", "-f", "-")...)
			if r.Err == nil {
				break
			}
			if !strings.Contains(r.Err.Error(), "exceeded quota") || time.Now().After(deadline) {
				t.Fatalf("cycle %d: buying: %v", cycle, r.Err)
			}
			time.Sleep(time.Second)
		}
		waitFor(t, admin, defaultWaitTimeout, "condition=Ready", contract)
		id, err := admin.must(quick, "get", contract, "-o", "jsonpath={.status.contractID}")
		if err != nil || id == "" {
			t.Fatalf("cycle %d: no status.contractID (%v)", cycle, err)
		}
		bought = append(bought, id)

		if cycle == 1 {
			if r := admin.run(quick, []byte(fmt.Sprintf(tenantContract, "second")), tenant("create", "-f", "-")...); r.Err == nil ||
				!strings.Contains(r.Err.Error(), "exceeded quota") {
				t.Fatalf("a second Contract beside the first: %v; want the quota's refusal", r.Err)
			}
		}
		if r := admin.run(quick, []byte(fmt.Sprintf(tenantBucket, name, admin.namespace)), tenant("apply", "-f", "-")...); r.Err != nil {
			t.Fatalf("cycle %d: %v", cycle, r.Err)
		}
		waitFor(t, admin, defaultWaitTimeout, "condition=Ready", bucket)
		if _, err := admin.must(quick, tenant("delete", contract, "--wait=false")...); err != nil {
			t.Fatalf("cycle %d: deleting: %v", cycle, err)
		}
		refused := func(what, verb string, args ...string) {
			t.Helper()
			if _, err := admin.must(quick, tenant(args...)...); err == nil || !strings.Contains(err.Error(), "it takes verb "+verb) {
				t.Errorf("cycle %d: %s: %v; want it refused for lack of the verb %s", cycle, what, err, verb)
			}
		}
		refused("reclaimPolicy Retain", "retain", "patch", contract, "--type=merge", "-p", `{"spec":{"reclaimPolicy":"Retain"}}`)
		refused("the abandon annotation", "abandon", "annotate", contract, "storage.osm.dev/abandon=true")
		refused("removing the finalizer", "abandon", "patch", contract, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
		if _, err := admin.must(quick, tenant("delete", bucket, "--wait=false")...); err != nil {
			t.Fatalf("cycle %d: deleting the Bucket: %v", cycle, err)
		}
		if _, err := admin.must(goneTimeout+kubectlSlack, "wait", "--for=delete", contract, "--timeout="+goneTimeout.String()); err != nil {
			t.Fatalf("cycle %d: %v%s", cycle, err, (&caseRun{k: admin}).conditions(contract))
		}
		if state := contractState(t, env, id); state != string(contractapi.Cancelled) {
			t.Errorf("cycle %d: contract %s is %s at the provider after its Contract was deleted, want %s", cycle, id, state, contractapi.Cancelled)
		}
	}

	var running []string
	for _, id := range bought {
		if state := contractState(t, env, id); state != string(contractapi.Cancelled) {
			running = append(running, fmt.Sprintf("%s (%s)", id, state))
		}
	}
	t.Logf("quota: %d cycles under count/contracts.storage.osm.dev=1 bought %d contracts; %d still running", quotaCycles, len(bought), len(running))
	if len(running) > 1 {
		t.Errorf("%d contracts still run at the provider after %d cycles under a quota of one: %s", len(running), quotaCycles, strings.Join(running, ", "))
	}
}
