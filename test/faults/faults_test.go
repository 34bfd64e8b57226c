// Package faults is the fault suite: the whole operator over real servers, with faults injected
// in front of S3 and the contract API and the manager restarted mid-burst, and then the promise
// checked against the servers themselves, not the operator's status: nothing leaked, nothing
// made twice, no credentials lost, everything settled.
//
//	go test ./test/faults/                        # small, in make test
//	make test-faults N=1000                       # full size; prints the figure line
package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// size is the scenario's scale, from the environment (make test-faults sets it).
type size struct {
	buckets, contracts, restarts int
	rate                         float64
}

func sizeFromEnv(t *testing.T) size {
	sz := size{buckets: 12, contracts: 3, restarts: 3, rate: 0.2}
	for name, dst := range map[string]*int{"OSM_FAULTS_N": &sz.buckets, "OSM_FAULTS_CONTRACTS": &sz.contracts, "OSM_FAULTS_RESTARTS": &sz.restarts} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive number", name, v)
			}
			*dst = n
		}
	}
	if v := os.Getenv("OSM_FAULTS_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r >= 1 {
			t.Fatalf("OSM_FAULTS_RATE=%q: want a rate in [0, 1)", v)
		}
		sz.rate = r
	}
	return sz
}

// The bound on calls the suite holds the operator to: retries under faults may cost more calls,
// never an unbounded number. A Bucket's three lives (made, deleted, made again and deleted) may
// cost 80 S3 requests each. A Contract reads its contract once a resync period (5 s here), and
// again after each manager restart (the new manager has not seen it), with retries on top.
const (
	maxS3CallsPerBucket    = 80
	resyncPeriod           = 5 * time.Second
	contractCallsFixed     = 30
	contractCallsPerResync = 2
	// A BucketAccess's life (principal, first key, a rotation, a revocation, deletion) is about
	// ten contract API requests, with retries on top and one look after each restart; its key
	// is checked with three S3 requests once a resync period.
	accessCallsFixed     = 40
	accessS3CallsPerLook = 3
)

// contractCallBound is how many contract API requests Contracts and BucketAccesses may cost over
// elapsed, with restarts of the manager.
func contractCallBound(contracts, accesses, restarts int, elapsed time.Duration) int {
	return contracts*(contractCallsFixed+restarts+contractCallsPerResync*int(elapsed/resyncPeriod)) +
		accesses*(accessCallsFixed+restarts)
}

// s3CallBound is how many S3 requests Buckets (three lives each) and BucketAccesses may cost over
// elapsed.
func s3CallBound(buckets, accesses int, elapsed time.Duration) int {
	return maxS3CallsPerBucket*buckets*3 + accesses*accessS3CallsPerLook*(10+int(elapsed/resyncPeriod))
}

