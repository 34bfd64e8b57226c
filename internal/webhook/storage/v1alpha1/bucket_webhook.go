package v1alpha1

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/naming"
)

// SetupBucketWebhookWithManager registers the Bucket defaulting and validating webhooks. The
// validator reads the manager's cache, and its API reader where the cache misses (see
// BucketValidator). internal/operator registers the field indexes before it sets up webhooks.
func SetupBucketWebhookWithManager(mgr ctrl.Manager, notificationEndpoints egress.Allowlist) error {
	return ctrl.NewWebhookManagedBy(mgr, &storagev1alpha1.Bucket{}).
		WithDefaulter(&BucketDefaulter{}).
		WithValidator(&BucketValidator{Cache: mgr.GetClient(), API: mgr.GetAPIReader(), NotificationEndpoints: notificationEndpoints}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-storage-osm-dev-v1alpha1-bucket,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=buckets,verbs=create;update,versions=v1alpha1,name=mbucket-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// BucketDefaulter fills in the defaults of a Bucket so that they are visible in the stored
// object.
type BucketDefaulter struct{}

var _ admission.Defaulter[*storagev1alpha1.Bucket] = &BucketDefaulter{}

// Default sets bucketReclaimPolicy to Retain when it is empty. The CRD carries the same default;
// the webhook keeps objects right even where the CRD's default is not applied (for example an
// older CRD still installed during an upgrade). A Bucket being created gets its finalizer.
func (d *BucketDefaulter) Default(ctx context.Context, b *storagev1alpha1.Bucket) error {
	finalizeAtCreation(ctx, b)
	if b.Spec.BucketReclaimPolicy == "" {
		b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-storage-osm-dev-v1alpha1-bucket,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=buckets,verbs=create;update,versions=v1alpha1,name=vbucket-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=list;watch

// BucketValidator rejects Buckets whose spec S3 would refuse or that the operator cannot act on,
// with every problem and its field path in one answer.
type BucketValidator struct {
	// Cache is the manager's cached client, on which index.Register ran. Admission reads it
	// first, so that a burst of creates does not cost the API server a request or three each.
	Cache client.Reader
	// API is the manager's API reader (uncached), asked only where Cache misses or fails: a
	// Contract and a Bucket applied together from one file reach the API server milliseconds
	// apart, before the informer has seen the Contract, and a cached miss must not refuse a
	// valid Bucket. Nor may a cache that cannot answer (not started yet, or a namespace it does
	// not watch) refuse one. An admitted create whose Contract is in the cache reads nothing
	// from the API server.
	API client.Reader
	// NotificationEndpoints are where notifications may push events; the empty list allows
	// none.
	NotificationEndpoints egress.Allowlist
}

var _ admission.Validator[*storagev1alpha1.Bucket] = &BucketValidator{}

var bucketGroupKind = storagev1alpha1.GroupVersion.WithKind("Bucket").GroupKind()

// ValidateCreate checks the whole spec and that the named Contract exists in the Bucket's
// namespace.
func (v *BucketValidator) ValidateCreate(ctx context.Context, b *storagev1alpha1.Bucket) (admission.Warnings, error) {
	// One read of the Contract serves both its existence check and its provider's resource prefix.
	var contract *storagev1alpha1.Contract
	var lookupErr error
	if len(validation.IsDNS1123Subdomain(b.Spec.ContractName)) == 0 {
		contract, lookupErr = v.contract(ctx, b)
	}
	errs := append(validateBucketSpec(&b.Spec, nil, resourcePrefix(contract)), v.checkNotificationEndpoints(&b.Spec, nil)...)
	for _, e := range errs {
		if e.Field == "spec.contractName" {
			// A malformed name is not looked up: the answer would be the lookup's own error.
			return nil, invalid(bucketGroupKind, b.Name, errs)
		}
	}
	contractCheck := func(ctx context.Context, b *storagev1alpha1.Bucket) (*field.Error, error) {
		return checkContract(ctx, b, contract, lookupErr)
	}
	loggingTarget := func(ctx context.Context, b *storagev1alpha1.Bucket) (*field.Error, error) {
		return v.checkLoggingTarget(ctx, b, nil)
	}
	for _, check := range []func(context.Context, *storagev1alpha1.Bucket) (*field.Error, error){contractCheck, v.checkBucketNameFree, loggingTarget} {
		fieldErr, err := check(ctx, b)
		if err != nil {
			return nil, err
		}
		if fieldErr != nil {
			errs = append(errs, fieldErr)
		}
	}
	return bucketWarnings(&b.Spec, nil), invalid(bucketGroupKind, b.Name, errs)
}

// bucketWarnings warns about what is legal but probably wrong in a new or changed spec.
func bucketWarnings(spec, old *storagev1alpha1.BucketSpec) admission.Warnings {
	warnings := append(securityWarnings(spec, old), websiteWarnings(spec, old)...)
	warnings = append(warnings, deletionWarnings(spec, old)...)
	if spec.Policy == nil || (old != nil && apiequality.Semantic.DeepEqual(spec.Policy, old.Policy)) {
		return warnings
	}
	return append(warnings, policyWarnings(spec.Policy.Raw)...)
}

// checkBucketNameFree returns a field error when another Bucket in the namespace already names
// the same bucket of the same Contract: two resources would fight over one bucket, so exactly
// one may. It lists the cache, so two Buckets created within the cache's lag (not only at the
// same instant) can both pass here; as before, the controller then lets only the first to
// record the bucket have it. The API server is listed only when the cache cannot answer.
func (v *BucketValidator) checkBucketNameFree(ctx context.Context, b *storagev1alpha1.Bucket) (*field.Error, error) {
	list, err := index.BucketsNamingBucket(ctx, v.Cache, b.Namespace, b.Spec.BucketName)
	if err != nil {
		logf.FromContext(ctx).V(1).Info("Listing the Buckets from the API server: the cache failed", "error", err.Error())
		list, err = index.BucketsNamingBucketUncached(ctx, v.API, b.Namespace, b.Spec.BucketName)
	}
	if err != nil {
		logf.FromContext(ctx).Error(err, "Listing the Buckets of the namespace")
		return nil, apierrors.NewInternalError(err)
	}
	for _, o := range list {
		if o.Name != b.Name && o.DeletionTimestamp == nil &&
			o.Spec.ContractName == b.Spec.ContractName && o.Spec.BucketName == b.Spec.BucketName {
			return field.Invalid(field.NewPath("spec", "bucketName"), b.Spec.BucketName, fmt.Sprintf(
				"Bucket %s in this namespace already manages this bucket of Contract %s, and exactly one may", o.Name, b.Spec.ContractName)), nil
		}
	}
	return nil, nil
}

// ValidateUpdate refuses changes to bucketName and contractName and checks the fields that
// changed. Fields left as they were are not checked again, so a Bucket admitted under older rules
// can still get its finalizer removed or its other fields edited.
func (v *BucketValidator) ValidateUpdate(ctx context.Context, oldB, newB *storagev1alpha1.Bucket) (admission.Warnings, error) {
	prefix := defaultResourcePrefix
	if !apiequality.Semantic.DeepEqual(newB.Spec.Policy, oldB.Spec.Policy) {
		contract, _ := v.contract(ctx, newB)
		prefix = resourcePrefix(contract)
	}
	errs := append(validateBucketSpec(&newB.Spec, &oldB.Spec, prefix), v.checkNotificationEndpoints(&newB.Spec, &oldB.Spec)...)
	fieldErr, err := v.checkLoggingTarget(ctx, newB, oldB)
	if err != nil {
		return nil, err
	}
	if fieldErr != nil {
		errs = append(errs, fieldErr)
	}
	return bucketWarnings(&newB.Spec, &oldB.Spec), invalid(bucketGroupKind, newB.Name, errs)
}

// defaultResourcePrefix is how AWS names buckets in policies, and what is expected of a provider
// that does not say otherwise.
const defaultResourcePrefix = "arn:aws:s3:::"

// resourcePrefix is how the provider of contract names buckets in policies, as the Contract's
// status reports it (the contract API's bucketPolicy); the AWS form when it says nothing or
// could not be read (nil; checkContract reports a missing Contract).
func resourcePrefix(contract *storagev1alpha1.Contract) string {
	if contract == nil || contract.Status.BucketPolicy == nil || contract.Status.BucketPolicy.ResourcePrefix == "" {
		return defaultResourcePrefix
	}
	return contract.Status.BucketPolicy.ResourcePrefix
}

// contract reads the Bucket's Contract from the cache and, when the cache does not have it or
// cannot answer, from the API server. Any cache error falls back rather than failing the
// admission: the API server is the authority, and its own error is what the user then sees.
func (v *BucketValidator) contract(ctx context.Context, b *storagev1alpha1.Bucket) (*storagev1alpha1.Contract, error) {
	key := types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.ContractName}
	var c storagev1alpha1.Contract
	err := v.Cache.Get(ctx, key, &c)
	if err == nil {
		return &c, nil
	}
	if !apierrors.IsNotFound(err) {
		logf.FromContext(ctx).V(1).Info("Reading the Contract from the API server: the cache failed", "contract", key.Name, "error", err.Error())
	}
	c = storagev1alpha1.Contract{}
	if err := v.API.Get(ctx, key, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// ValidateDelete allows every deletion; what deletion does is the controller's business.
func (v *BucketValidator) ValidateDelete(context.Context, *storagev1alpha1.Bucket) (admission.Warnings, error) {
	return nil, nil
}

// checkContract returns a field error when the Bucket's Contract, as contract read it, does not
// exist or is being deleted, and an error when the lookup itself failed. A Contract deleted
// within the cache's lag can still be named; the controller then reports ContractNotFound or
// ContractDeleting.
func checkContract(ctx context.Context, b *storagev1alpha1.Bucket, contract *storagev1alpha1.Contract, err error) (*field.Error, error) {
	name := b.Spec.ContractName
	if name == "" {
		// The CRD schema requires it; validateBucketSpec reports it as well.
		return nil, nil
	}
	path := field.NewPath("spec", "contractName")
	switch {
	case apierrors.IsNotFound(err):
		return field.Invalid(path, name, fmt.Sprintf("no Contract of this name in namespace %q", b.Namespace)), nil
	case err != nil:
		logf.FromContext(ctx).Error(err, "Looking up the Bucket's Contract", "contract", name)
		return nil, apierrors.NewInternalError(fmt.Errorf("looking up Contract %q: %w", name, err))
	case contract.DeletionTimestamp != nil:
		return field.Invalid(path, name, "the Contract is being deleted"), nil
	}
	return nil, nil
}

// validateBucketSpec checks spec. With old set (an update) it refuses changes to the immutable
// fields and checks only the fields that changed.
func validateBucketSpec(spec, old *storagev1alpha1.BucketSpec, resourcePrefix string) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")

	if old != nil {
		errs = append(errs, immutable(specPath.Child("bucketName"), spec.BucketName, old.BucketName)...)
		errs = append(errs, immutable(specPath.Child("contractName"), spec.ContractName, old.ContractName)...)
	}
	if old == nil || spec.BucketName != old.BucketName {
		if reasons := naming.ValidateBucketName(spec.BucketName); len(reasons) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("bucketName"), spec.BucketName, strings.Join(reasons, "; ")))
		}
	}
	if spec.ContractName == "" && old == nil {
		errs = append(errs, field.Required(specPath.Child("contractName"), "name the Contract whose account owns the bucket"))
	}
	errs = append(errs, validateDeletion(spec)...)
	if spec.ContractName != "" && (old == nil || spec.ContractName != old.ContractName) {
		for _, msg := range validation.IsDNS1123Subdomain(spec.ContractName) {
			errs = append(errs, field.Invalid(specPath.Child("contractName"), spec.ContractName,
				msg+" (the name of a Contract in this namespace)"))
		}
	}

	total, oldTotal := 0, 0
	for _, l := range grantListsOf(spec, old) {
		total, oldTotal = total+len(l.value), oldTotal+len(l.old)
		if old != nil && apiequality.Semantic.DeepEqual(l.value, l.old) {
			continue
		}
		errs = append(errs, validateGrantees(specPath.Child(l.name), l.value)...)
	}
	// The owner's own FULL_CONTROL grant counts towards S3's limit of 100 grants per ACL.
	if total > maxGrants-1 && total > oldTotal {
		errs = append(errs, field.Invalid(specPath, fmt.Sprintf("%d grants", total), fmt.Sprintf(
			"grantRead, grantWrite, grantReadAcp, grantWriteAcp and fullControl hold at most %d grants together: "+
				"S3 allows %d per bucket, one of them the owner's own", maxGrants-1, maxGrants)))
	}

	if old == nil || !apiequality.Semantic.DeepEqual(spec.Policy, old.Policy) || spec.BucketName != old.BucketName {
		if spec.Policy != nil {
			errs = append(errs, validatePolicy(specPath.Child("policy"), spec.Policy.Raw, resourcePrefix+spec.BucketName)...)
		}
	}
	errs = append(errs, validatePublicAccess(spec, old)...)
	errs = append(errs, validateOwnership(spec, old)...)
	errs = append(errs, validateNotifications(spec, old)...)
	return append(errs, validateBucketFeatures(spec, old)...)
}

// maxGrants is how many grants S3 accepts in one ACL.
const maxGrants = 100

// GroupURIs are the predefined S3 groups a grant of type url may name.
var GroupURIs = []string{
	"http://acs.amazonaws.com/groups/global/AllUsers",
	"http://acs.amazonaws.com/groups/global/AuthenticatedUsers",
	"http://acs.amazonaws.com/groups/s3/LogDelivery",
}

var granteeTypes = []storagev1alpha1.GranteeType{
	storagev1alpha1.GranteeTypeID,
	storagev1alpha1.GranteeTypeEmailAddress,
	storagev1alpha1.GranteeTypeURL,
}

// validateGrantees checks one grant list: known type, a value that fits the type, and each
// grantee named once.
func validateGrantees(path *field.Path, grantees []storagev1alpha1.Grantee) field.ErrorList {
	var errs field.ErrorList
	seen := map[storagev1alpha1.Grantee]bool{}
	for i, g := range grantees {
		p := path.Index(i)
		valuePath := p.Child("value")
		blank := strings.TrimSpace(g.Value) == ""
		if blank {
			errs = append(errs, field.Required(valuePath, "name the grantee"))
		}
		switch g.Type {
		case storagev1alpha1.GranteeTypeID:
		case storagev1alpha1.GranteeTypeEmailAddress:
			if !blank && !isEmailAddress(g.Value) {
				errs = append(errs, field.Invalid(valuePath, g.Value, "must be an e-mail address such as user@example.com"))
			}
		case storagev1alpha1.GranteeTypeURL:
			if !blank && !slices.Contains(GroupURIs, g.Value) {
				errs = append(errs, field.NotSupported(valuePath, g.Value, GroupURIs))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), string(g.Type), granteeTypes))
		}
		if !blank && seen[g] {
			errs = append(errs, field.Duplicate(p, g))
		}
		seen[g] = true
	}
	return errs
}

