package storage

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// Delete waits until no Bucket names the Contract, then does what its reclaim policy says:
// Delete cancels the contract and deletes its Secret; Retain leaves the contract running, with
// its keys in a Secret that outlives the Contract.
func (k contractKind) Delete(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract]) contractOutcome {
	buckets, err := k.bucketsNaming(ctx, c)
	if err != nil {
		return contractOutcome{Err: err}
	}
	found := contractFound{buckets: &buckets}
	if len(buckets) > 0 && existingAccount(c) {
		// Its Buckets finish their deletion with its account: one whose check failed (an endpoint
		// that timed out, keys since fixed) is checked again, or they would wait for it forever.
		return k.useExisting(ctx, c, found)
	}
	if len(buckets) > 0 {
		return found.end(nil, 0, nil) // the Bucket watch wakes this Contract when the Buckets go
	}
	if existingAccount(c) {
		return k.releaseExisting(ctx, c, p, found) // nothing was bought, so nothing is cancelled
	}
	// Whatever the policy, first learn a contract whose purchase answer was lost: Delete must
	// cancel it, and Retain must leave its keys somewhere.
	learned, out, done := k.learnContract(ctx, c, p, found)
	if done {
		return out
	}
	if !cancels(c) && c.Status.ContractID != "" && c.Status.State != string(contractapi.Cancelled) {
		if out, done := k.settleKeys(ctx, c, p, found); done {
			return out
		}
	}
	if out, done := k.settleAtProvider(ctx, c, learned, found); done {
		return out
	}
	k.observed.Delete(c.UID)
	return found.end(nil, 0, p.Release(ctx))
}

// learnContract finds the contract a deletion must cancel or keep when none was recorded: a
// purchase whose answer was lost. Asking again returns it, with its keys; a refusal means
// nothing was bought. Asking again can also buy it, when the first request never reached the
// provider: such a contract is recorded as boughtAtDeletion, and cancelled whatever the reclaim
// policy, since no one ever held its keys. done says the pass ends with out.
func (k contractKind) learnContract(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract],
	found contractFound) (learned *contractclient.Contract, out contractOutcome, done bool) {
	if c.Status.ContractID != "" || !c.Status.PurchaseRequested {
		return nil, contractOutcome{}, false
	}
	got, created, err := k.API.Buy(ctx, string(c.UID), purchaseRequest(c))
	if err != nil {
		if contractclient.NothingStored(err) {
			return nil, contractOutcome{}, false // the request itself was refused: nothing was bought
		}
		return nil, k.apiFailed(found, err), true
	}
	if !created {
		c.Status.ContractID = got.ID
		return &got, contractOutcome{}, false
	}
	if err := p.Record(ctx, func(o *storagev1alpha1.Contract) { o.Status.ContractID, o.Status.BoughtAtDeletion = got.ID, true }); err != nil {
		return nil, found.end(nil, 0, fmt.Errorf("recording the contract the deletion bought: %w", err)), true
	}
	k.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "ContractBoughtAtDeletion", "Delete",
		"Asking again for a purchase whose answer was lost bought contract %s only now: the first request never reached the provider; it is cancelled", got.ID)
	return nil, contractOutcome{}, false
}

// cancels reports whether the Contract's deletion cancels its contract: its reclaim policy
// says so, or the deletion bought it.
func cancels(c *storagev1alpha1.Contract) bool {
	return c.Spec.ReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete || c.Status.BoughtAtDeletion
}

// settleKeys, before a Contract whose contract stays goes, finishes a rotation under way and
// revokes the keys it replaced once their overlap has passed (credentials.Keys.Settle). done
// says the pass ends with out: it waits, or failed.
func (k contractKind) settleKeys(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract],
	found contractFound) (contractOutcome, bool) {
	if c.Status.PendingKey == nil && len(c.Status.RetiringKeys) == 0 {
		return contractOutcome{}, false
	}
	secret, err := k.secrets().Read(ctx, c, c.SecretNameOrDefault())
	switch {
	case errors.Is(err, credentials.ErrSecretConflict):
		return k.secretConflict(found, c.SecretNameOrDefault()), true
	case err != nil:
		return found.end(nil, 0, err), true
	}
	keys, _ := k.keys(c, p, secret, "", nil)
	res, waiting := keys.Settle(ctx)
	found.keys = res.Found
	switch {
	case errors.Is(res.Err, credentials.ErrSecretConflict):
		return k.secretConflict(found, c.SecretNameOrDefault()), true
	case res.Err != nil || res.After > 0 && !waiting:
		return found.end(nil, res.After, res.Err), true
	case waiting:
		found.keys = credentials.Finding{State: credentials.Current}
		return found.end(keysRetiring{}, res.After, nil), true
	}
	return contractOutcome{}, false
}