func TestNothingLeaksDuplicatesOrWedgesUnderFaults(t *testing.T) {
	logf.SetLogger(zap.New(zap.WriteTo(testWriter{t}), zap.Level(zapcore.ErrorLevel)))
	sz := sizeFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(300+2*sz.buckets)*time.Second)
	defer cancel()

	s3Faults := &faults.Injector{Rate: sz.rate, Operation: faults.S3Operation, Seed: 1}
	apiFaults := &faults.Injector{Rate: sz.rate, Operation: faults.ContractAPIOperation, Seed: 2}
	// The manager is its own process, killed with SIGKILL at random moments: a crash cuts a pass
	// wherever it is, between two calls, before its status write, with requests in flight.
	stk, err := stack.Start(ctx, stack.Options{S3Faults: s3Faults, ManagerProcess: true, S3Versioning: true})
	if err != nil {
		t.Fatalf("starting the stack: %v", err)
	}
	t.Cleanup(stk.Stop)
	t.Cleanup(func() { // runs before Stop removes the log
		if t.Failed() {
			showLogTail(t, stk.ManagerLog(), 200)
		}
	})
	stk.ContractAPI.SetHook(apiFaults.Serve)
	stk.ManagerOptions.MaxConcurrentReconciles = 4
	stk.ManagerOptions.ResyncPeriod = resyncPeriod
	stk.ManagerOptions.S3Timeout = 5 * time.Second
	if err := stk.StartManager(); err != nil {
		t.Fatal(err)
	}
	k8s := stk.Client
	sc := &scenario{t: t, ctx: ctx, stk: stk, k8s: k8s, size: sz}
	sc.ns = sc.namespace()

	start := time.Now()
	s3Faults.Enable(true)
	apiFaults.Enable(true)
	restarts := sc.restartDuring(func() {
		sc.createContracts()
		sc.createBuckets()
		// Some go again before they are Ready, while their creation or purchase may be half
		// done: the paths where a lost answer leaks.
		deleteAll(sc, sc.deleteEarly())
		sc.waitReady()
	})
	sc.checkReadyBucketsExist()
	t.Logf("burst: %d Buckets Ready in %s with %d restarts", sz.buckets, time.Since(start).Round(time.Second), restarts)

	// Keys for some of the Buckets, issued and then rotated while the manager dies and calls
	// fail: every replaced key must stop working, and nothing be issued twice.
	restarts += sc.restartDuring(func() {
		sc.createAccesses()
		sc.waitReady()
	})
	var outlived int
	restarts += sc.restartDuring(func() { outlived = sc.rotateAccesses("r1") })
	rotated := len(sc.accesses)
	// Each key over several Buckets loses one of them: refused there, kept at the others.
	var narrowed int
	restarts += sc.restartDuring(func() {
		var n int
		n, narrowed = sc.narrowSharedAccesses()
		outlived += n
	})

	// Applications back up into the Buckets and restore, two to a backup Bucket: no backup key
	// may write outside its own prefix, and no object outside it may change.
	var trespassed int
	restarts += sc.restartDuring(func() {
		sc.createApplications()
		trespassed = sc.backUpAndRestore()
	})

	// From here on the servers also refuse (403, 400) some requests, as they do when a
	// permission or a setting is briefly wrong: a refusal is looked at again after the resync
	// period, and must leak nothing either. They stop before the wait for every resource to be
	// Ready at once: a refused read honestly makes its resource not Ready until it looks again,
	// and with a thousand resources some always would be.
	refusals := func(on bool) {
		kinds := slices.Clone(faults.Kinds)
		if on {
			kinds = append(kinds, faults.Refusals...)
		}
		for _, inj := range []*faults.Injector{s3Faults, apiFaults} {
			inj.SetKinds(kinds...)
		}
	}
	refusals(true)
	restarts += sc.restartDuring(sc.deleteApplications)
	trespassed += sc.checkKeptObjects()
	sc.emptyBackupBuckets()
	deleteAll(sc, sc.accesses) // a Bucket waits for the BucketAccesses that name it
	sc.accesses = nil
	deleteAll(sc, sc.buckets)
	sc.createBuckets() // the Retain ones find their buckets again
	refusals(false)
	sc.waitReady()
	refusals(true)
	sc.checkReadyBucketsExist()
	// The last deletion empties the force-deleted buckets, with the manager killed mid-way.
	sc.fillBuckets()
	midEmptying := sc.emptyingMoment()
	restarts += sc.restartAt(func() {
		deleteAll(sc, sc.buckets)
		deleteAll(sc, sc.contracts)
	}, midEmptying)
	settled := time.Since(start)
	s3Faults.Enable(false)
	apiFaults.Enable(false)

	leaked := sc.checkBuckets()
	deletedOutside := sc.checkEmptied()
	if midEmptying.hits == 0 {
		t.Errorf("no restart cut an emptying: the resumption of one after a crash went untested")
	}
	duplicated, left := sc.checkContracts()
	lost := sc.checkRetainedSecrets()
	principalsLeft, principalsTwice := sc.checkPrincipals()
	s3n, s3total := s3Faults.Total()
	apin, apitotal := apiFaults.Total()
	contracts := len(sc.contracts) + len(sc.gone)
	apiBound := contractCallBound(contracts, len(sc.issued), restarts, settled)
	s3Bound := s3CallBound(sz.buckets, len(sc.issued), settled)
	if s3total > s3Bound || apitotal > apiBound {
		t.Errorf("retries beyond the bound: %d S3 requests for %d Buckets and %d BucketAccesses (bound %d), %d contract API requests for %d Contracts (bound %d)",
			s3total, sz.buckets, len(sc.issued), s3Bound, apitotal, contracts, apiBound)
	}
	t.Logf("calls: %d S3 requests (%.1f a Bucket), %d contract API requests (%.1f a Contract, bound %d in all)",
		s3total, float64(s3total)/float64(sz.buckets), apitotal, float64(apitotal)/float64(contracts), apiBound)
	t.Logf("faults injected: S3 %s; contract API %s", s3Faults.Summary(), apiFaults.Summary())
	em := sc.emptying
	line := fmt.Sprintf("faults: %d buckets, %d bucketaccesses rotated (%d over several buckets, narrowed by one), %d applications backed up and restored, "+
		"%d buckets force-deleted with %d object versions (%d restarts mid-emptying), %.0f%% injected (%d faults), %d restarts: "+
		"%d leaked, %d duplicated, %d lost secrets, %d keys outliving their revocation, %d objects touched outside their application's prefix, "+
		"%d objects deleted outside the force-deleted buckets, all settled in %.0f s",
		sz.buckets, rotated, narrowed, len(sc.apps), len(em.forced), em.versions, midEmptying.hits, sz.rate*100, s3n+apin, restarts,
		leaked+principalsLeft, duplicated+left+principalsTwice, lost, outlived, trespassed, deletedOutside, settled.Seconds())
	fmt.Println(line)
	t.Log(line)
}

