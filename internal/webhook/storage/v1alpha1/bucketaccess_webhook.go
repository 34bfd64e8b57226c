package v1alpha1

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// SetupBucketAccessWebhookWithManager registers the BucketAccess defaulting and validating
// webhooks. The validator reads Buckets, Contracts and BucketAccesses through the manager's API
// reader (see BucketAccessValidator.Reader).
func SetupBucketAccessWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &storagev1alpha1.BucketAccess{}).
		WithDefaulter(&BucketAccessDefaulter{}).
		WithValidator(&BucketAccessValidator{Reader: mgr.GetAPIReader()}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-storage-osm-dev-v1alpha1-bucketaccess,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=bucketaccesses,verbs=create;update,versions=v1alpha1,name=mbucketaccess-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// BucketAccessDefaulter fills in the defaults of a BucketAccess so that they are visible in the
// stored object.
type BucketAccessDefaulter struct{}

var _ admission.Defaulter[*storagev1alpha1.BucketAccess] = &BucketAccessDefaulter{}

// Default sets secretName to "<name>-credentials" when it is empty. Written into the object, the
// Secret's name is in plain sight, and the CRD's rule that secretName cannot change then guards
// it from the first update on (the rule compares two set values only).
//
// rotation.overlap is left as it is: a default written in would stay when period changes later,
// and the default (a tenth of period, at most one hour) is meant to follow period.
//
// A BucketAccess created with only metadata.generateName reaches this webhook before the API
// server has chosen its name; then secretName stays empty, the controller uses the same
// default (BucketAccess.SecretNameOrDefault), and the next update fills it in here. A
// BucketAccess being created gets its finalizer.
func (d *BucketAccessDefaulter) Default(ctx context.Context, a *storagev1alpha1.BucketAccess) error {
	finalizeAtCreation(ctx, a)
	if a.Spec.SecretName == "" {
		if a.Name == "" {
			logf.FromContext(ctx).V(1).Info("Leaving secretName empty until the BucketAccess has a name", "generateName", a.GenerateName)
			return nil
		}
		a.Spec.SecretName = a.SecretNameOrDefault()
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-storage-osm-dev-v1alpha1-bucketaccess,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=bucketaccesses,verbs=create;update,versions=v1alpha1,name=vbucketaccess-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get
// +kubebuilder:rbac:groups=storage.osm.dev,resources=contracts;bucketaccesses,verbs=list

// BucketAccessValidator rejects BucketAccesses the operator could not serve, or that would
// overwrite credentials someone else holds, with every problem and its field path in one answer.
type BucketAccessValidator struct {
	// Reader looks up, on create, the Bucket, the namespace's Contracts (whose Secrets hold the
	// accounts' keys) and the namespace's BucketAccesses (whose Secrets are taken). The manager's
	// API reader (uncached) is the right one: a Bucket and a BucketAccess applied together from
	// one file reach the API server moments apart, before an informer cache could have seen the
	// Bucket. A create costs one GET and two LISTs.
	Reader client.Reader
}

var _ admission.Validator[*storagev1alpha1.BucketAccess] = &BucketAccessValidator{}

var bucketAccessGroupKind = storagev1alpha1.GroupVersion.WithKind("BucketAccess").GroupKind()

// MinRotationPeriod is the shortest rotation.period: a new key needs time to reach its
// consumers (a kubelet refreshes a mounted Secret within about a minute) before the next one
// replaces it.
const MinRotationPeriod = time.Minute

// maxBucketAccessName is the longest BucketAccess name: it is the value of the
// storage.osm.dev/bucket-access label on its Secret, and label values are at most 63 characters.
const maxBucketAccessName = validation.LabelValueMaxLength

// ValidateCreate checks the name and the whole spec, that each Bucket exists in the namespace and
// is not being deleted, that they all belong to one Contract, and that the Secret is no
// Contract's and no other BucketAccess's. It warns when a Bucket is not Ready yet.
func (v *BucketAccessValidator) ValidateCreate(ctx context.Context, a *storagev1alpha1.BucketAccess) (admission.Warnings, error) {
	errs := validateBucketAccessName(a)
	errs = append(errs, validateBucketAccessSpec(a, nil)...)
	for _, e := range errs {
		if strings.HasPrefix(e.Field, "spec.bucket") {
			// A malformed name is not looked up: the answer would be the lookup's own error.
			return nil, invalid(bucketAccessGroupKind, a.Name, errs)
		}
	}
	bucketErrs, warnings, err := v.checkBuckets(ctx, a, nil)
	if err != nil {
		return nil, err
	}
	errs = append(errs, bucketErrs...)
	if !hasError(errs, "spec.secretName") {
		secretErr, err := v.checkSecretFree(ctx, a)
		if err != nil {
			return nil, err
		}
		if secretErr != nil {
			errs = append(errs, secretErr)
		}
	}
	return warnings, invalid(bucketAccessGroupKind, a.Name, errs)
}

// ValidateUpdate refuses changes to bucket and secretName and checks the fields that changed; a
// Bucket added to spec.buckets is looked up as on create. An update that leaves the spec alone
// (labels, finalizers, the rotate-key annotation) is always allowed, so a BucketAccess admitted
// under older rules, or whose Bucket is gone, stays manageable.
func (v *BucketAccessValidator) ValidateUpdate(ctx context.Context, oldA, newA *storagev1alpha1.BucketAccess) (admission.Warnings, error) {
	errs := validateBucketAccessSpec(newA, oldA)
	if len(errs) > 0 {
		return nil, invalid(bucketAccessGroupKind, newA.Name, errs)
	}
	errs, warnings, err := v.checkBuckets(ctx, newA, oldA)
	if err != nil {
		return nil, err
	}
	return warnings, invalid(bucketAccessGroupKind, newA.Name, errs)
}

// ValidateDelete allows every deletion; revoking the keys is the controller's business.
func (v *BucketAccessValidator) ValidateDelete(context.Context, *storagev1alpha1.BucketAccess) (admission.Warnings, error) {
	return nil, nil
}

func hasError(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

// validateBucketAccessName refuses a name that cannot label the credentials Secret. Names never
// change, so this runs on create only.
func validateBucketAccessName(a *storagev1alpha1.BucketAccess) field.ErrorList {
	if len(a.Name) <= maxBucketAccessName {
		return nil // an empty name (generateName): the API server makes one short enough
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), a.Name, fmt.Sprintf(
		"a BucketAccess's name is at most %d characters: it is the value of the %s label on its Secret",
		maxBucketAccessName, storagev1alpha1.BucketAccessLabel))}
}

var accessModes = []storagev1alpha1.AccessMode{
	storagev1alpha1.AccessReadOnly, storagev1alpha1.AccessReadWrite, storagev1alpha1.AccessWriteOnly,
}

// validateBucketAccessSpec checks a's spec. With old set (an update) it refuses changes to bucket
// and secretName and checks only the fields that changed.
func validateBucketAccessSpec(a, old *storagev1alpha1.BucketAccess) field.ErrorList {
	spec := &a.Spec
	var oldSpec *storagev1alpha1.BucketAccessSpec
	if old != nil {
		oldSpec = &old.Spec
		if apiequality.Semantic.DeepEqual(*spec, *oldSpec) {
			return nil
		}
	}
	var errs field.ErrorList
	specPath := field.NewPath("spec")

	if oldSpec != nil {
		errs = append(errs, immutable(specPath.Child("bucket"), string(spec.Bucket), string(oldSpec.Bucket))...)
		errs = append(errs, immutableSecretName(specPath.Child("secretName"), a, old)...)
	}
	if len(spec.Buckets) > 0 || (oldSpec != nil && len(oldSpec.Buckets) > 0) {
		errs = append(errs, validateBucketList(specPath, spec, oldSpec)...)
	} else {
		switch {
		case spec.Bucket == "" && oldSpec == nil:
			errs = append(errs, field.Required(specPath.Child("bucket"), "name the Bucket, in this namespace, the credentials are for (or several in spec.buckets)"))
		case spec.Bucket != "" && (oldSpec == nil || spec.Bucket != oldSpec.Bucket):
			errs = append(errs, validateBucketName(specPath.Child("bucket"), spec.Bucket)...)
		}
		if oldSpec == nil || spec.Access != oldSpec.Access {
			errs = append(errs, validateAccessMode(specPath.Child("access"), spec.Access)...)
		}
	}

	if spec.SecretName != "" && (oldSpec == nil || spec.SecretName != oldSpec.SecretName) {
		if msgs := validation.IsDNS1123Subdomain(spec.SecretName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("secretName"), spec.SecretName,
				"must be a valid Secret name: "+strings.Join(msgs, "; ")))
		}
	}

	if spec.Rotation != nil && (oldSpec == nil || !apiequality.Semantic.DeepEqual(spec.Rotation, oldSpec.Rotation)) {
		errs = append(errs, validateRotation(specPath.Child("rotation"), spec.Rotation)...)
	}
	return append(errs, validateAuthentication(specPath, spec, oldSpec)...)
}

