package v1alpha1

import (
	"context"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// SetupContractWebhookWithManager registers the Contract defaulting and validating webhooks;
// endpoints are the S3 endpoints a Contract of spec.credentials may name.
func SetupContractWebhookWithManager(mgr ctrl.Manager, endpoints egress.Allowlist) error {
	return ctrl.NewWebhookManagedBy(mgr, &storagev1alpha1.Contract{}).
		WithDefaulter(&ContractDefaulter{}).
		WithValidator(&ContractValidator{Endpoints: endpoints}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-storage-osm-dev-v1alpha1-contract,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=contracts,verbs=create;update,versions=v1alpha1,name=mcontract-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// ContractDefaulter fills in the defaults of a Contract so that they are visible in the stored
// object.
type ContractDefaulter struct{}

var _ admission.Defaulter[*storagev1alpha1.Contract] = &ContractDefaulter{}

// Default sets, on a Contract being created without them, reclaimPolicy (Delete for a bought
// Contract, so deleting it stops what it costs; Retain for an account the user has, which is
// never closed) and, for a Contract that buys its account, secretName to "<name>-credentials".
// A Contract being created gets its finalizer.
//
// reclaimPolicy is defaulted at creation only: an update never turns a stored empty value (a
// Contract created with the webhooks off, which keeps its contract) into Delete.
//
// A Contract created with only metadata.generateName may reach the webhook before the API server
// has chosen its name. Then secretName stays empty rather than being made up from the prefix:
// the controller falls back to the same "<name>-credentials" (Contract.SecretNameOrDefault), and
// any later update of the Contract, such as the controller adding its finalizer, fills it in here.
func (d *ContractDefaulter) Default(ctx context.Context, c *storagev1alpha1.Contract) error {
	finalizeAtCreation(ctx, c)
	if c.Spec.ReclaimPolicy == "" && creating(ctx) {
		c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		if c.Spec.Credentials != nil {
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		}
	}
	if c.Spec.SecretName == "" && c.Spec.Credentials == nil {
		if c.Name == "" {
			logf.FromContext(ctx).V(1).Info("Leaving secretName empty until the Contract has a name", "generateName", c.GenerateName)
			return nil
		}
		c.Spec.SecretName = c.SecretNameOrDefault()
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-storage-osm-dev-v1alpha1-contract,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=contracts,verbs=create;update,versions=v1alpha1,name=vcontract-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// ContractValidator rejects Contracts without a plan, with a secretName no Secret can have, with
// an S3 endpoint the platform does not allow, and changes of plan or region, which the provider
// cannot make to a running contract.
type ContractValidator struct {
	// Endpoints are the S3 endpoints a Contract of spec.credentials may name; the empty list
	// allows none.
	Endpoints egress.Allowlist
}

var _ admission.Validator[*storagev1alpha1.Contract] = &ContractValidator{}

var contractGroupKind = storagev1alpha1.GroupVersion.WithKind("Contract").GroupKind()

// ValidateCreate checks the whole spec.
func (v *ContractValidator) ValidateCreate(_ context.Context, c *storagev1alpha1.Contract) (admission.Warnings, error) {
	return nil, invalid(contractGroupKind, c.Name, append(validateContractSpec(&c.Spec, nil), v.checkEndpoint(&c.Spec, nil)...))
}

// ValidateUpdate refuses changes to plan and region and checks secretName when it changed.
func (v *ContractValidator) ValidateUpdate(_ context.Context, oldC, newC *storagev1alpha1.Contract) (admission.Warnings, error) {
	return nil, invalid(contractGroupKind, newC.Name, append(validateContractSpec(&newC.Spec, &oldC.Spec), v.checkEndpoint(&newC.Spec, &oldC.Spec)...))
}

// checkEndpoint refuses an S3 endpoint of spec.credentials that the platform does not allow, when
// it is new. One left in the Secret (AWS_ENDPOINT_URL) is checked by the controller, which
// never calls an endpoint the list does not allow either.
func (v *ContractValidator) checkEndpoint(spec, old *storagev1alpha1.ContractSpec) field.ErrorList {
	if spec.Credentials == nil || spec.Credentials.Endpoint == "" ||
		old != nil && old.Credentials != nil && old.Credentials.Endpoint == spec.Credentials.Endpoint {
		return nil
	}
	if err := v.Endpoints.CheckURL(spec.Credentials.Endpoint); err != nil {
		return field.ErrorList{field.Forbidden(field.NewPath("spec", "credentials", "endpoint"), endpointRefusal(err, v.Endpoints, egress.EndpointsFlag))}
	}
	return nil
}

// endpointRefusal says why admission refuses an endpoint, and which endpoints the platform
// allows (by the manager's flag named flag): a tenant cannot read the manager's flags.
func endpointRefusal(err error, allowed egress.Allowlist, flag string) string {
	if allowed.Empty() {
		return err.Error() + ": the platform allows none (the manager's --" + flag + " is empty); ask your platform team"
	}
	return err.Error() + "; the platform allows " + allowed.String()
}

// ValidateDelete allows every deletion; the controller holds a Contract while Buckets name it.
func (v *ContractValidator) ValidateDelete(context.Context, *storagev1alpha1.Contract) (admission.Warnings, error) {
	return nil, nil
}

// validateContractSpec checks spec. With old set (an update) it refuses changes to plan,
// region and displayName and checks only the fields that changed.
func validateContractSpec(spec, old *storagev1alpha1.ContractSpec) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	if old != nil {
		errs = append(errs, immutable(specPath.Child("plan"), spec.Plan, old.Plan)...)
		errs = append(errs, immutable(specPath.Child("region"), spec.Region, old.Region)...)
		// Sent when bought; the contract API cannot rename a contract.
		errs = append(errs, immutable(specPath.Child("displayName"), spec.DisplayName, old.DisplayName)...)
	}
	if spec.Credentials != nil {
		return append(errs, validateExistingAccount(spec, old)...)
	}
	if strings.TrimSpace(spec.Plan) == "" && (old == nil || spec.Plan != old.Plan) {
		errs = append(errs, field.Required(specPath.Child("plan"),
			`name the provider's plan, for example "standard", or use an account you have with spec.credentials`))
	}
	if spec.SecretName != "" && (old == nil || spec.SecretName != old.SecretName) {
		if msgs := validation.IsDNS1123Subdomain(spec.SecretName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("secretName"), spec.SecretName,
				"must be a valid Secret name: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// validateExistingAccount checks a Contract of spec.credentials: nothing is bought, so what only a
// purchase means (a plan, a region to buy in, where to write keys, cancelling, rotating) is
// refused rather than silently ignored.
func validateExistingAccount(spec, old *storagev1alpha1.ContractSpec) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	credsPath := specPath.Child("credentials")
	if old != nil && !apiequality.Semantic.DeepEqual(spec.Credentials, old.Credentials) {
		errs = append(errs, field.Forbidden(credsPath, "cannot change: create another Contract for another account (the keys in the Secret may change)"))
	}
	notBought := func(path *field.Path, what string) {
		errs = append(errs, field.Forbidden(path, what+": spec.credentials uses an account you have, and nothing is bought"))
	}
	if spec.Plan != "" {
		notBought(specPath.Child("plan"), "set exactly one of plan and credentials")
	}
	if spec.Region != "" {
		notBought(specPath.Child("region"), "use spec.credentials.region")
	}
	if spec.SecretName != "" {
		notBought(specPath.Child("secretName"), "the keys stay in spec.credentials.secretName, and are not copied")
	}
	if spec.ReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete {
		notBought(specPath.Child("reclaimPolicy"), "reclaimPolicy does not apply: deleting the Contract never closes the account")
	}
	if spec.KeyRotation != nil {
		notBought(specPath.Child("keyRotation"), "the operator cannot make keys for this account: put new keys in the Secret, and they are used at once")
	}
	if msgs := validation.IsDNS1123Subdomain(spec.Credentials.SecretName); len(msgs) > 0 {
		errs = append(errs, field.Invalid(credsPath.Child("secretName"), spec.Credentials.SecretName,
			"must be a valid Secret name: "+strings.Join(msgs, "; ")))
	}
	return errs
}