type scenario struct {
	t    *testing.T
	ctx  context.Context
	stk  *stack.Stack
	k8s  client.Client
	size size
	ns   string
	// contracts and buckets are what the scenario made and has not deleted early; gone are
	// the Contracts it made and deleted at once.
	contracts, gone []*storagev1alpha1.Contract
	buckets         []*storagev1alpha1.Bucket
	// accesses are the BucketAccesses not deleted yet; issued every one made, with every key
	// it was seen to hold.
	accesses []*storagev1alpha1.BucketAccess
	issued   map[k8stypes.UID][]string
	// apps are the Applications; kept is every object that must stay as it was put (bucket/key
	// to ETag): those no Application owns, and each Application's snapshot.
	apps []*paasv1alpha1.Application
	kept map[string]string
	// emptying is what the last deletion empties, and what must survive it.
	emptying *emptying
}

// deleteEarly picks every fifth Delete-policy Bucket and one Contract of each reclaim policy,
// made for the purpose, to be deleted before they are Ready; the scenario then goes on without
// them, and the final checks cover them.
func (sc *scenario) deleteEarly() []client.Object {
	var early []client.Object
	var keep []*storagev1alpha1.Bucket
	for i, b := range sc.buckets {
		if i%5 == 4 && b.Spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete {
			early = append(early, b)
			continue
		}
		keep = append(keep, b)
	}
	sc.buckets = keep
	for _, policy := range []storagev1alpha1.ReclaimPolicy{storagev1alpha1.ReclaimPolicyDelete, storagev1alpha1.ReclaimPolicyRetain} {
		c := &storagev1alpha1.Contract{
			ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: "early-" + strings.ToLower(string(policy))},
			Spec:       storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: policy},
		}
		sc.create(c)
		sc.gone = append(sc.gone, c)
		early = append(early, c)
	}
	return early
}

func (sc *scenario) namespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "faults-"}}
	if err := sc.k8s.Create(sc.ctx, ns); err != nil {
		sc.t.Fatal(err)
	}
	return ns.Name
}

// retained reports whether Contract i keeps its contract; only those have Retain Buckets, so
// a Delete Contract never waits on buckets its account keeps on purpose.
func retained(i int) bool { return i%2 == 1 }

func (sc *scenario) createContracts() {
	for i := range sc.size.contracts {
		c := &storagev1alpha1.Contract{
			ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: fmt.Sprintf("acc-%d", i)},
			Spec:       storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete},
		}
		if retained(i) {
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		}
		sc.create(c)
		sc.contracts = append(sc.contracts, c)
	}
}

// createBuckets makes the Buckets, mixed: reclaim policies, canned ACLs and grants, and some
// that empty their buckets when deleted.
func (sc *scenario) createBuckets() {
	sc.buckets = nil
	for i := range sc.size.buckets {
		contract := i % sc.size.contracts
		b := &storagev1alpha1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: fmt.Sprintf("b-%d", i)},
			Spec: storagev1alpha1.BucketSpec{
				BucketName:          fmt.Sprintf("%s-b-%d", sc.ns, i),
				ContractName:        sc.contracts[contract].Name,
				BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
			},
		}
		if retained(contract) && i%4 < 2 {
			b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		}
		if forceDeleted(i, b.Spec.BucketReclaimPolicy) {
			emptyOnDelete(i, b)
		}
		switch i % 3 {
		case 1:
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
		case 2:
			b.Spec.CannedACL = storagev1alpha1.CannedACLPrivate
		}
		sc.create(b)
		sc.buckets = append(sc.buckets, b)
	}
}

