package contractapi

// TenantHeader names the tenant a request is for: the Kubernetes namespace of the resource the
// call is made for (openapi/contract.yaml, components.parameters.Tenant). It is a common header
// of every operation, so the generated calls do not take it: a client sets it in a request
// editor, and a server reads it before routing, where it budgets requests per tenant.
const TenantHeader = "OSM-Tenant"
