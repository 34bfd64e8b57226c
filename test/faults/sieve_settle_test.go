package faults

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// divergence is a perturbed run that did not reach the learning run's checkpoint.
type divergence struct {
	p    perturbation
	step string
	// why is what went wrong after step; empty, it did not settle within settleBound.
	why  string
	diff []string
	// log is a copy of the manager's log of the run.
	log string
}

func (d *divergence) String() string {
	shown := d.diff[:min(len(d.diff), 12)]
	more := ""
	if len(d.diff) > len(shown) {
		more = fmt.Sprintf("\n    ... and %d more", len(d.diff)-len(shown))
	}
	lines := ""
	for _, l := range shown {
		lines += "\n    " + l
	}
	why := cmp.Or(d.why, fmt.Sprintf("not settled within %s", settleBound))
	return fmt.Sprintf("divergence: %s; after step %q, %s:%s%s\n    manager log: %s",
		d.p, d.step, why, lines, more, d.log)
}

// settle waits, after step i, until the run reaches its checkpoint. The learning run waits
// until every resource is done (settledLearning) and the manager has written nothing for
// quietFor, and records the state; a perturbed run waits until its state is the learning
// run's. Past settleBound it returns the difference. At each checkpoint the run's creations are
// asked for again (answers.replay).
func (r *run) settle(i int) *divergence {
	began := time.Now()
	deadline := began.Add(settleBound)
	defer func() { r.slowest = max(r.slowest, time.Since(began)) }()
	for {
		r.collectGarbage()
		if r.want == nil {
			why, done := r.settledLearning()
			if done && r.quiet() {
				r.got = append(r.got, r.state())
				r.lab.answers.replay(r.stk.ContractAPI)
				return nil
			}
			if time.Now().After(deadline) {
				r.t.Fatalf("the learning run did not settle after step %q: %s", workload[i].name, why)
			}
		} else {
			diff := r.want[i].diff(r.state())
			if len(diff) == 0 && r.quietSincePerturbed() {
				r.lab.answers.replay(r.stk.ContractAPI)
				return nil
			}
			if time.Now().After(deadline) {
				return &divergence{p: r.p, step: workload[i].name, diff: diff, log: r.saveLog()}
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// quiet reports whether the manager has written nothing for quietFor.
func (r *run) quiet() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.lastWrite) >= quietFor
}

// quietSincePerturbed reports whether the manager, if it was perturbed since the last
// checkpoint, has been quiet for quietFor since: a state taken earlier may show what the
// perturbation has not had the time to do yet. It forgets the perturbation once it has.
func (r *run) quietSincePerturbed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.perturbed.IsZero() {
		return true
	}
	if time.Since(r.perturbed) < quietFor || time.Since(r.lastWrite) < quietFor {
		return false
	}
	r.perturbed = time.Time{}
	return true
}

// settledLearning reports whether every resource of the learning run is done: Ready for the
// generation it has, no work under way (a bucket being made, a key being issued or retired),
// nothing being deleted, nothing left for the garbage collector.
func (r *run) settledLearning() (string, bool) {
	for _, o := range r.storageObjects() {
		name := kindOf(o) + "/" + o.GetName()
		if !o.GetDeletionTimestamp().IsZero() {
			return name + " is being deleted", false
		}
		ready := meta.FindStatusCondition(conditions(o), storagev1alpha1.ReadyCondition)
		if ready == nil || ready.ObservedGeneration != o.GetGeneration() {
			return name + " has no Ready condition for its generation", false
		}
		if _, app := o.(*paasv1alpha1.Application); !app && ready.Status != metav1.ConditionTrue {
			return fmt.Sprintf("%s is not Ready: %s", name, ready.Message), false
		}
		if describeKeyStatus(keyStatus(o)) != "" {
			return name + " has a key pending or retiring", false
		}
		if b, ok := o.(*storagev1alpha1.Bucket); ok && b.Status.CreatingBucket != "" {
			return name + " is creating its bucket", false
		}
	}
	return "", true
}

func keyStatus(o client.Object) *storagev1alpha1.KeyStatus {
	switch v := o.(type) {
	case *storagev1alpha1.Contract:
		return &v.Status.KeyStatus
	case *storagev1alpha1.BucketAccess:
		return &v.Status.KeyStatus
	}
	return &storagev1alpha1.KeyStatus{}
}

// collectGarbage plays the garbage collector for the run: its own resources are the owners.
func (r *run) collectGarbage() { r.scenario.collectGarbage(r.storageObjects()) }

// saveLog copies the manager's log of this run, the events of its namespace, and the contract
// server's log of the run, to a file that outlives the stack.
func (r *run) saveLog() string {
	raw, err := os.ReadFile(r.stk.ManagerLog())
	if err != nil {
		return "(none: " + err.Error() + ")"
	}
	raw = raw[min(int(r.logFrom), len(raw)):]
	events := &eventsv1.EventList{}
	if err := r.k8s.List(r.ctx, events, client.InNamespace(r.ns)); err == nil {
		slices.SortFunc(events.Items, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
		raw = append(raw, "\nevents:\n"...)
		for _, e := range events.Items {
			raw = fmt.Appendf(raw, "%s %s/%s %s: %s\n", e.EventTime.Format("15:04:05.000"), e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note)
		}
	}
	if server, err := os.ReadFile(r.stk.ContractServerLog()); err == nil {
		raw = append(append(raw, "\ncontract server:\n"...), server[min(int(r.serverLogFrom), len(server)):]...)
	}
	path := filepath.Join(os.TempDir(), "sieve-"+r.ns+".log")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "(not saved: " + err.Error() + ")"
	}
	return path
}