// create retries what the API server refuses for a moment (the webhook-free stack refuses
// nothing else).
func (sc *scenario) create(obj client.Object) {
	sc.t.Helper()
	if err := sc.k8s.Create(sc.ctx, obj); err != nil {
		sc.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// restartDuring runs work while the manager is killed and started again at random moments, up
// to the scenario's number of restarts, and returns how many happened.
func (sc *scenario) restartDuring(work func()) int { return sc.restartAt(work, nil) }

// A killMoment narrows when the manager is killed: after the random delay, the kill waits until
// ready says (up to wait), and landed, asked while the manager is dead, says whether it cut
// what ready waited for; hits counts those kills.
type killMoment struct {
	wait          time.Duration
	ready, landed func() bool
	hits          int
}

// restartAt is restartDuring with the kills at moment, when not nil.
func (sc *scenario) restartAt(work func(), moment *killMoment) int {
	done := make(chan struct{})
	count := make(chan int)
	go func() {
		rng := rand.New(rand.NewPCG(3, 4))
		n := 0
		defer func() { count <- n }()
		for n < sc.size.restarts {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(200+rng.IntN(800)) * time.Millisecond):
			}
			if moment != nil {
				for deadline := time.Now().Add(moment.wait); time.Now().Before(deadline) && !moment.ready(); {
					select {
					case <-done:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			if err := sc.stk.StopManager(); err != nil && !errors.Is(err, context.Canceled) {
				sc.t.Errorf("stopping the manager: %v", err)
			}
			if moment != nil && moment.landed() {
				moment.hits++
			}
			if err := sc.stk.StartManager(); err != nil {
				sc.t.Errorf("starting the manager again: %v", err)
				return
			}
			n++
		}
	}()
	work()
	close(done)
	return <-count
}

// waitReady waits until every Bucket and Contract is Ready.
func (sc *scenario) waitReady() {
	sc.t.Helper()
	sc.waitFor("every resource Ready", func() (string, bool) {
		for _, obj := range sc.objects() {
			if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return fmt.Sprintf("%s: %v", obj.GetName(), err), false
			}
			if c := meta.FindStatusCondition(conditions(obj), storagev1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Sprintf("%s %s not Ready: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), c), false
			}
		}
		return "", true
	})
}

func (sc *scenario) objects() []client.Object {
	var out []client.Object
	for _, c := range sc.contracts {
		out = append(out, c)
	}
	for _, b := range sc.buckets {
		out = append(out, b)
	}
	for _, a := range sc.accesses {
		out = append(out, a)
	}
	return out
}

func conditions(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *storagev1alpha1.Contract:
		return o.Status.Conditions
	case *storagev1alpha1.Bucket:
		return o.Status.Conditions
	case *storagev1alpha1.BucketAccess:
		return o.Status.Conditions
	case *paasv1alpha1.Application:
		return o.Status.Conditions
	}
	return nil
}

// deleteAll deletes objs and waits until they are gone.
func deleteAll[T client.Object](sc *scenario, objs []T) {
	sc.t.Helper()
	for _, obj := range objs {
		if err := sc.k8s.Delete(sc.ctx, obj); client.IgnoreNotFound(err) != nil {
			sc.t.Fatal(err)
		}
	}
	sc.waitFor("every resource gone", func() (string, bool) {
		for _, obj := range objs {
			err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(obj), obj)
			if err == nil {
				return fmt.Sprintf("%s still there: %v", obj.GetName(), conditions(obj)), false
			}
			if !apierrors.IsNotFound(err) {
				return err.Error(), false
			}
		}
		return "", true
	})
}

// waitFor polls until check is true; past the deadline it fails with what check last said, so
// a wedge names what it waits on.
func (sc *scenario) waitFor(what string, check func() (why string, ok bool)) {
	sc.t.Helper()
	var why string
	for {
		var ok bool
		if why, ok = check(); ok {
			return
		}
		select {
		case <-sc.ctx.Done():
			sc.t.Fatalf("%s: not settled before the deadline: %s", what, why)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// admin is an S3 client with the server's administrator keys, which sees every account.
func (sc *scenario) admin() *s3.Client {
	return localenv.NewS3Client(sc.stk.S3.Direct, sc.stk.S3.Region, sc.stk.S3.AdminAccessKey, sc.stk.S3.AdminSecretKey)
}

// checkReadyBucketsExist: no Bucket is Ready without its bucket.
func (sc *scenario) checkReadyBucketsExist() {
	sc.t.Helper()
	for _, b := range sc.buckets {
		if _, err := sc.admin().HeadBucket(sc.ctx, &s3.HeadBucketInput{Bucket: aws.String(b.Spec.BucketName)}); err != nil {
			sc.t.Errorf("Bucket %s is Ready, but its bucket %s is not on the server: %v", b.Name, b.Spec.BucketName, err)
		}
	}
}

// checkBuckets: every bucket left on the server is one a Retain Bucket kept on purpose, tagged
// for it; it returns how many others there are (leaked).
func (sc *scenario) checkBuckets() int {
	sc.t.Helper()
	out, err := sc.admin().ListBuckets(sc.ctx, &s3.ListBucketsInput{})
	if err != nil {
		sc.t.Fatalf("listing the server's buckets: %v", err)
	}
	var kept []string
	for _, b := range sc.buckets {
		if b.Spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyRetain {
			kept = append(kept, b.Spec.BucketName)
		}
	}
	leaked := 0
	var found []string
	for _, bucket := range out.Buckets {
		name := aws.ToString(bucket.Name)
		if !strings.HasPrefix(name, sc.ns+"-") {
			continue // another scenario's, or the server's own
		}
		found = append(found, name)
		if !slices.Contains(kept, name) {
			leaked++
			sc.t.Errorf("bucket %s leaked: no Bucket keeps it", name)
			continue
		}
		tags, err := sc.admin().GetBucketTagging(sc.ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
		if err != nil || !slices.ContainsFunc(tags.TagSet, func(t types.Tag) bool {
			return aws.ToString(t.Key) == "storage.osm.dev/bucket" && aws.ToString(t.Value) == sc.ns+"/b-"+strings.TrimPrefix(name, sc.ns+"-b-")
		}) {
			sc.t.Errorf("retained bucket %s is not tagged for its Bucket (%v)", name, err)
		}
	}
	for _, name := range kept {
		if !slices.Contains(found, name) {
			sc.t.Errorf("retained bucket %s is gone", name)
		}
	}
	return leaked
}

// checkContracts: one contract per Contract, never two; the Delete ones cancelled, the Retain
// ones active. A Contract deleted early may have bought nothing. It returns how many Contracts
// were sold more than one, and how many contracts were left active that should not be.
func (sc *scenario) checkContracts() (duplicated, left int) {
	sc.t.Helper()
	all, err := sc.stk.ContractAPI.Contracts()
	if err != nil {
		sc.t.Fatal(err)
	}
	for _, c := range append(slices.Clone(sc.contracts), sc.gone...) {
		var mine []string
		for _, rec := range all {
			if rec.IdempotencyKey == string(c.UID) {
				mine = append(mine, rec.ID+" "+rec.State)
			}
		}
		retain := c.Spec.ReclaimPolicy == storagev1alpha1.ReclaimPolicyRetain
		switch {
		case len(mine) == 0 && slices.Contains(sc.gone, c):
		case len(mine) != 1:
			duplicated++
			sc.t.Errorf("Contract %s was sold %d contracts: %v", c.Name, len(mine), mine)
		case retain && strings.HasSuffix(mine[0], " cancelled") && slices.Contains(sc.gone, c):
			// Deleted before its purchase was answered, and bought by the deletion's own
			// question: no one ever held its keys, so it is cancelled whatever the policy.
		case retain && !strings.HasSuffix(mine[0], " active"):
			sc.t.Errorf("Retain Contract %s: contract %s, want it active", c.Name, mine[0])
		case !retain && !strings.HasSuffix(mine[0], " cancelled"):
			left++
			sc.t.Errorf("Delete Contract %s is gone but its contract is %s", c.Name, mine[0])
		}
	}
	return duplicated, left
}

// checkRetainedSecrets: the keys of every contract kept at the provider are still in a Secret,
// and work.
func (sc *scenario) checkRetainedSecrets() (lost int) {
	sc.t.Helper()
	all, err := sc.stk.ContractAPI.Contracts()
	if err != nil {
		sc.t.Fatal(err)
	}
	for _, c := range append(slices.Clone(sc.contracts), sc.gone...) {
		kept := slices.ContainsFunc(all, func(rec contractserver.ContractSummary) bool {
			return rec.IdempotencyKey == string(c.UID) && rec.State == "active"
		})
		if c.Spec.ReclaimPolicy != storagev1alpha1.ReclaimPolicyRetain || !kept {
			continue
		}
		secret := &corev1.Secret{}
		err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: c.SecretNameOrDefault()}, secret)
		if err == nil {
			s3c := localenv.NewS3Client(sc.stk.S3.Direct, sc.stk.S3.Region,
				string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
			_, err = s3c.ListBuckets(sc.ctx, &s3.ListBucketsInput{})
		}
		if err != nil {
			lost++
			sc.t.Errorf("the keys of retained Contract %s are lost: %v", c.Name, err)
		}
	}
	return lost
}

// showLogTail logs the last lines of the manager's log, for a failure's context.
func showLogTail(t *testing.T, path string, lines int) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Logf("no manager log: %v", err)
		return
	}
	all := strings.Split(strings.TrimSpace(string(raw)), "\n")
	t.Logf("the manager's log, last %d lines:\n%s", min(lines, len(all)), strings.Join(all[max(0, len(all)-lines):], "\n"))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
