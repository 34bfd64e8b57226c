package cosidriver

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// bucketAccessList is COSI's BucketAccess list, read as metadata only: the revoker needs each
// one's UID and whether it is being deleted, nothing of COSI's types.
var bucketAccessList = schema.GroupVersionKind{Group: "objectstorage.k8s.io", Version: "v1alpha1", Kind: "BucketAccessList"}

// Sweep revokes every recorded grant whose BucketAccess no longer exists or is being deleted,
// and returns how many it revoked. It decides from the API server, never from a cache: the
// records are listed first, then the BucketAccesses. A BucketAccess exists before the sidecar
// asks for its grant, and so before its record; every record of the first list therefore
// belongs to a BucketAccess that the second list shows, unless that one is gone.
// A record whose revocation fails is kept for the next sweep.
func (d *Driver) Sweep(ctx context.Context) (int, error) {
	if d.recordNamespace == "" || !d.Writing() {
		return 0, nil // nothing recorded, or another driver sweeps
	}
	recs, err := d.records(ctx)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	live, err := d.liveAccesses(ctx)
	if err != nil {
		return 0, err
	}
	revoked := 0
	var errs []error
	for _, r := range recs {
		if live[types.UID(accessUID(r.access))] {
			continue
		}
		err := d.revokeRecorded(ctx, r)
		if errors.Is(err, errNotWriting) {
			break // the lease is being given up: the next holder sweeps
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("revoking %s on bucket %s: %w", r.access, r.bucket, err))
			continue
		}
		revoked++
	}
	return revoked, errors.Join(errs...)
}

// liveAccesses are the UIDs of the BucketAccesses that exist and are not being deleted.
func (d *Driver) liveAccesses(ctx context.Context) (map[types.UID]bool, error) {
	live := map[types.UID]bool{}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(bucketAccessList)
	for {
		if err := d.kube.List(ctx, list, client.Limit(500), client.Continue(list.Continue)); err != nil {
			return nil, fmt.Errorf("listing COSI BucketAccesses: %w", err)
		}
		for _, a := range list.Items {
			if a.DeletionTimestamp.IsZero() {
				live[a.UID] = true
			}
		}
		if list.Continue == "" {
			return live, nil
		}
	}
}

// revokeRecorded revokes the access of r and forgets it. The principal is asked for again under
// its idempotency key, the only way the contract API finds it: the answer is the principal made
// for r, or one made now if the grant never got that far, or principal-deleted if it is already
// revoked.
func (d *Driver) revokeRecorded(ctx context.Context, r grantRecord) error {
	ctx, acct, unlock, err := d.open(ctx, r.bucket)
	if err != nil {
		return err
	}
	defer unlock()
	if acct.ContractID != "" {
		p, _, err := d.principals.CreatePrincipal(ctx, acct.ContractID, grantKey(r.bucket, r.access))
		switch {
		case errors.Is(err, contractclient.ErrPrincipalDeleted):
		case err != nil:
			return fromError(err)
		default:
			if err := d.revoke(ctx, acct, r.bucket, p); err != nil {
				return err
			}
			d.log.Info("Revoked the access of a deleted BucketAccess", "bucket", r.bucket.Bucket,
				"contract", r.bucket.Contract.String(), "access", r.access, "principal", p.ID)
		}
	}
	return d.forget(ctx, r)
}

// Revoker runs Sweep when a BucketAccess is deleted, as a watch tells, and every period for what
// a watch missed (the driver was down, the watch broke).
type Revoker struct {
	Driver *Driver
	// Watch watches COSI's BucketAccesses; the driver's own client, made with client.NewWithWatch.
	Watch client.WithWatch
	// Period between sweeps that no deletion asked for.
	Period time.Duration
}

// Run sweeps until ctx ends.
func (r *Revoker) Run(ctx context.Context) {
	kick := make(chan struct{}, 1)
	go r.watch(ctx, kick)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-timer.C:
		}
		n, err := r.Driver.Sweep(ctx)
		if err != nil {
			r.Driver.log.Error(err, "Revoking the access of deleted BucketAccesses")
		} else if n > 0 {
			r.Driver.log.V(1).Info("Swept", "revoked", n)
		}
		timer.Reset(r.Period)
	}
}

// watch kicks a sweep for every BucketAccess deleted or being deleted, watching again after the
// watch ends, until ctx ends.
func (r *Revoker) watch(ctx context.Context, kick chan<- struct{}) {
	for ctx.Err() == nil {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(bucketAccessList)
		w, err := r.Watch.Watch(ctx, list)
		if err != nil {
			r.Driver.log.V(1).Info("Watching COSI BucketAccesses failed; the periodic sweep covers it", "error", err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if deleting(ev) {
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		}
		w.Stop()
		// A watch the server ends at once (an error event) is not retried in a tight loop.
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func deleting(ev watch.Event) bool {
	if ev.Type == watch.Deleted {
		return true
	}
	m, ok := ev.Object.(metav1.Object)
	return ok && ev.Type == watch.Modified && m.GetDeletionTimestamp() != nil
}
