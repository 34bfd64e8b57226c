package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// contractFound is what a pass of the Contract reconciler found; conclude derives every
// condition from it, once, at the end of the pass.
type contractFound struct {
	// ready decides Ready; nil leaves it as it was (the pass stopped on an API server error,
	// or a deletion went ahead).
	ready contractFinding
	// buckets are the Buckets that name the Contract, sorted, when the pass listed them.
	buckets *[]string
	// keys is what the pass found about the key's rotation.
	keys credentials.Finding
}

// end is how a pass that found f ends.
func (f contractFound) end(ready contractFinding, after time.Duration, err error) contractOutcome {
	f.ready = ready
	return contractOutcome{Found: f, After: after, Err: err}
}

// A contractFinding is one thing a pass can find that decides the Contract's Ready.
type contractFinding interface {
	ready(c *storagev1alpha1.Contract) *engine.Condition
}

type (
	// available: the provider reports the contract, and its key is in the Secret.
	available struct{ contract contractclient.Contract }
	// invalidName: the name cannot label the Secret; nothing is bought.
	invalidName struct{ why string }
	// contractGone: the provider reports the contract as cancelled.
	contractGone struct{ id string }
	// secretTaken: the Secret's name is taken by a Secret of someone else.
	// configMap: it is the obc format's ConfigMap of that name that is someone else's.
	secretTaken struct {
		secret    string
		configMap bool
	}
	// secretUnsafe: a value of the credentials cannot be written in a format asked for.
	secretUnsafe struct{ err error }
	// apiFailed: a call of the contract API failed, transiently or by a refusal.
	apiFailed struct{ err *contractclient.Error }
	// hasBuckets: the provider refuses to cancel a contract that still owns buckets.
	hasBuckets struct{ id string }
	// keysRetiring: deletion (reclaimPolicy Retain) waits until the keys rotation replaced are
	// revoked, at the end of their overlap.
	keysRetiring struct{}
	// keyReplacing: the Secret lost the key, and a new one is on its way.
	keyReplacing struct{ secret, key string }
)

func (f available) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.True(storagev1alpha1.ReasonAvailable, fmt.Sprintf(
		"Contract %s is %s; its credentials are in Secret %s", f.contract.ID, f.contract.State, c.SecretNameOrDefault()))
}

func (f invalidName) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonInvalidName, fmt.Sprintf(
		"Contract name %q cannot label its Secret (%s); nothing was bought: recreate the Contract with a shorter name", c.Name, f.why))
}

func (f contractGone) ready(*storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonContractCancelled, fmt.Sprintf(
		"The provider reports contract %s as cancelled; delete this Contract and create a new one", f.id))
}

func (f secretTaken) ready(*storagev1alpha1.Contract) *engine.Condition {
	if f.configMap {
		return engine.False(storagev1alpha1.ReasonSecretConflict, configMapTaken(f.secret, "Contract"))
	}
	return engine.False(storagev1alpha1.ReasonSecretConflict, fmt.Sprintf(
		"Secret %s exists and does not belong to this Contract; delete it or set spec.secretName to another name", f.secret))
}

func (f secretUnsafe) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonUnsafeValue, unsafeValue(c.SecretNameOrDefault(), f.err))
}

func (f apiFailed) ready(*storagev1alpha1.Contract) *engine.Condition {
	if f.err.Retryable() {
		return engine.False(storagev1alpha1.ReasonContractAPIUnavailable,
			fmt.Sprintf("The contract API failed while %s: %s; retrying", f.err.Op, f.err.Summary()))
	}
	return engine.False(storagev1alpha1.ReasonContractAPIRejected, fmt.Sprintf("The contract API refused %s: %s", f.err.Op, f.err.Summary()))
}

func (f hasBuckets) ready(*storagev1alpha1.Contract) *engine.Condition {
	// Buckets outside Kubernetes (or retained ones) are the user's data: never forced.
	return engine.False(storagev1alpha1.ReasonContractAPIRejected, fmt.Sprintf(
		"Contract %s still owns buckets at the provider (retained or made outside Kubernetes); "+
			"delete them, or have someone with the verb retain (ClusterRole cost-admin) set spec.reclaimPolicy to Retain to keep the contract", f.id))
}

func (keysRetiring) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonDeleting, fmt.Sprintf(
		"Deletion waits until %s; the contract stays at the provider (reclaimPolicy Retain) with key %s in Secret %s",
		credentials.RetiringSummary(c.Status.RetiringKeys), c.Status.AccessKeyID, c.SecretNameOrDefault()))
}

func (f keyReplacing) ready(*storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonProvisioning, fmt.Sprintf(
		"Secret %s lost key %s; a new key is on its way (see the KeyRotation condition)", f.secret, f.key))
}

