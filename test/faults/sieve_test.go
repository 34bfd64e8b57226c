package faults

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
)

// The sieve perturbs what the manager sees, as Sieve (OSDI '22) does, at the points of a fixed
// workload where it matters, and compares the end of every step with the unperturbed run at the
// servers themselves:
//
//   - a learning run records every write the manager makes (API server, S3, contract API), and
//     every write the contract server makes (its records, versitygw's admin API), and the state
//     after each step;
//   - intermediate states: for each write, a run that kills the manager (or, after one of its
//     own, the contract server) right after it;
//   - stale states: after each deletion, recreation and rotation, a run that restarts the manager
//     with a view of the cluster from before (or from the middle of) that step, which catches up
//     after staleHold;
//   - unobserved states: a run whose watch events are coalesced.
//
// go test ./test/faults/ -run TestSieve runs a fixed subset (make test); OSM_SIEVE=all every
// point (make test-sieve), which prints one line and a report per divergence; OSM_SIEVE=learn
// prints the learning run's writes and checkpoints; OSM_SIEVE_REPEAT=n runs each perturbation n
// times (to tell a divergence from a flake).

// learned is what the learning run found.
type learned struct {
	states []state
	// points are the writes, in order; step[i] is the step during which points[i] was made.
	points []faults.Point
	step   []int
}

func TestSieve(t *testing.T) {
	logf.SetLogger(zap.New(zap.WriteTo(testWriter{t}), zap.Level(zapcore.ErrorLevel)))
	mode := os.Getenv("OSM_SIEVE")
	// Bounded by go test's -timeout, which make test-sieve sets for one lab (LABS=1) too.
	ctx := t.Context()
	start := time.Now()
	labs := startLabs(ctx, t, labCount(t, mode))
	learn := labs[0].learn(t)
	t.Logf("learning run: %d writes over %d steps in %s", len(learn.points), len(workload), time.Since(start).Round(time.Second))
	if mode == "learn" {
		learn.print()
		return
	}
	plan := learn.plan(mode)
	if n, err := strconv.Atoi(os.Getenv("OSM_SIEVE_REPEAT")); err == nil && n > 1 {
		plan = slices.Repeat(plan, n)
	}
	var tally tally
	queue := make(chan perturbation, len(plan))
	for _, p := range plan {
		queue <- p
	}
	close(queue)
	// Subtests called side by side, not t.Parallel ones, which -parallel (GOMAXPROCS) would
	// hold back: a lab mostly waits.
	var wg sync.WaitGroup
	for i, l := range labs {
		wg.Go(func() {
			t.Run(fmt.Sprintf("lab-%d", i), func(t *testing.T) {
				for p := range queue {
					tally.add(t, l.runWorkload(t, p, learn.states))
				}
			})
		})
	}
	wg.Wait()
	line := fmt.Sprintf("sieve: %d crash points, %d contract-server crash points, %d stale-view runs, %d coalesced run: "+
		"%d divergences, %d leaked at the server (%d writes learned, %d not reached; slowest settle %s, bound %s; %d labs, %s)",
		tally.crashes, tally.serverCrashes, tally.stales, tally.coalesced, len(tally.divergences), tally.leaked, len(learn.points), tally.unreached,
		tally.slowest.Round(100*time.Millisecond), settleBound, len(labs), time.Since(start).Round(time.Second))
	fmt.Println(line)
	t.Log(line)
	for _, d := range tally.divergences {
		fmt.Println(d)
		t.Error(d)
	}
}

// labCount is how many labs run perturbations side by side: OSM_SIEVE_LABS, by default 3 for
// every point (each lab is a stack of its own, and a run mostly waits) and 1 otherwise.
func labCount(t *testing.T, mode string) int {
	if v := os.Getenv("OSM_SIEVE_LABS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("OSM_SIEVE_LABS=%q: want a positive number", v)
		}
		return n
	}
	if mode == "all" {
		return 3
	}
	return 1
}

// tally counts the perturbed runs by class, and keeps their divergences and the longest a
// run took to settle.
type tally struct {
	mu                                                   sync.Mutex
	crashes, serverCrashes, stales, coalesced, unreached int
	leaked                                               int
	divergences                                          []*divergence
	slowest                                              time.Duration
}

func (c *tally) add(t *testing.T, res result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, d := res.p, res.div
	c.slowest = max(c.slowest, res.slowest)
	c.leaked += res.leaked
	switch {
	case !res.reached:
		c.unreached++
		t.Logf("not reached: %s", p)
		return
	case p.serverCrash():
		c.serverCrashes++
	case p.crash != nil:
		c.crashes++
	case p.staleStep > 0:
		c.stales++
	case p.coalesce:
		c.coalesced++
	}
	if d != nil {
		c.divergences = append(c.divergences, d)
	}
}

// print shows the learning run's writes and checkpoints.
func (ln learned) print() {
	for i, p := range ln.points {
		fmt.Printf("step %d %q: %s\n", ln.step[i]+1, workload[ln.step[i]].name, p)
	}
	for i, s := range ln.states {
		fmt.Printf("after step %d %q:\n", i+1, workload[i].name)
		for _, line := range (state{}).diff(s) {
			fmt.Println("  " + line)
		}
	}
}

