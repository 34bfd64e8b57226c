// Package v1alpha1 holds the admission webhooks of storage.osm.dev/v1alpha1: defaults that
// become visible in the stored object, and validation that stops bad input at `kubectl apply`
// with every problem and its field path, instead of leaving it for a controller to discover.
package v1alpha1

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configures the storage webhooks.
type Options struct {
	// CostAdminRole is the ClusterRole that grants the verbs abandon and retain, which a refusal
	// names; empty means DefaultCostAdminRole, config/default's name.
	CostAdminRole string
}

// SetupWebhooksWithManager registers the defaulting and validating webhooks of Contract, Bucket
// and BucketAccess, and the cost guard over all three, with the manager's webhook server.
func SetupWebhooksWithManager(mgr ctrl.Manager, opts Options) error {
	if err := SetupContractWebhookWithManager(mgr); err != nil {
		return err
	}
	if err := SetupBucketWebhookWithManager(mgr); err != nil {
		return err
	}
	if err := SetupBucketAccessWebhookWithManager(mgr); err != nil {
		return err
	}
	return setupCostGuard(mgr, opts.CostAdminRole)
}
