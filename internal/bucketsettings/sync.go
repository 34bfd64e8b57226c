package bucketsettings

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// All are the settings a Bucket's spec manages, in the order their failures are reported.
var All = []Syncer{
	Of[objectstore.PublicAccessBlock](PublicAccessBlock{}),
	Of[string](OwnershipControls{}),
	Of[objectstore.ACL](ACL{}),
	Of[string](Policy{}),
	Of[string](Versioning{}),
	Of[objectstore.ObjectLock](ObjectLock{}),
	Of[[]objectstore.LifecycleRule](Lifecycle{}),
	Of[[]objectstore.CORSRule](CORS{}),
	Of[map[string]string](Tags{}),
	Of[objectstore.Encryption](Encryption{}),
	Of[objectstore.Logging](Logging{}),
	Of[site](Website{}),
	Of[[]objectstore.Notification](Notifications{}),
	Of[storagev1alpha1.ObservedQuota](Quota{}),
}

// Emit records an event on the Bucket: its type (corev1.EventTypeNormal or Warning), reason and
// message.
type Emit func(eventType, reason, message string)

// Result is what Sync did.
type Result struct {
	// Failed are the settings it could not bring to the spec (observing: could not read), in
	// the order of the settings given.
	Failed []Failure
	// Differ are, when observing, the settings whose value at the server is not the spec's:
	// what Manage would write.
	Differ []Info
}

// Failure is a setting Sync could not bring to the spec, and why.
type Failure struct {
	Info Info
	Err  error
	// Unsupported: the server does not implement the setting; no retry changes that.
	Unsupported bool
}

// Syncer is a Setting ready for Sync (see Of).
type Syncer interface {
	bring(ctx context.Context, in *Input, emit Emit, writes *sync.Mutex) outcome
	isGate() bool
	forget(in *Input, st *storagev1alpha1.BucketStatus)
}

// gate marks a Setting that decides whether the writes of others are allowed: Sync brings it
// to the spec before them.
type gate interface{ gate() }

// Unsupporter is a Setting whose server may say it lacks the setting otherwise than with a 501
// or a 405: Unsupported tells such an answer.
type Unsupporter interface {
	Unsupported(err error) bool
}

// Of makes a Setting a Syncer.
func Of[V any](s Setting[V]) Syncer { return syncer[V]{s} }

// Sync brings every setting of settings to the spec: read side by side (every pass, a resync
// included, waits for all), after the gates among them, and then records what each showed in
// the Bucket's status, in order. Writes, each with its read back, go one at a time: Ceph RGW
// keeps most settings (policy, website, lifecycle, versioning) in one record of the bucket that
// each write reads and rewrites whole, so two at once can lose one, and the read back then
// shows it gone. The
// settings it could not bring to the spec are in the Result; the others are applied whatever
// became of those. Nothing is written where the server already has what the spec asks, so a
// Bucket that did not change costs reads alone; and nothing at all when in.Observe.
func Sync(ctx context.Context, in *Input, emit Emit, settings []Syncer) Result {
	outcomes := make([]outcome, len(settings))
	var writes sync.Mutex
	for _, gates := range []bool{true, false} {
		var wg sync.WaitGroup
		for i, s := range settings {
			if s.isGate() == gates {
				wg.Go(func() { outcomes[i] = s.bring(ctx, in, emit, &writes) })
			}
		}
		wg.Wait()
	}
	var res Result
	for _, o := range outcomes {
		if o.record != nil {
			o.record(&in.Bucket.Status)
		}
		if o.err != nil {
			res.Failed = append(res.Failed, Failure{Info: o.info, Err: o.err, Unsupported: o.unsupported})
		}
		if o.differs {
			res.Differ = append(res.Differ, o.info)
		}
	}
	return res
}

// Forget clears from st what settings recorded: what an Observe pass saw was never written by
// the operator, so a Manage pass must not take it for its own.
func Forget(in *Input, st *storagev1alpha1.BucketStatus, settings []Syncer) {
	for _, s := range settings {
		s.forget(in, st)
	}
}

// outcome is what syncing one setting did: a change of status to make, an error (and whether
// it says the server lacks the setting), and, observing, whether the server differs.
type outcome struct {
	info        Info
	record      func(*storagev1alpha1.BucketStatus)
	err         error
	unsupported bool
	differs     bool
}

type syncer[V any] struct{ Setting[V] }

func (s syncer[V]) isGate() bool { _, ok := s.Setting.(gate); return ok }

func (s syncer[V]) forget(in *Input, st *storagev1alpha1.BucketStatus) {
	var zero V
	s.Record(in, st, zero, false)
}