// authenticationOrDefault is spec.authentication, Key when unset (the CRD's default, and what
// a BucketAccess stored before the field was).
func authenticationOrDefault(spec *storagev1alpha1.BucketAccessSpec) storagev1alpha1.Authentication {
	if spec.Authentication == "" {
		return storagev1alpha1.AuthenticationKey
	}
	return spec.Authentication
}

// validateAuthentication checks spec.authentication and what goes with it: it never changes;
// ServiceAccount names a ServiceAccount of the namespace, and takes neither a Secret format
// other than env nor a rotation, which are a key's; Key names no ServiceAccount.
func validateAuthentication(specPath *field.Path, spec, oldSpec *storagev1alpha1.BucketAccessSpec) field.ErrorList {
	var errs field.ErrorList
	auth, path := authenticationOrDefault(spec), specPath.Child("authentication")
	if oldSpec != nil {
		if was := authenticationOrDefault(oldSpec); auth != was {
			return field.ErrorList{field.Invalid(path, string(spec.Authentication), fmt.Sprintf(
				"cannot change (was %s): a key and a role are different credentials; make a new BucketAccess", was))}
		}
	}
	saPath := specPath.Child("serviceAccountName")
	switch auth {
	case storagev1alpha1.AuthenticationKey:
		if spec.ServiceAccountName != "" {
			errs = append(errs, field.Forbidden(saPath, "goes with spec.authentication: ServiceAccount; a key is not tied to a ServiceAccount"))
		}
		return errs
	case storagev1alpha1.AuthenticationServiceAccount:
	default:
		return field.ErrorList{field.NotSupported(path, spec.Authentication,
			[]storagev1alpha1.Authentication{storagev1alpha1.AuthenticationKey, storagev1alpha1.AuthenticationServiceAccount})}
	}
	switch {
	case spec.ServiceAccountName == "":
		errs = append(errs, field.Required(saPath, "name the ServiceAccount, in this namespace, whose tokens assume the role"))
	case oldSpec == nil || spec.ServiceAccountName != oldSpec.ServiceAccountName:
		if msgs := validation.IsDNS1123Subdomain(spec.ServiceAccountName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(saPath, spec.ServiceAccountName,
				"must be the name of a ServiceAccount in this namespace: "+strings.Join(msgs, "; ")))
		}
	}
	for i, f := range spec.Formats {
		if f != storagev1alpha1.FormatEnv {
			errs = append(errs, field.Forbidden(specPath.Child("formats").Index(i), fmt.Sprintf(
				"%s holds a key pair, and with spec.authentication ServiceAccount there is none: only env (the role's ARN and the endpoints)", f)))
		}
	}
	if spec.Rotation != nil {
		errs = append(errs, field.Forbidden(specPath.Child("rotation"),
			"goes with spec.authentication Key: with ServiceAccount there is no key to rotate, the credentials STS returns expire by themselves"))
	}
	return errs
}

