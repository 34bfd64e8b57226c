package cosidriver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// One driver writes at a time. A grant or a revocation reads a bucket's policy, changes it and
// writes it whole (S3 has no conditional write of a policy), and the lock of each bucket
// (Driver.locks) is one process's: two driver pods at once, as a rolling update runs them, or
// an evicted pod beside its replacement, could each drop the statement the other just wrote.
// With Options.Exclusive, the driver writes (answers the calls that change a bucket or its
// access, sweeps) only while it holds a Lease (Lead); every such call of a driver that does not
// answers Unavailable, which the sidecar retries. The chart also replaces the pod with
// strategy Recreate, so the lease changes hands at once on a rollout (docs/cosi.md).

// ErrLeaseLost: the driver lost its write lease while it meant to keep it (the API server was
// out of reach for the renew deadline). Its process must end at once: a write in flight could
// otherwise land after the next holder's.
var ErrLeaseLost = errors.New("the COSI driver lost its write lease")

// errNotWriting answers a call that would write while the driver does not hold the lease.
var errNotWriting = status.Error(codes.Unavailable,
	"this driver pod does not hold the write lease (another one does, or it is being handed over); retried")

// Lease is where the driver's write lease lives, and how it is held.
type Lease struct {
	// Lock is the Lease object, named in the driver's namespace, with this process's identity
	// (resourcelock.New with resourcelock.LeasesResourceLock).
	Lock resourcelock.Interface
	// Duration, RenewDeadline and RetryPeriod are leaderelection's: another driver takes the
	// lease Duration after the holder last renewed it, and the holder gives it up when it could
	// not renew it for RenewDeadline, which is shorter. Zero: 15s, 10s and 2s.
	Duration, RenewDeadline, RetryPeriod time.Duration
}

// writeGate lets the calls that write in while the driver may write, and lets StopWriting wait
// for those in flight.
type writeGate struct {
	mu      sync.RWMutex // held for reading by every write in flight
	writing atomic.Bool
}

// enter lets one write in, or answers errNotWriting; the caller runs leave when it is done. A
// call is refused before it waits for the lock, which StopWriting holds while it drains.
func (g *writeGate) enter() (leave func(), err error) {
	if !g.writing.Load() {
		return nil, errNotWriting
	}
	g.mu.RLock()
	if !g.writing.Load() {
		g.mu.RUnlock()
		return nil, errNotWriting
	}
	return g.mu.RUnlock, nil
}

// Writing reports whether the driver writes now: it holds the lease, or needs none, and has
// not been told to stop.
func (d *Driver) Writing() bool { return d.gate.writing.Load() }

// StopWriting refuses every write from now on and returns once those in flight have ended: a
// driver about to give up its lease calls it first, so that nothing it started lands after the
// next holder begins.
func (d *Driver) StopWriting() {
	d.gate.writing.Store(false)
	d.gate.mu.Lock()
	defer d.gate.mu.Unlock()
}

// Lead holds the driver's write lease until ctx ends, and lets the driver write while it holds
// it; leading runs, in a goroutine of its own, once the lease is taken, with a context that ends
// when it is lost or given up (the sweeps run there). Cancel ctx only after StopWriting: the
// lease is then given up at once, and another driver takes it without waiting for it to expire.
// Lead returns nil when ctx ended, ErrLeaseLost when the lease was lost while ctx was live.
func (d *Driver) Lead(ctx context.Context, l Lease, leading func(context.Context)) error {
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            l.Lock,
		LeaseDuration:   orDefault(l.Duration, 15*time.Second),
		RenewDeadline:   orDefault(l.RenewDeadline, 10*time.Second),
		RetryPeriod:     orDefault(l.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Name:            "cosi-driver",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				d.gate.writing.Store(true)
				d.log.Info("Holding the write lease: this driver writes", "identity", l.Lock.Identity())
				if leading != nil {
					leading(ctx)
				}
			},
			// Lost or given up: no new write starts. Those in flight are the caller's to end
			// (StopWriting before a release; the process's end on a loss).
			OnStoppedLeading: func() { d.gate.writing.Store(false) },
		},
	})
	if err != nil {
		return err
	}
	elector.Run(ctx)
	d.gate.writing.Store(false)
	if ctx.Err() == nil {
		return ErrLeaseLost
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