// isEmailAddress accepts a bare address (user@example.com), not a display form such as
// "User <user@example.com>", which S3 would not understand.
func isEmailAddress(s string) bool {
	addr, err := mail.ParseAddress(s)
	return err == nil && addr.Address == s && addr.Name == ""
}

// immutable returns an error when value differs from old, naming the old value so that the user
// can put it back.
func immutable(path *field.Path, value, old string) field.ErrorList {
	if value == old {
		return nil
	}
	was := "unset"
	if old != "" {
		was = fmt.Sprintf("%q", old)
	}
	return field.ErrorList{field.Invalid(path, value, fmt.Sprintf("cannot change (was %s)", was))}
}

// invalid turns errs into the Invalid status the API server shows the user (kubectl prints
// `The Bucket "x" is invalid: spec.bucketName: Invalid value: ...`), or nil when errs is empty.
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// grantList is one of the spec's grant lists, by its field name, beside the old spec's.
type grantList struct {
	name       string
	value, old []storagev1alpha1.Grantee
}

// grantListsOf pairs each grant list of spec with old's (nil old: none).
func grantListsOf(spec, old *storagev1alpha1.BucketSpec) []grantList {
	lists := []grantList{
		{"grantRead", spec.GrantRead, nil},
		{"grantWrite", spec.GrantWrite, nil},
		{"grantReadAcp", spec.GrantReadACP, nil},
		{"grantWriteAcp", spec.GrantWriteACP, nil},
		{"fullControl", spec.FullControl, nil},
	}
	if old != nil {
		for i, l := range [][]storagev1alpha1.Grantee{old.GrantRead, old.GrantWrite, old.GrantReadACP, old.GrantWriteACP, old.FullControl} {
			lists[i].old = l
		}
	}
	return lists
}