// validateBucketName checks that name can be a Bucket's.
func validateBucketName(path *field.Path, name storagev1alpha1.BucketName) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg+" (the name of a Bucket in this namespace)"))
	}
	return errs
}

// validateAccessMode checks that mode is one of the three.
func validateAccessMode(path *field.Path, mode storagev1alpha1.AccessMode) field.ErrorList {
	switch mode {
	case storagev1alpha1.AccessReadOnly, storagev1alpha1.AccessReadWrite, storagev1alpha1.AccessWriteOnly:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "say what the credentials may do: ReadOnly, ReadWrite or WriteOnly")}
	}
	return field.ErrorList{field.NotSupported(path, mode, accessModes)}
}

// validateBucketList checks the list form (spec.buckets): that it is the only form, keeps being
// it, holds at most MaxAccessBuckets items each named once, and that each item changed names a
// Bucket and an access. The CRD's rules say the same first; this is what a cluster without them
// (or an older CRD) still enforces.
func validateBucketList(specPath *field.Path, spec, oldSpec *storagev1alpha1.BucketAccessSpec) field.ErrorList {
	var errs field.ErrorList
	path := specPath.Child("buckets")
	switch {
	case oldSpec != nil && (len(oldSpec.Buckets) > 0) != (len(spec.Buckets) > 0):
		return field.ErrorList{field.Forbidden(path,
			"a BucketAccess keeps its form: spec.bucket cannot become spec.buckets or the reverse (make a new BucketAccess)")}
	case spec.Bucket != "":
		errs = append(errs, field.Forbidden(specPath.Child("bucket"), "name either spec.bucket (one Bucket) or spec.buckets (several), not both"))
	}
	if spec.Access != "" {
		errs = append(errs, field.Forbidden(specPath.Child("access"), "spec.access goes with spec.bucket; with spec.buckets each item says its access"))
	}
	if spec.Prefix != "" {
		errs = append(errs, field.Forbidden(specPath.Child("prefix"), "spec.prefix goes with spec.bucket; with spec.buckets each item says its prefix"))
	}
	if len(spec.Buckets) > storagev1alpha1.MaxAccessBuckets {
		errs = append(errs, field.TooMany(path, len(spec.Buckets), storagev1alpha1.MaxAccessBuckets))
	}
	was := map[storagev1alpha1.BucketName]storagev1alpha1.AccessBucket{}
	if oldSpec != nil {
		for _, b := range oldSpec.Buckets {
			was[b.Name] = b
		}
	}
	seen := map[storagev1alpha1.BucketName]bool{}
	envNames := map[string]storagev1alpha1.BucketName{}
	for i, b := range spec.Buckets {
		item := path.Index(i)
		if seen[b.Name] {
			errs = append(errs, field.Duplicate(item.Child("name"), b.Name))
			continue
		}
		seen[b.Name] = true
		env := storagev1alpha1.EnvNameOf(string(b.Name))
		if other, taken := envNames[env]; taken {
			errs = append(errs, field.Invalid(item.Child("name"), b.Name, fmt.Sprintf(
				"its variables in the Secret would be those of Bucket %s (BUCKET_NAME_%s): name the Buckets so that they differ in more than '-' and '.'", other, env)))
		}
		envNames[env] = b.Name
		if old, ok := was[b.Name]; ok && old == b {
			continue
		}
		errs = append(errs, validateBucketName(item.Child("name"), b.Name)...)
		errs = append(errs, validateAccessMode(item.Child("access"), b.Access)...)
	}
	for i, f := range spec.Formats {
		if f == storagev1alpha1.FormatCOSI || f == storagev1alpha1.FormatOBC {
			errs = append(errs, field.Invalid(specPath.Child("formats").Index(i), f, fmt.Sprintf(
				"%s describes one bucket per Secret, and spec.buckets has several: use env, aws-files, rclone or s3cfg, "+
					"or a BucketAccess per bucket (spec.bucket) for %s", f, f)))
		}
	}
	return errs
}