// conclude sets the Contract's conditions from what the pass found, with an event when Ready's
// or KeyRotation's reason changes.
func (k contractKind) conclude(c *storagev1alpha1.Contract, f contractFound) {
	ready, inUse, keys := contractConditions(c, f)
	if inUse != nil {
		engine.Set(&c.Status.Conditions, c.Generation, storagev1alpha1.InUseCondition, *inUse)
	}
	if f.keys.State == credentials.NotAsked {
		meta.RemoveStatusCondition(&c.Status.Conditions, storagev1alpha1.KeyRotationCondition)
	}
	if keys != nil {
		engine.SetAnnounced(k.Recorder, c, &c.Status.Conditions, c.Generation, storagev1alpha1.KeyRotationCondition, *keys, credentials.EventType)
	}
	if ready != nil {
		c.Status.ObservedGeneration = c.Generation
		engine.SetReady(k.Recorder, c, &c.Status.Conditions, c.Generation, *ready)
	}
}

// contractConditions derives the Contract's conditions from what a pass found. A nil condition
// is left as it was (KeyRotation is removed when nothing is asked of the keys).
func contractConditions(c *storagev1alpha1.Contract, f contractFound) (ready, inUse, keys *engine.Condition) {
	if f.buckets != nil {
		inUse = engine.False(storagev1alpha1.ReasonNoBuckets, "No Bucket names this Contract")
		if len(*f.buckets) > 0 {
			inUse = engine.True(storagev1alpha1.ReasonBucketsExist, namedBy(*f.buckets))
		}
	}
	described := credentials.Describe(c)
	keys = described.Condition(f.keys)
	switch {
	case !c.DeletionTimestamp.IsZero() && f.buckets != nil && len(*f.buckets) > 0:
		// The Bucket watch wakes the Contract when they go: waiting is not failing.
		ready = engine.False(storagev1alpha1.ReasonDeleting, "Deletion waits until no Bucket names this Contract (see the InUse condition)")
	case f.ready != nil:
		ready = f.ready.ready(c)
	}
	return ready, inUse, keys
}

// namedInFull is how many Buckets InUse names and counts exactly; of more, it names as many and
// says roughly how many there are.
const namedInFull = 3

// namedBy is InUse's message for the Buckets (sorted) that name a Contract. A message that
// listed or counted every Bucket would change with each one created or deleted, and cost a write
// of the Contract each time: a burst of a hundred Buckets a Contract, a hundred writes. Past
// namedInFull it names the first few and the power of ten their number exceeds, and so changes
// only when one of the first few changes or the number passes a power of ten.
func namedBy(buckets []string) string {
	if len(buckets) <= namedInFull {
		return fmt.Sprintf("Named by %s: %s", plural(len(buckets), "Bucket"), strings.Join(buckets, ", "))
	}
	more := namedInFull
	for p := 10; p < len(buckets); p *= 10 {
		more = p
	}
	return fmt.Sprintf("Named by more than %d Buckets, among them %s (kubectl get buckets shows each one's Contract)",
		more, strings.Join(buckets[:namedInFull], ", "))
}

// apiFailed ends a pass on a failed contract API call (engine.APIFailure).
func (k contractKind) apiFailed(found contractFound, err error) contractOutcome {
	apiErr, after, err := engine.APIFailure(err)
	if apiErr == nil {
		return found.end(nil, 0, err)
	}
	return found.end(apiFailed{apiErr}, after, err)
}

// cancelled ends a pass on a contract the provider reports as cancelled.
func (k contractKind) cancelled(c *storagev1alpha1.Contract, found contractFound, id string) contractOutcome {
	c.Status.State = string(contractapi.Cancelled)
	return found.end(contractGone{id}, 0, reconcile.TerminalError(fmt.Errorf("contract %s is cancelled", id)))
}

// secretConflict ends a pass on a Secret of someone else's under the name the keys go to. It is
// not in the cache (it lacks the label), so no watch says when it goes: look again later.
func (k contractKind) secretConflict(found contractFound, name string) contractOutcome {
	return found.end(secretTaken{secret: name}, engine.WaitingRetry(k.ResyncPeriod), nil)
}

// secretFailed ends a pass whose Secret write failed.
func (k contractKind) secretFailed(found contractFound, c *storagev1alpha1.Contract, err error) contractOutcome {
	switch {
	case errors.Is(err, credentials.ErrSecretConflict):
		return k.secretConflict(found, c.SecretNameOrDefault())
	case errors.Is(err, credentials.ErrConfigMapConflict):
		return found.end(secretTaken{secret: c.SecretNameOrDefault(), configMap: true}, engine.WaitingRetry(k.ResyncPeriod), nil)
	case errors.Is(err, credentials.ErrUnsafeValue):
		// Nothing was written. A change of spec.formats wakes the Contract; the provider's
		// answer is looked at again after a while.
		return found.end(secretUnsafe{err}, engine.WaitingRetry(k.ResyncPeriod), nil)
	}
	return found.end(nil, 0, err)
}
