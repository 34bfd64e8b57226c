package transitions

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// subset is what make test runs: a setting with three values, one the server echoes in a form
// of its own, an immutable one, a BucketAccess's access and prefix, and an Application's env. OSM_TRANSITIONS=all
// (make test-transitions) runs every field; any other value is a regexp of fields to run
// ("Bucket.spec.tags").
const subset = `^(Bucket\.spec\.(versioning|tags|objectLock)|BucketAccess\.spec\.(access|prefix)|Application\.spec\.env)$`

// rgwSubset is what OSM_TRANSITIONS_S3=rgw (make test-transitions S3=rgw) runs by default: the
// settings only Ceph RGW carries out (quota, notifications) or carries out its own way (lifecycle,
// ownership controls, ACL grants to its principals), and a key's rights, whose principal is an
// RGW user there.
const rgwSubset = `^(Bucket\.spec\.(quota|notifications|lifecycle|ownershipControls|grantRead|versioning)|BucketAccess\.spec\.(access|prefix))$`

// settleBound is how long a transition may take to settle: a pass, and one retry of a
// setting the server refused for a moment.
const settleBound = 60 * time.Second

// notReadyHolds is how long a fresh object's Ready that is not True must stay as it is to count
// as where it settled: longer than tuning.PolicyWait, the shortest retry of a pass.
const notReadyHolds = 5 * time.Second

// TestTransitions drives live objects through every change of every field, Acto's way: each
// field of Bucket, BucketAccess and Application from each of its values to each other one,
// removal included. After each transition:
//   - differential: the server's state (every bucket setting; a key's rights, checked with the
//     key; the Secret by format; an Application's children) and the Ready reason equal those of
//     a fresh object created with the spec the transition ends on;
//   - liveness: it settles (Ready of its generation) within settleBound;
//   - admission: it is refused, with the field's path, exactly when the fresh object is
//     refused or the schema makes the field immutable; a refused one leaves the object as it was;
//   - writes: a pass over the settled object (an annotation touched) costs no S3 write.
func TestTransitions(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	rgw := os.Getenv("OSM_TRANSITIONS_S3") == "rgw"
	run := regexp.MustCompile(subset)
	if rgw {
		run = regexp.MustCompile(rgwSubset)
	}
	if only := os.Getenv("OSM_TRANSITIONS"); only == "all" {
		run = regexp.MustCompile(".")
	} else if only != "" {
		run = regexp.MustCompile(only)
	}
	table := readTable(t)
	var fields []field
	for kind, crd := range map[string]string{"Bucket": "storage.osm.dev_buckets.yaml", "BucketAccess": "storage.osm.dev_bucketaccesses.yaml",
		"Application": "paas.osm.dev_applications.yaml", "Contract": "storage.osm.dev_contracts.yaml"} {
		fields = append(fields, fieldsOf(t, kind, crd, table)...)
	}
	if t.Failed() {
		return
	}
	e := startEnv(t, rgw)
	var tally tally
	for _, f := range fields {
		if run.MatchString(f.String()) {
			tally.fields++
			e.walkField(f, &tally)
		}
	}
	server := "versitygw"
	if rgw {
		server = "Ceph RGW"
	}
	fmt.Fprintf(os.Stderr, "transitions (%s): %d transitions over %d fields of 4 kinds: %d divergences, %d stuck, %d invalid admitted, %d valid refused, %d no-op writes\n", server,
		tally.transitions, tally.fields, tally.divergences, tally.stuck, tally.invalidAdmitted, tally.validRefused, tally.noopWrites)
	if tally.divergences+tally.stuck+tally.invalidAdmitted+tally.validRefused+tally.noopWrites > 0 {
		t.Errorf("replay one field alone: make test-transitions ONLY='<field>', for example ONLY='Bucket\\.spec\\.tags'")
	}
}

type tally struct {
	fields, transitions, divergences, stuck, invalidAdmitted, validRefused, noopWrites int
}

// env is the stack the transitions run on: one bought Contract, the Buckets BucketAccesses
// name (and logging targets), and the manager counting its S3 writes.
type env struct {
	t      *testing.T
	ctx    context.Context
	stk    *stack.Stack
	c      client.Client
	writes *stack.S3Writes
	owner  string
	n      int
	// refs are the fresh objects' outcomes, by field and value.
	refs map[string]outcome
}

const ns = "transitions"

func startEnv(t *testing.T, rgw bool) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	t.Cleanup(cancel)
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	writes := &stack.S3Writes{}
	stk, err := stack.Start(ctx, stack.Options{ManagerProcess: true, S3Versioning: true, RGW: rgw,
		WebhookPaths: []string{root + "/config/webhook"}, S3Middleware: writes.Middleware})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stk.Stop)
	stk.ManagerArgs = append(stk.WebhookFlags(), "--enable-webhooks=true", "--metrics-insecure")
	if err := stk.StartManager(); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, stk: stk, c: stk.Client, writes: writes, refs: map[string]outcome{}}
	e.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	e.create(&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: storagev1alpha1.ContractSpec{Plan: "standard"}})
	for _, name := range []string{"photos", "archive", "logs"} {
		e.create(&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: storagev1alpha1.BucketSpec{BucketName: ns + "-" + name, ContractName: "team"}})
	}
	photos := e.settled(bucketObject("photos", nil), "Bucket photos")
	e.owner, _, _ = unstructured.NestedString(photos.Object, "status", "acl", "owner")
	return e
}