// failed is the outcome of an error.
func (s syncer[V]) failed(err error) outcome {
	u, ok := s.Setting.(Unsupporter)
	return outcome{info: s.Info(), err: err, unsupported: objectstore.IsNotImplemented(err) || ok && u.Unsupported(err)}
}

func (s syncer[V]) bring(ctx context.Context, in *Input, emit Emit, writes *sync.Mutex) outcome {
	if in.Observe {
		return s.observe(ctx, in)
	}
	info := s.Info()
	recorded, hasRecord := s.Recorded(in)
	if !s.Wanted(in) {
		return s.drop(ctx, in, emit, hasRecord, writes)
	}
	observed, err := s.Observe(ctx, in)
	if err != nil {
		return s.failed(err)
	}
	if c, ok := s.Setting.(Checker[V]); ok {
		if err := c.Check(observed); err != nil {
			o := s.failed(err)
			o.record = s.recordNone(in)
			return o
		}
	}
	desired := s.Desired(in, observed)
	applied := in.Applied
	if r, ok := s.Setting.(Refiner[V]); ok && applied {
		applied = r.StillApplied(recorded, desired)
	}
	if s.Equal(desired, observed) || (applied && s.Equal(recorded, observed)) {
		return outcome{info: info, record: s.record(in, observed, recorded, hasRecord)}
	}
	writes.Lock()
	defer writes.Unlock()
	if err := s.Write(ctx, in, desired); err != nil {
		return s.failed(err)
	}
	wrote(emit, info, applied, s.Describe(in, desired))
	if observed, err = s.Observe(ctx, in); err != nil {
		return s.failed(err)
	}
	return outcome{info: info, record: s.record(in, observed, recorded, hasRecord)}
}

// observe reads the setting whatever the spec asks, records it, and says whether it differs
// from what the spec asks. A setting the server lacks is no failure unless the spec asks for it.
func (s syncer[V]) observe(ctx context.Context, in *Input) outcome {
	recorded, hasRecord := s.Recorded(in)
	spec := specOnly(in)
	observed, err := s.Observe(ctx, in)
	if err != nil {
		o := s.failed(err)
		if o.unsupported && !s.Wanted(spec) {
			return outcome{info: o.info, record: s.recordNone(in)}
		}
		return o
	}
	return outcome{info: s.Info(), record: s.record(in, observed, recorded, hasRecord),
		differs: s.Wanted(spec) && !s.Equal(s.Desired(spec, observed), observed)}
}

// specOnly is in with the Bucket's status left out, so Wanted and Desired answer for the spec
// alone: what the status of an Observe Bucket shows was never the operator's.
func specOnly(in *Input) *Input {
	out := *in
	b := *in.Bucket
	b.Status = storagev1alpha1.BucketStatus{}
	out.Bucket = &b
	return &out
}

// drop handles a setting the spec no longer sets: what the operator wrote is removed where the
// setting can be (Remover), and status forgets it.
func (s syncer[V]) drop(ctx context.Context, in *Input, emit Emit, hasRecord bool, writes *sync.Mutex) outcome {
	info := s.Info()
	if !hasRecord {
		return outcome{info: info} // never managed: the bucket's own is left as it is
	}
	if rm, ok := s.Setting.(Remover); ok {
		writes.Lock()
		defer writes.Unlock()
		if err := rm.Remove(ctx, in); err != nil {
			return s.failed(err)
		}
		wrote(emit, info, in.Applied, rm.Removed(in))
	}
	return outcome{info: info, record: s.recordNone(in)}
}

// record is the change of status for what was observed. An observation that means what status
// already shows leaves status as it is: the API server may have re-encoded it (numbers in a
// policy), which must not count as a change.
func (s syncer[V]) record(in *Input, observed, recorded V, hasRecord bool) func(*storagev1alpha1.BucketStatus) {
	if hasRecord && s.Equal(recorded, observed) {
		return nil
	}
	return func(st *storagev1alpha1.BucketStatus) { s.Record(in, st, observed, true) }
}

func (s syncer[V]) recordNone(in *Input) func(*storagev1alpha1.BucketStatus) {
	var zero V
	return func(st *storagev1alpha1.BucketStatus) { s.Record(in, st, zero, false) }
}

// wrote emits the event for a write: an update when the spec changed, a correction of drift
// when the spec had been applied and someone changed the bucket since.
func wrote(emit Emit, info Info, applied bool, what string) {
	if applied {
		emit(corev1.EventTypeWarning, info.Event+"DriftCorrected", "Changed outside the operator; restored. "+what)
		return
	}
	emit(corev1.EventTypeNormal, info.Event+"Updated", what)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
