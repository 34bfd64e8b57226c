package faults

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Timings of a sieve run.
const (
	// settleBound is how long a run may take to reach a checkpoint after a step (and after a
	// perturbation): past it, the run has not settled, which is a divergence too. The longest
	// wait the operator has on purpose is tuning.WaitingRetry (a minute).
	settleBound = 75 * time.Second
	// quietFor is how long the learning run waits with no write of the manager before it takes
	// a checkpoint.
	quietFor = 1500 * time.Millisecond
	// staleHold is how long a stale view lasts before it catches up.
	staleHold = 4 * time.Second
	// coalesceWindow is the window within which only an object's newest event is delivered.
	coalesceWindow = time.Second
)

// lab is one stack the sieve runs its workloads on, one run at a time, each in a namespace of
// its own with a manager that watches that namespace alone. Every write of the manager, to
// the API server, S3 or the contract API, and of the contract server, to its records and to
// versitygw's admin API, goes through the one tap.
type lab struct {
	ctx context.Context
	stk *stack.Stack
	tap *faults.Tap
	// store reads buckets with the S3 server's administrator keys.
	store objectstore.Store
	// answers are the contract API's answers to the run's creations, by idempotency key.
	answers *answers
	// reported are the users leaked and the records lost at the S3 server that a run of the lab
	// has reported already: the next runs see them too.
	reported map[string]bool
}

// startLabs starts n labs side by side.
func startLabs(ctx context.Context, t *testing.T, n int) []*lab {
	labs := make([]*lab, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { labs[i], errs[i] = startLab(ctx) })
	}
	wg.Wait()
	for i, l := range labs {
		if l != nil {
			t.Cleanup(l.stk.Stop)
		}
		if errs[i] != nil {
			t.Fatalf("starting lab %d: %v", i, errs[i])
		}
	}
	return labs
}

func startLab(ctx context.Context) (*lab, error) {
	tap := &faults.Tap{}
	stk, err := stack.Start(ctx, stack.Options{
		ManagerProcess:    true,
		KubeTap:           tap,
		ContractServerTap: tap,
		// OSM_SIEVE_S3=rgw runs the labs on Ceph RGW, whose contract server writes differ.
		RGW: os.Getenv("OSM_SIEVE_S3") == "rgw",
		S3Middleware: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tap.Serve(w, r, next, faults.S3Write) })
		},
	})
	if err != nil {
		return nil, err
	}
	answers := &answers{}
	stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		answers.keep(w, r, func(w http.ResponseWriter) { tap.Serve(w, r, next, faults.ContractAPIWrite) })
	})
	stk.ManagerOptions.S3Timeout = 5 * time.Second
	if os.Getenv("OSM_SIEVE_DEBUG") != "" {
		stk.ManagerArgs = []string{"--zap-log-level=debug"}
	}
	store := objectstore.New(objectstore.Config{Endpoint: stk.S3.Direct, Region: stk.S3.Region,
		AccessKeyID: stk.S3.AdminAccessKey, SecretAccessKey: stk.S3.AdminSecretKey, HTTPClient: objectstore.NewHTTPClient(10*time.Second, 4, nil)})
	return &lab{ctx: ctx, stk: stk, tap: tap, store: store, answers: answers, reported: map[string]bool{}}, nil
}

// perturbation is what a run does to the manager, or to the contract server; the zero value is
// the learning run.
type perturbation struct {
	// crash kills the manager right after this write, or the contract server right after this
	// write of its own (serverCrash).
	crash *faults.Point
	// staleStep, from 1, restarts the manager after that step with a view of the cluster as it
	// was right after the staleAfter-th write of the manager to the API server in that step (0:
	// before the step); staleNote is what the learning run wrote there.
	staleStep, staleAfter int
	staleNote             string
	// coalesce delivers only each object's newest watch event per window, all run long.
	coalesce bool
}

func (p perturbation) String() string {
	switch {
	case p.serverCrash():
		return "contract server killed after " + p.crash.String()
	case p.crash != nil:
		return "crash after " + p.crash.String()
	case p.staleStep > 0 && p.staleAfter > 0:
		return fmt.Sprintf("stale view after step %q, as of its API write %d (%s)", workload[p.staleStep-1].name, p.staleAfter, p.staleNote)
	case p.staleStep > 0:
		return fmt.Sprintf("stale view after step %q, as of its start", workload[p.staleStep-1].name)
	case p.coalesce:
		return fmt.Sprintf("watch events coalesced per %s", coalesceWindow)
	}
	return "none (learning run)"
}

// serverCrash reports whether p kills the contract server: after one of its own writes.
func (p perturbation) serverCrash() bool {
	return p.crash != nil && strings.HasPrefix(p.crash.Signature, string(faults.ContractServer)+" ")
}

// run is one pass of the workload on a lab.
type run struct {
	*scenario
	lab   *lab
	p     perturbation
	names *namer
	// want are the learning run's checkpoints (nil in the learning run); got this run's.
	want, got []state
	// keys are every access key the run saw each resource hold, by label.
	keys map[string][]string
	// slowest is the longest the run took to settle after a step.
	slowest time.Duration
	// crashed is signalled by the tap once it killed the manager; restarted counts restarts.
	crashed   chan struct{}
	done      chan struct{}
	restarter sync.WaitGroup
	restarted int
	// staleRV is the resource version of the stale view, once the run has seen it; step is the
	// step under way, written how many writes to the API server the manager made in it;
	// lastWrite when the manager last wrote; perturbed, when set, when the perturbation was over (the
	// manager started again, the stale view caught up): the next checkpoint waits until the
	// manager has been quiet since.
	mu        sync.Mutex
	staleRV   string
	step      int
	written   int
	lastWrite time.Time
	perturbed time.Time
	// logFrom and serverLogFrom are where the run begins in the manager's and the contract
	// server's logs.
	logFrom, serverLogFrom int64
}