// immutableSecretName refuses a change of the Secret the credentials go to. It compares the
// Secrets meant, not the fields: filling in the default of a BucketAccess that had none (the
// defaulting webhook does on the first update of one made with generateName) changes nothing.
// The CRD's rule catches a change between two set values first; this catches setting or
// clearing it.
func immutableSecretName(path *field.Path, a, old *storagev1alpha1.BucketAccess) field.ErrorList {
	if a.SecretNameOrDefault() == old.SecretNameOrDefault() {
		return nil
	}
	was := fmt.Sprintf("%q", old.Spec.SecretName)
	if old.Spec.SecretName == "" {
		was = fmt.Sprintf("unset, which is %q", old.SecretNameOrDefault())
	}
	return field.ErrorList{field.Invalid(path, a.Spec.SecretName, fmt.Sprintf("cannot change (was %s)", was))}
}

// validateRotation checks that a key lives long enough to reach its consumers, and that the key
// it replaces keeps working for a while, but not past the next rotation.
func validateRotation(path *field.Path, r *storagev1alpha1.KeyRotation) field.ErrorList {
	var errs field.ErrorList
	period := r.Period.Duration
	if period < MinRotationPeriod {
		errs = append(errs, field.Invalid(path.Child("period"), period.String(), fmt.Sprintf(
			"must be at least %s: a new key needs time to reach its consumers before the next one replaces it", MinRotationPeriod)))
	}
	if r.Overlap == nil {
		return errs // the default, a tenth of period and at most an hour, is always in range
	}
	overlap := r.Overlap.Duration
	switch {
	case overlap <= 0:
		errs = append(errs, field.Invalid(path.Child("overlap"), overlap.String(),
			"must be more than 0: without an overlap the previous key is revoked the moment the new one is written, "+
				"and consumers still using it are refused until they read the Secret again; "+
				"leave overlap out for the default, a tenth of period and at most 1h"))
	case overlap >= period:
		errs = append(errs, field.Invalid(path.Child("overlap"), overlap.String(), fmt.Sprintf(
			"must be shorter than period (%s): the previous key must be revoked before the next rotation replaces the current one", period)))
	}
	return errs
}