func (e *env) create(obj client.Object) {
	e.t.Helper()
	if err := e.c.Create(e.ctx, obj); err != nil {
		e.t.Fatal(err)
	}
}

// walkField creates a live object with f's first value, then changes f through every ordered
// pair of its values, checking each transition.
func (e *env) walkField(f field, tally *tally) {
	e.t.Helper()
	e.n++
	name := fmt.Sprintf("live-%d", e.n)
	order := walk(len(f.values))
	live := e.object(f, name, f.values[order[0]])
	if err := e.c.Create(e.ctx, live); err != nil {
		e.t.Errorf("%s: creating %s with %s: %v", f, name, show(f.values[order[0]]), err)
		return
	}
	cur := order[0]
	tally.add(e.check(f, live, cur, cur, "created"))
	for _, next := range order[1:] {
		if next == cur {
			continue // a refused step left the object where the walk goes back to
		}
		tally.transitions++
		from, to := show(f.values[cur]), show(f.values[next])
		step := fmt.Sprintf("%s → %s", from, to)
		ref := e.reference(f, next)
		refused := ref.refused != "" || f.immutable
		before := live.DeepCopy()
		err := e.c.Patch(e.ctx, live, client.RawPatch(k8stypes.JSONPatchType, specPatch(f, e.fill(f.values[next], live))))
		switch {
		case err != nil && !refused:
			tally.validRefused++
			e.t.Errorf("%s %s: refused, though a fresh %s with it is admitted: %v", f, step, f.kind, err)
			continue
		case err != nil:
			if !strings.Contains(err.Error(), "spec."+f.name) && !strings.Contains(err.Error(), "spec: ") {
				e.t.Errorf("%s %s: refused without the field's path: %v", f, step, err)
			}
			e.unchanged(f, before, step)
			continue
		case refused:
			tally.invalidAdmitted++
			e.t.Errorf("%s %s: admitted, though %s", f, step, why(f, ref))
		}
		// Where removing the field leaves the server as it is, the server must still be as the
		// value before the removal made it.
		like := next
		if f.values[next] == nil && f.absentKeeps {
			like = cur
		}
		cur = next
		tally.add(e.check(f, live, cur, like, step))
	}
	if err := e.c.Delete(e.ctx, live); err != nil {
		e.t.Errorf("deleting %s: %v", name, err)
	}
}

func why(f field, ref outcome) string {
	if f.immutable {
		return "the schema makes the field immutable"
	}
	return "a fresh " + f.kind + " with it is refused: " + ref.refused
}

// check waits for live to settle after a transition to value index cur, compares it with the
// outcome of a fresh object with value index like, and checks that a pass over it writes
// nothing.
func (e *env) check(f field, live *unstructured.Unstructured, cur, like int, step string) result {
	e.t.Helper()
	// Ready is the fresh object's with the value the step ends on; the server's state that of
	// the fresh object like names (the value before a removal that keeps the server as it is).
	want := e.reference(f, like)
	want.ready = e.reference(f, cur).ready
	got, ok := e.settle(live, want.ready)
	if !ok {
		e.t.Errorf("%s %s: not settled within %s: %s", f, step, settleBound, got.ready)
		return result{stuck: true}
	}
	got.state = e.stateOf(f.kind, live)
	if want.refused != "" {
		return result{}
	}
	// A spec the server refuses leaves the refused setting as the step before made it (by
	// design: the rest is applied, Ready says what was refused), so then only Ready compares.
	applied := strings.HasPrefix(want.ready, "True")
	var r result
	if got.ready != want.ready || applied && !equalJSON(got.state, want.state) {
		r.diverged = true
		e.t.Errorf("%s %s: differs from a fresh %s with %s:\nlive:  %s %s\nfresh: %s %s", f, step, f.kind, show(f.values[like]),
			got.ready, jsonOf(got.state), want.ready, jsonOf(want.state))
	}
	if writes := e.noopPass(live); len(writes) > 0 {
		r.noopWrites = true
		e.t.Errorf("%s %s: a pass over the settled object wrote %v", f, step, writes)
	}
	return r
}

type result struct{ diverged, stuck, noopWrites bool }

