package upgrade

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// TestUpgradeKeepsWhatRuns: objects of every kind, with keys, a rotation in its overlap and a
// restore in flight, made by an older manager, are left as they are by this one: no S3 or
// contract API write, no key rotated or revoked, no Secret rewritten, no Ready lost, no
// status changed (what each status says is still true of the server, by the new manager's own
// reading of it).
func TestUpgradeKeepsWhatRuns(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // the watches' client logs nothing the test needs
	for _, rev := range fromRevisions(t) {
		t.Run(rev, func(t *testing.T) { upgradeFrom(t, checkOut(t, rev)) })
	}
}

func upgradeFrom(t *testing.T, old revision) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var s3Writes stack.S3Writes
	stk, err := stack.Start(ctx, stack.Options{ManagerProcess: true, S3Versioning: true, CRDDir: old.crds,
		WebhookPaths: []string{old.webhooks}, S3Middleware: s3Writes.Middleware})
	if err != nil {
		t.Fatal(err)
	}
	defer stk.Stop()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(stk.ManagerLog())
			t.Logf("the manager's log:\n%s", b)
		}
	})
	stk.ManagerBinary = old.manager
	stk.ManagerArgs = append(stk.WebhookFlags(), "--enable-webhooks=true", "--metrics-insecure")
	if err := stk.StartManager(); err != nil {
		t.Fatalf("starting the manager of %s: %v", old.name, err)
	}

	w := newWorkload(ctx, t, stk)
	w.create()
	w.settle("under " + old.name)
	w.putInFlight()
	w.settle("with a rotation and a restore in flight")
	before := w.snapshot()
	policiesBefore := w.policies()

	// As a rollout would, the old manager goes, the CRDs are replaced, the new one comes.
	if err := stk.StopManager(); err != nil {
		t.Fatal(err)
	}
	upgradeStarted := time.Now()
	s3Writes.Reset()
	watch := w.watchReady(before)
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(stk.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(root, "config", "crd", "bases")}}); err != nil {
		t.Fatalf("installing this tree's CRDs: %v", err)
	}
	if err := stk.InstallWebhooks([]string{filepath.Join(root, "config", "webhook")}); err != nil {
		t.Fatal(err)
	}
	stk.ManagerBinary = ""
	stk.ManagerArgs = append(stk.WebhookFlags(), "--enable-webhooks=true", "--metrics-insecure")
	if err := stk.StartManager(); err != nil {
		t.Fatalf("starting this tree's manager: %v", err)
	}
	w.settle("after the upgrade")
	after := w.snapshot()
	lost := watch.stop()

	// As at S3, a write the contract API refused changed nothing (topics where the server has
	// none: 501).
	apiCalls := stk.ContractAPI.Calls(func(c stack.Call) bool {
		return c.At.After(upgradeStarted) && c.Method != http.MethodGet && c.Status < 300
	})
	for _, c := range apiCalls {
		t.Logf("contract API write during the upgrade: %s %s: %d", c.Method, c.Path, c.Status)
	}
	s3Seen, policiesMigrated := migrated(s3Writes.Seen(), policiesBefore, w.policies())
	for _, w := range s3Seen {
		t.Logf("S3 write during the upgrade: %s", w)
	}
	apiWrites := len(apiCalls)
	d := diff(t, before, after)
	revoked := w.revokedKeys(before)
	fmt.Fprintf(os.Stderr, "upgrade: %d objects of 4 kinds: %d S3 writes, %d keys rotated, %d Secrets rewritten, %d Ready lost "+
		"(from %s; also %d contract API writes, %d keys revoked, %d statuses changed, %d statuses with new fields, %d Secrets with new metadata; "+
		"migrations: %d policies given their WriteOnly Deny)\n",
		len(before.objects), len(s3Seen), d.keysRotated, d.secretsRewritten, lost, old.name,
		apiWrites, revoked, d.statusesChanged, d.statusesExtended, d.secretsRelabelled, policiesMigrated)
	for _, c := range []struct {
		what string
		n    int
	}{{"S3 writes", len(s3Seen)}, {"contract API writes", apiWrites}, {"keys rotated", d.keysRotated},
		{"keys revoked", revoked}, {"Secrets rewritten", d.secretsRewritten}, {"Ready lost", lost}, {"statuses changed", d.statusesChanged}} {
		if c.n != 0 {
			t.Errorf("%d %s by the upgrade from %s", c.n, c.what, old.name)
		}
	}
}