// checkBuckets looks up the Buckets a names that old (nil on create) did not, and returns a
// field error for each that does not exist in the namespace or is being deleted, a warning for
// each that is not Ready, and an error when a lookup itself failed. With several Buckets, each
// added one must belong to the Contract of the others that exist: one key is a principal of one
// account. Nothing is looked up when no Bucket was added (an update of anything else).
func (v *BucketAccessValidator) checkBuckets(ctx context.Context, a, old *storagev1alpha1.BucketAccess) (field.ErrorList, admission.Warnings, error) {
	items := a.AccessBuckets()
	added := make([]bool, len(items))
	// The Buckets a already had come first, so that their Contract is the one an added
	// Bucket is held to, whatever the order of the list.
	var order, addedOrder []int
	for i, b := range items {
		if old != nil {
			if _, had := old.AccessBucketNamed(string(b.Name)); had {
				order = append(order, i)
				continue
			}
		}
		added[i] = true
		addedOrder = append(addedOrder, i)
	}
	if len(addedOrder) == 0 {
		return nil, nil, nil
	}
	order = append(order, addedOrder...)
	var errs field.ErrorList
	var warnings admission.Warnings
	var first *storagev1alpha1.Bucket // the first Bucket found: its Contract is the BucketAccess's
	for _, i := range order {
		item := items[i]
		path := field.NewPath("spec", "bucket")
		if a.MultiBucket() {
			path = field.NewPath("spec", "buckets").Index(i).Child("name")
		}
		name := string(item.Name)
		b := &storagev1alpha1.Bucket{}
		err := v.Reader.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: name}, b)
		switch {
		case apierrors.IsNotFound(err):
			if added[i] {
				errs = append(errs, field.Invalid(path, name, fmt.Sprintf("no Bucket of this name in namespace %q", a.Namespace)))
			}
			continue
		case err != nil:
			logf.FromContext(ctx).Error(err, "Looking up the BucketAccess's Bucket", "bucket", name)
			return nil, nil, apierrors.NewInternalError(fmt.Errorf("looking up Bucket %q: %w", name, err))
		case b.DeletionTimestamp != nil && added[i]:
			errs = append(errs, field.Invalid(path, name, "the Bucket is being deleted"))
			continue
		}
		if added[i] {
			warnings = append(warnings, bucketNotReadyWarnings(path, b)...)
		}
		switch {
		case first == nil:
			first = b
		case b.Spec.ContractName != first.Spec.ContractName && added[i]:
			errs = append(errs, field.Invalid(path, name, fmt.Sprintf(
				"Bucket %s belongs to Contract %s, and Bucket %s to Contract %s: one key reaches the Buckets of one Contract "+
					"(its principal is in that Contract's account); make a BucketAccess for each Contract",
				b.Name, b.Spec.ContractName, first.Name, first.Spec.ContractName)))
		}
	}
	return errs, warnings, nil
}

