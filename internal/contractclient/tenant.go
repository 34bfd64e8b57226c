package contractclient

import (
	"context"
	"net/http"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// tenantKey is the context key of the tenant WithTenant sets.
type tenantKey struct{}

// WithTenant returns ctx saying that the calls made with it are for namespace: the Kubernetes
// namespace of the resource a pass reconciles (for the COSI driver, the namespace of the
// BucketClass's Contract). Every call of Client sends it as contractapi.TenantHeader, and the
// provider budgets its requests per tenant, so one namespace's churn cannot starve the others.
// Set it once, where a pass starts (engine.Reconciler.Reconcile).
func WithTenant(ctx context.Context, namespace string) context.Context {
	return context.WithValue(ctx, tenantKey{}, namespace)
}

// TenantOf is the tenant WithTenant put in ctx; "" when none.
func TenantOf(ctx context.Context) string {
	tenant, _ := ctx.Value(tenantKey{}).(string)
	return tenant
}

// sendTenant is the request editor every call of Client passes: it names ctx's tenant. A call
// without one sends no header, and the provider counts it with every other such call.
func sendTenant(ctx context.Context, req *http.Request) error {
	if tenant := TenantOf(ctx); tenant != "" {
		req.Header.Set(contractapi.TenantHeader, tenant)
	}
	return nil
}
