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
	Of[objectstore.ACL](ACL{}),
	Of[string](Policy{}),
	Of[string](Versioning{}),
	Of[objectstore.ObjectLock](ObjectLock{}),
	Of[[]objectstore.LifecycleRule](Lifecycle{}),
	Of[[]objectstore.CORSRule](CORS{}),
	Of[map[string]string](Tags{}),
}

// Emit records an event on the Bucket: its type (corev1.EventTypeNormal or Warning), reason and
// message.
type Emit func(eventType, reason, message string)

// Failure is a setting Sync could not bring to the spec, and why.
type Failure struct {
	Info Info
	Err  error
}

// Syncer is a Setting ready for Sync (see Of).
type Syncer interface {
	bring(ctx context.Context, in *Input, emit Emit) outcome
}

// Of makes a Setting a Syncer.
func Of[V any](s Setting[V]) Syncer { return syncer[V]{s} }

// Sync brings every setting of settings to the spec: side by side, since each is a sub-resource
// of its own on every server here (and every pass, a resync included, waits for all), and then
// records what each showed in the Bucket's status, in order. It returns the settings it could
// not bring to the spec, in the order of settings; the others are applied whatever became of
// those. Nothing is written where the server already has what the spec asks, so a Bucket that
// did not change costs reads alone.
func Sync(ctx context.Context, in *Input, emit Emit, settings []Syncer) []Failure {
	outcomes := make([]outcome, len(settings))
	var wg sync.WaitGroup
	for i, s := range settings {
		wg.Go(func() { outcomes[i] = s.bring(ctx, in, emit) })
	}
	wg.Wait()
	var failed []Failure
	for _, o := range outcomes {
		if o.record != nil {
			o.record(&in.Bucket.Status)
		}
		if o.err != nil {
			failed = append(failed, Failure{Info: o.info, Err: o.err})
		}
	}
	return failed
}

// outcome is what syncing one setting did: a change of status to make, and an error.
type outcome struct {
	info   Info
	record func(*storagev1alpha1.BucketStatus)
	err    error
}

type syncer[V any] struct{ Setting[V] }

func (s syncer[V]) bring(ctx context.Context, in *Input, emit Emit) outcome {
	info := s.Info()
	recorded, hasRecord := s.Recorded(in)
	if !s.Wanted(in) {
		return s.drop(ctx, in, emit, hasRecord)
	}
	observed, err := s.Observe(ctx, in)
	if err != nil {
		return outcome{info: info, err: err}
	}
	if c, ok := s.Setting.(Checker[V]); ok {
		if err := c.Check(observed); err != nil {
			return outcome{info: info, record: s.recordNone(in), err: err}
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
	if err := s.Write(ctx, in, desired); err != nil {
		return outcome{info: info, err: err}
	}
	wrote(emit, info, applied, s.Describe(in, desired))
	if observed, err = s.Observe(ctx, in); err != nil {
		return outcome{info: info, err: err}
	}
	return outcome{info: info, record: s.record(in, observed, recorded, hasRecord)}
}

// drop handles a setting the spec no longer sets: what the operator wrote is removed where the
// setting can be (Remover), and status forgets it.
func (s syncer[V]) drop(ctx context.Context, in *Input, emit Emit, hasRecord bool) outcome {
	info := s.Info()
	if !hasRecord {
		return outcome{info: info} // never managed: the bucket's own is left as it is
	}
	if rm, ok := s.Setting.(Remover); ok {
		if err := rm.Remove(ctx, in); err != nil {
			return outcome{info: info, err: err}
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