// bucketNotReadyWarnings warns that the access waits for a Bucket that is not Ready.
func bucketNotReadyWarnings(path *field.Path, b *storagev1alpha1.Bucket) admission.Warnings {
	ready := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
	if ready != nil && ready.Status == metav1.ConditionTrue {
		return nil
	}
	state := "not Ready yet"
	if ready != nil && ready.Reason != "" {
		state = fmt.Sprintf("not Ready (%s)", ready.Reason)
	}
	return admission.Warnings{fmt.Sprintf("%s: Bucket %s is %s: the BucketAccess waits for it (Ready=False, reason %s)",
		path, b.Name, state, storagev1alpha1.ReasonBucketNotReady)}
}

// checkSecretFree returns a field error when the Secret the credentials would go to is the
// Secret of a Contract in the namespace, which holds the account's own keys, or the Secret of
// another BucketAccess. (Two BucketAccesses created at the same instant can both pass here; the
// controller never writes a Secret another BucketAccess holds.)
func (v *BucketAccessValidator) checkSecretFree(ctx context.Context, a *storagev1alpha1.BucketAccess) (*field.Error, error) {
	if a.Name == "" && a.Spec.SecretName == "" {
		return nil, nil // generateName: the default is "<generated name>-credentials", not known yet
	}
	secret := a.SecretNameOrDefault()
	path := field.NewPath("spec", "secretName")

	var contracts storagev1alpha1.ContractList
	if err := v.Reader.List(ctx, &contracts, client.InNamespace(a.Namespace)); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the Contracts of the namespace")
		return nil, apierrors.NewInternalError(fmt.Errorf("listing Contracts in %q: %w", a.Namespace, err))
	}
	for _, c := range contracts.Items {
		if secret == c.Status.SecretName || secret == c.SecretNameOrDefault() {
			return field.Invalid(path, secret, fmt.Sprintf(
				"is the Secret of Contract %s, which holds the account's own keys: credentials written there would overwrite them; choose another secretName", c.Name)), nil
		}
	}

	var accesses storagev1alpha1.BucketAccessList
	if err := v.Reader.List(ctx, &accesses, client.InNamespace(a.Namespace)); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the BucketAccesses of the namespace")
		return nil, apierrors.NewInternalError(fmt.Errorf("listing BucketAccesses in %q: %w", a.Namespace, err))
	}
	for _, o := range accesses.Items {
		if o.Name == a.Name || (secret != o.Status.SecretName && secret != o.SecretNameOrDefault()) {
			continue
		}
		msg := fmt.Sprintf("BucketAccess %s in this namespace already writes its credentials to this Secret, and exactly one may; choose another secretName", o.Name)
		if o.DeletionTimestamp != nil {
			msg = fmt.Sprintf("BucketAccess %s in this namespace, being deleted, still writes its credentials to this Secret; try again once it is gone, or choose another secretName", o.Name)
		}
		return field.Invalid(path, secret, msg), nil
	}
	return nil, nil
}