func (t *tally) add(r result) {
	t.divergences += b2i(r.diverged)
	t.stuck += b2i(r.stuck)
	t.noopWrites += b2i(r.noopWrites)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// outcome is where an object settles: its Ready (status, reason and message with its own names
// replaced) and the server's state; or why admission refused it.
type outcome struct {
	ready   string
	state   any
	refused string
}

// reference is the outcome of a fresh object with f's value i, made once.
func (e *env) reference(f field, i int) outcome {
	e.t.Helper()
	key := fmt.Sprintf("%s=%s", f, show(f.values[i]))
	if out, ok := e.refs[key]; ok {
		return out
	}
	e.n++
	obj := e.object(f, fmt.Sprintf("fresh-%d", e.n), f.values[i])
	if slices.Contains(f.existing, f.values[i]) {
		// As the live object's bucket exists when it is switched to this value.
		name, _, _ := unstructured.NestedString(obj.Object, "spec", "bucketName")
		if _, err := e.store("team-credentials").CreateBucket(e.ctx, name, objectstore.CreateOptions{}); err != nil {
			e.t.Fatalf("making bucket %s for a fresh %s: %v", name, f, err)
		}
	}
	var out outcome
	if err := e.c.Create(e.ctx, obj); err != nil {
		out.refused = err.Error()
	} else if settled, ok := e.settle(obj, ""); !ok {
		e.t.Errorf("%s: a fresh %s with %s did not settle within %s: %s", f, f.kind, show(f.values[i]), settleBound, settled.ready)
		out = settled
	} else {
		out = settled
		out.state = e.stateOf(f.kind, obj)
	}
	e.refs[key] = out
	return out
}

// settle waits until obj's Ready describes its generation, the manager's queues are empty, and
// Ready is want (normalized), the fresh object's; with no want, until it is True or has held.
// A Ready that is not True may be a moment's (a key whose policy is on its way is checked again
// after tuning.PolicyWait, a link waits for the BucketAccess it replaces to go), so a live
// object gets the whole bound to reach where a fresh one settled.
func (e *env) settle(obj *unstructured.Unstructured, want string) (outcome, bool) {
	e.t.Helper()
	deadline := time.Now().Add(settleBound)
	var same string
	var since time.Time
	for {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			e.t.Fatal(err)
		}
		ready, current := readyOf(obj)
		_, queued, err := e.stk.ReconcileCounts(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if ready != same {
			same, since = ready, time.Now()
		}
		got := e.normalize(ready, obj)
		reached := got == want || want == "" && (strings.HasPrefix(ready, "True") || time.Since(since) > notReadyHolds)
		if current && sum(queued) == 0 && reached {
			return outcome{ready: got}, true
		}
		if time.Now().After(deadline) {
			// Where it ended: the differential oracle says how that differs.
			return outcome{ready: got}, current && want != ""
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *env) settled(obj *unstructured.Unstructured, what string) *unstructured.Unstructured {
	e.t.Helper()
	if _, ok := e.settle(obj, ""); !ok {
		e.t.Fatalf("%s did not settle", what)
	}
	return obj
}

// noopPass touches an annotation of live, which makes the manager look at it again, waits for
// that pass, and returns what S3 writes it made.
func (e *env) noopPass(live *unstructured.Unstructured) []string {
	e.t.Helper()
	controller := strings.ToLower(live.GetKind())
	passes, _, err := e.stk.ReconcileCounts(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.writes.Reset()
	e.n++
	touch := fmt.Sprintf(`{"metadata":{"annotations":{"transitions.osm.dev/touch":"%d"}}}`, e.n)
	if err := e.c.Patch(e.ctx, live, client.RawPatch(k8stypes.MergePatchType, []byte(touch))); err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(settleBound)
	for {
		now, queued, err := e.stk.ReconcileCounts(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if now[controller] > passes[controller] && sum(queued) == 0 {
			return e.writes.Seen()
		}
		if time.Now().After(deadline) {
			e.t.Errorf("%s %s: no pass after its annotation changed", live.GetKind(), live.GetName())
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unchanged checks that a refused transition left the object as it was.
func (e *env) unchanged(f field, before *unstructured.Unstructured, step string) {
	e.t.Helper()
	now := before.DeepCopy()
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(before), now); err != nil {
		e.t.Fatal(err)
	}
	if now.GetResourceVersion() != before.GetResourceVersion() {
		e.t.Errorf("%s %s: refused, yet the object changed", f, step)
	}
}

func readyOf(u *unstructured.Unstructured) (string, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == storagev1alpha1.ReadyCondition {
			gen, _ := m["observedGeneration"].(int64)
			return fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"]), gen == u.GetGeneration()
		}
	}
	return "", false
}

func sum(m map[string]float64) float64 {
	var total float64
	for _, v := range m {
		total += v
	}
	return total
}

// specPatch sets f to value, or removes it (nil), in a JSON patch: a merge patch would merge a
// map with the one before instead of replacing it.
func specPatch(f field, value any) []byte {
	op := map[string]any{"op": "add", "path": "/spec/" + f.name, "value": value}
	if value == nil {
		op = map[string]any{"op": "remove", "path": "/spec/" + f.name}
	}
	b, _ := json.Marshal([]any{op})
	return b
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	return jsonOf(v)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func equalJSON(a, b any) bool { return jsonOf(a) == jsonOf(b) }

// merged is base with over's keys set, and those over sets to null taken out.
func merged(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		if v == nil {
			delete(out, k) // base: {field: null} leaves a field of the kind's base out
			continue
		}
		out[k] = v
	}
	return out
}
