// Package v1alpha1 holds the admission webhooks of storage.osm.dev/v1alpha1: defaults that
// become visible in the stored object, and validation that stops bad input at `kubectl apply`
// with every problem and its field path, instead of leaving it for a controller to discover.
package v1alpha1

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// Options are what the platform decided that admission checks tenants' objects against.
type Options struct {
	// Endpoints are the S3 endpoints a Contract of spec.credentials may name.
	Endpoints egress.Allowlist
	// NotificationEndpoints are where a Bucket's notifications may push events.
	NotificationEndpoints egress.Allowlist
	// CostAdminRole is the ClusterRole that grants the verbs abandon, retain and empty, which a refusal
	// names; empty means DefaultCostAdminRole, config/default's name.
	CostAdminRole string
}

// SetupWebhooksWithManager registers the defaulting and validating webhooks of Contract, Bucket
// and BucketAccess, and the cost guard over all three, with the manager's webhook server.
func SetupWebhooksWithManager(mgr ctrl.Manager, opts Options) error {
	if err := SetupContractWebhookWithManager(mgr, opts.Endpoints); err != nil {
		return err
	}
	if err := SetupBucketWebhookWithManager(mgr, opts.NotificationEndpoints); err != nil {
		return err
	}
	if err := SetupBucketAccessWebhookWithManager(mgr); err != nil {
		return err
	}
	return setupCostGuard(mgr, opts.CostAdminRole)
}