// newRun makes a namespace and starts a manager that watches it alone.
func (l *lab) newRun(t *testing.T, p perturbation, want []state) *run {
	sc := &scenario{t: t, ctx: l.ctx, stk: l.stk, k8s: l.stk.Client}
	sc.ns = sc.namespace()
	r := &run{scenario: sc, lab: l, p: p, want: want, keys: map[string][]string{},
		crashed: make(chan struct{}, 1), done: make(chan struct{})}
	r.names = newNamer(r)
	r.logFrom, r.serverLogFrom = fileSize(l.stk.ManagerLog()), fileSize(l.stk.ContractServerLog())
	l.tap.Reset(r.names.write, r.seen)
	l.answers.reset()
	switch {
	case p.serverCrash():
		l.tap.Arm(*p.crash, func(faults.Point, faults.Write) {
			l.stk.ContractAPI.KillServer()
			// Only the contract server dies: the manager's calls held meanwhile go on.
			l.tap.Thaw()
			r.crashed <- struct{}{}
		})
	case p.crash != nil:
		l.tap.Arm(*p.crash, func(faults.Point, faults.Write) {
			l.stk.KillManager()
			r.crashed <- struct{}{}
		})
	}
	l.stk.KubeProxy.Coalesce(0)
	if p.coalesce {
		l.stk.KubeProxy.Coalesce(coalesceWindow)
	}
	l.stk.ManagerOptions.WatchNamespaces = []string{sc.ns}
	if err := l.stk.StartManager(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	r.restarter.Add(1)
	go r.restartAfterCrash()
	return r
}

// fileSize is how long the file at path is; 0 when it is not there.
func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

// restartAfterCrash starts the manager, or the contract server, again once the tap killed it.
func (r *run) restartAfterCrash() {
	defer r.restarter.Done()
	select {
	case <-r.done:
		return
	case <-r.crashed:
	}
	if !r.p.serverCrash() {
		r.restartManager(func() { r.lab.tap.Thaw() })
		return
	}
	if err := r.stk.ContractAPI.RestartServer(); err != nil {
		r.t.Errorf("starting the contract server again: %v", err)
	}
	r.noteRestart()
}

// restartManager stops the manager, runs before, and starts it again.
func (r *run) restartManager(before func()) {
	if err := r.stk.StopManager(); err != nil {
		r.t.Errorf("stopping the manager: %v", err)
	}
	before()
	if err := r.stk.StartManager(); err != nil {
		r.t.Errorf("starting the manager again: %v", err)
	}
	r.noteRestart()
}

// noteRestart counts a restart, of the manager or the contract server, and takes it as the
// end of the perturbation.
func (r *run) noteRestart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.restarted++
	r.perturbed = time.Now()
}

// seen notes when the manager last wrote, and takes the stale view's resource version right
// after the write it is to be taken at (while the tap holds that write's answer).
func (r *run) seen(_ faults.Point, w faults.Write) {
	r.mu.Lock()
	r.lastWrite = time.Now()
	take := false
	if w.Channel == faults.KubeAPI && r.step == r.p.staleStep-1 {
		r.written++
		take = r.written == r.p.staleAfter
	}
	r.mu.Unlock()
	if !take {
		return
	}
	list := &storagev1alpha1.ContractList{}
	if err := r.k8s.List(r.ctx, list, client.InNamespace(r.ns), client.Limit(1)); err == nil {
		r.setStaleRV(list.ResourceVersion)
	}
}

// startStep notes that step i begins; a stale view as of its start is taken now.
func (r *run) startStep(i int) {
	r.mu.Lock()
	r.step, r.written = i, 0
	r.mu.Unlock()
	if r.p.staleStep == i+1 && r.p.staleAfter == 0 {
		r.setStaleRV(r.resourceVersion())
	}
}

func (r *run) setStaleRV(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.staleRV = rv
}

// restarts is how many times the manager was started again.
func (r *run) restarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarted
}

// finish stops the manager; the namespace stays (envtest deletes no namespace).
func (r *run) finish() {
	close(r.done)
	r.restarter.Wait()
	if err := r.stk.StopManager(); err != nil {
		r.t.Errorf("stopping the manager: %v", err)
	}
}

// resourceVersion is the cluster's resource version now: what a stale view taken now shows.
func (r *run) resourceVersion() string {
	list := &storagev1alpha1.ContractList{}
	if err := r.k8s.List(r.ctx, list, client.InNamespace(r.ns), client.Limit(1)); err != nil {
		r.t.Fatal(err)
	}
	return list.ResourceVersion
}

// serveStale restarts the manager with a view of the cluster as of rv, which catches up
// staleHold after its first list; it reports whether the new manager's lists were served from
// it.
func (r *run) serveStale(rv string) bool {
	r.restartManager(func() { r.stk.KubeProxy.ServeStale(rv, staleHold) })
	for deadline := time.Now().Add(settleBound); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n, until := r.stk.KubeProxy.StaleServed(); n > 0 {
			r.mu.Lock()
			r.perturbed = until
			r.mu.Unlock()
			return true
		}
	}
	return false
}

// now is a time for status fields the harness writes as other controllers would.
func now() *metav1.Time { t := metav1.Now(); return &t }