// settleAtProvider does what the reclaim policy says before the Contract goes: Delete cancels
// the contract and deletes its Secret; Retain leaves the contract and its keys in a Secret that
// outlives the Contract. learned is a contract whose purchase answer was lost, if any. done says
// the pass ends with out.
func (k contractKind) settleAtProvider(ctx context.Context, c *storagev1alpha1.Contract, learned *contractclient.Contract,
	found contractFound) (contractOutcome, bool) {
	secret, err := k.secrets().Read(ctx, c, c.SecretNameOrDefault())
	foreign := errors.Is(err, credentials.ErrSecretConflict)
	if err != nil && !foreign {
		return found.end(nil, 0, err), true
	}
	switch {
	case cancels(c) && c.Status.ContractID != "":
		if out, done := k.cancelAtProvider(ctx, c, found); done {
			return out, true
		}
		// The keys are dead: the Secret goes with the contract.
		if secret != nil {
			if err := k.deleteSecret(ctx, c, secret); err != nil {
				return found.end(nil, 0, err), true
			}
		}
	case learned != nil && !learned.Cancelled() && foreign:
		// Retain, the keys never reached a Secret, and their name is taken by another: they
		// must land somewhere before this resource goes.
		return k.secretConflict(found, c.SecretNameOrDefault()), true
	case learned != nil && !learned.Cancelled() && secret == nil:
		// Retain, and the keys never reached a Secret: write them, unowned, so they outlive
		// this resource with the contract they open.
		c.Status.Endpoint, c.Status.Region = learned.Endpoint, learned.Region
		held := k.heldSecret(c, nil)
		if err := held.write(ctx, learned.Credentials); err != nil {
			return k.secretFailed(found, c, err), true
		}
		return k.retainSecret(ctx, c, held.secret, found)
	case secret != nil:
		return k.retainSecret(ctx, c, secret, found)
	}
	return contractOutcome{}, false
}

// retainSecret lets the Secret outlive the Contract: Retain keeps the contract running, so its
// credentials must stay, and without the owner reference the garbage collector leaves them.
func (k contractKind) retainSecret(ctx context.Context, c *storagev1alpha1.Contract, secret *corev1.Secret, found contractFound) (contractOutcome, bool) {
	if err := k.releaseSecret(ctx, c, secret, true); err != nil {
		return found.end(nil, 0, err), true
	}
	k.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "SecretRetained", "Delete",
		"Contract %s stays at the provider (reclaimPolicy Retain); Secret %s keeps its credentials", c.Status.ContractID, secret.Name)
	return contractOutcome{}, false
}

// cancelAtProvider cancels the contract. done says the pass ends with out: it is not gone yet.
func (k contractKind) cancelAtProvider(ctx context.Context, c *storagev1alpha1.Contract, found contractFound) (contractOutcome, bool) {
	logf.FromContext(ctx).V(1).Info("Cancelling the contract", "contractID", c.Status.ContractID)
	err := k.API.Cancel(ctx, c.Status.ContractID)
	switch {
	case err == nil:
		why := "reclaimPolicy Delete"
		if c.Status.BoughtAtDeletion {
			why = "bought by the deletion itself"
		}
		k.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "ContractCancelled", "Delete",
			"Cancelled contract %s at the provider (%s)", c.Status.ContractID, why)
		return contractOutcome{}, false
	case errors.Is(err, contractclient.ErrNotFound):
		return contractOutcome{}, false // already gone at the provider: nothing left to cancel
	case errors.Is(err, contractclient.ErrHasBuckets):
		return found.end(hasBuckets{c.Status.ContractID}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	}
	return k.apiFailed(found, err), true
}

// deleteSecret lets go of the Contract's Secret and deletes it.
func (k contractKind) deleteSecret(ctx context.Context, c *storagev1alpha1.Contract, secret *corev1.Secret) error {
	if err := k.releaseSecret(ctx, c, secret, false); err != nil {
		return err
	}
	if err := k.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Secret %q: %w", secret.Name, err)
	}
	return nil
}

// removeStaleSecrets deletes this Contract's Secrets under names it no longer uses (after a
// change of spec.secretName), so no second copy of the keys lingers.
func (k contractKind) removeStaleSecrets(ctx context.Context, c *storagev1alpha1.Contract) error {
	var list corev1.SecretList
	if err := k.List(ctx, &list, client.InNamespace(c.Namespace),
		client.MatchingLabels{storagev1alpha1.ContractLabel: c.Name}); err != nil {
		return fmt.Errorf("listing Secrets of Contract %q: %w", c.Name, err)
	}
	for i := range list.Items {
		old := &list.Items[i]
		if old.Name == c.SecretNameOrDefault() || !metav1.IsControlledBy(old, c) {
			continue
		}
		if err := k.deleteSecret(ctx, c, old); err != nil {
			return err
		}
		k.Recorder.Eventf(c, old, corev1.EventTypeNormal, "SecretDeleted", "Delete",
			"Deleted Secret %s: the credentials now live in Secret %s", old.Name, c.SecretNameOrDefault())
	}
	return nil
}

func (k contractKind) namespaceTerminating(ctx context.Context, name string) (bool, error) {
	// Read from the API server, not a cache of every Namespace: this is rare (a Secret being
	// deleted), and get on its own namespace is all a manager limited to some namespaces has.
	ns := &corev1.Namespace{}
	if err := k.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}

// releaseSecret removes this Contract's finalizer from its Secret, and with orphan also its owner
// reference, so the Secret outlives the Contract.
func (k contractKind) releaseSecret(ctx context.Context, c *storagev1alpha1.Contract, secret *corev1.Secret, orphan bool) error {
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := controllerutil.RemoveFinalizer(secret, Finalizer)
	if orphan {
		secret.OwnerReferences = removeOwner(secret.OwnerReferences, c.UID)
		changed = true
	}
	if !changed {
		return nil
	}
	if err := k.Patch(ctx, secret, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("releasing Secret %q: %w", secret.Name, err)
	}
	return nil
}