// learn runs the workload unperturbed, and records its writes and checkpoints.
func (l *lab) learn(t *testing.T) learned {
	r := l.newRun(t, perturbation{}, nil)
	defer r.finish()
	var out learned
	for i, st := range workload {
		began := time.Now()
		// Quiet counts from the step, so a checkpoint is not taken before the manager acted on
		// it (an annotation changes no generation, and settledLearning saw nothing to wait for).
		r.mu.Lock()
		r.lastWrite = began
		r.mu.Unlock()
		st.do(r)
		r.settle(i)
		t.Logf("learning run: step %q settled in %s", st.name, time.Since(began).Round(10*time.Millisecond))
		for range len(l.tap.Points()) - len(out.step) {
			out.step = append(out.step, i)
		}
	}
	out.states, out.points = r.got, l.tap.Points()
	if d, leaked := r.checkServer(); d != nil || len(leaked) > 0 {
		t.Fatalf("the learning run: %v; leaked at the S3 server: %v", d, leaked)
	}
	return out
}

// runWorkload runs the workload under p, and returns how it diverged from the learning run, if
// it did, and whether p happened at all (a write the run never made crashes nothing).
func (l *lab) runWorkload(t *testing.T, p perturbation, want []state) result {
	began := time.Now()
	r := l.newRun(t, p, want)
	defer r.finish()
	div, reached := r.play()
	// Checked after a divergence too, so that what it leaked is not laid at the next run's door.
	atServer, leaked := r.checkServer()
	div = cmp.Or(div, atServer)
	t.Logf("%s: %s, slowest step %s", p, time.Since(began).Round(100*time.Millisecond), r.slowest.Round(100*time.Millisecond))
	return result{p: p, div: div, reached: reached, slowest: r.slowest, leaked: len(leaked)}
}

// result is how a perturbed run went: how it diverged from the learning run, if it did,
// whether its perturbation happened at all (a write the run never made crashes nothing), and
// the longest it took to settle after a step.
type result struct {
	p       perturbation
	div     *divergence
	reached bool
	slowest time.Duration
	// leaked counts the key pairs of the S3 server the run left without a live record.
	leaked int
}

// play runs the workload under the run's perturbation.
func (r *run) play() (*divergence, bool) {
	p := r.p
	for i, st := range workload {
		r.startStep(i)
		st.do(r)
		if d := r.settle(i); d != nil {
			return d, true
		}
		if p.staleStep != i+1 {
			continue
		}
		r.mu.Lock()
		rv := r.staleRV
		r.mu.Unlock()
		if rv == "" || !r.serveStale(rv) {
			return nil, false
		}
		if d := r.settle(i); d != nil {
			return d, true
		}
	}
	r.mu.Lock()
	r.perturbed = time.Now() // what a late pass does shows now or never
	r.mu.Unlock()
	if d := r.settle(len(workload) - 1); d != nil {
		return d, true
	}
	return nil, p.crash == nil || r.restarts() > 0
}

// plan lists the perturbed runs: with "all", one crash per write, a stale view at the start and
// at every API write of each stale step, and one coalesced run; with "", a fixed few (smoke);
// with anything else, those whose description matches it as a regular expression
// ("CreateBucket scratch #1", "stale view").
func (ln learned) plan(mode string) []perturbation {
	var crashes, stales []perturbation
	written := make([]int, len(workload))
	for i, st := range workload {
		if st.stale {
			stales = append(stales, perturbation{staleStep: i + 1})
		}
	}
	for i, pt := range ln.points {
		crashes = append(crashes, perturbation{crash: &pt})
		if step := ln.step[i]; workload[step].stale && strings.HasPrefix(pt.Signature, string(faults.KubeAPI)+" ") {
			written[step]++
			stales = append(stales, perturbation{staleStep: step + 1, staleAfter: written[step], staleNote: pt.String()})
		}
	}
	every := append(append(crashes, stales...), perturbation{coalesce: true})
	switch mode {
	case "all":
		return every
	case "":
		return subset(every, smoke)
	}
	return subset(every, []string{mode})
}

// smoke are the perturbations make test runs: the writes after which a
// crash has leaked or duplicated in other operators (a bucket made, a principal made, a key
// issued before its Secret was written), and a stale view after a deletion.
var smoke = []string{`s3 CreateBucket scratch #1$`, `contract POST /v1/contracts/\{id\}/principals BucketAccess/writer #1$`,
	`after step "delete scratch", as of its start`,
	// The contract server killed between a user made or deleted at versitygw and its record.
	`versitygw create-user userplus #1$`, `versitygw create-user user #1$`, `versitygw delete-user key of Contract/owner #1$`,
	// Found a key replaced for lost when the cache did not show its Secret yet (credentials.Keys.confirmSecret).
	`watch events coalesced`}

// subset keeps the perturbations whose description matches one of patterns.
func subset(ps []perturbation, patterns []string) []perturbation {
	var out []perturbation
	for _, p := range ps {
		for _, pat := range patterns {
			if regexp.MustCompile(pat).MatchString(p.String()) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
