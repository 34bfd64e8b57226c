// Package v1alpha1 holds the admission webhooks of paas.osm.dev/v1alpha1: defaults that become
// visible in the stored Application, and validation that stops bad input at `kubectl apply` with
// every problem and its field path.
package v1alpha1

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// DefaultPort and DefaultReplicas are the defaults of spec.port and spec.replicas; the CRD
// carries the same.
const (
	DefaultPort     = 8080
	DefaultReplicas = 1
)

// maxNameWithBackup is the longest Application name that leaves room for "-backup" in a CronJob
// name, which Kubernetes limits to 52 characters.
var maxNameWithBackup = 52 - len(application.BackupCronJobName(""))

var envPrefixRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// SetupWebhooksWithManager registers the Application defaulting and validating webhooks. The
// validator reads Buckets through the manager's API reader (see ApplicationValidator.Reader),
// and the Applications that serve a host through its cache, which must have the field indexes
// of index.Register; ingressDomains are the domains hosts must be under (empty: any).
func SetupWebhooksWithManager(mgr ctrl.Manager, ingressDomains []string) error {
	return ctrl.NewWebhookManagedBy(mgr, &paasv1alpha1.Application{}).
		WithDefaulter(&ApplicationDefaulter{}).
		WithValidator(&ApplicationValidator{Reader: mgr.GetAPIReader(), Applications: mgr.GetClient(), IngressDomains: ingressDomains}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-paas-osm-dev-v1alpha1-application,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=paas.osm.dev,resources=applications,verbs=create;update,versions=v1alpha1,name=mapplication-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// ApplicationDefaulter fills in the defaults of an Application so that they are visible in the
// stored object.
type ApplicationDefaulter struct{}

var _ admission.Defaulter[*paasv1alpha1.Application] = &ApplicationDefaulter{}

// Default sets port 8080, one replica, authentication Key, each link's envPrefix from its
// Bucket's name and its access to ReadWrite, and the backup's prefix to "<name>/". Written into the object, a derived
// envPrefix stays what the application was given even if the derivation changes.
//
// An Application created with only metadata.generateName may reach the webhook before it has a
// name; then the backup prefix stays empty and the controller uses the same default.
func (d *ApplicationDefaulter) Default(_ context.Context, app *paasv1alpha1.Application) error {
	if app.Spec.Port == 0 {
		app.Spec.Port = DefaultPort
	}
	if app.Spec.Replicas == nil {
		app.Spec.Replicas = ptr.To(int32(DefaultReplicas))
	}
	if app.Spec.Authentication == "" {
		app.Spec.Authentication = storagev1alpha1.AuthenticationKey
	}
	for i := range app.Spec.Buckets {
		if app.Spec.Buckets[i].EnvPrefix == "" {
			app.Spec.Buckets[i].EnvPrefix = paasv1alpha1.DefaultEnvPrefix(app.Spec.Buckets[i].Name)
		}
		app.Spec.Buckets[i].Access = app.Spec.Buckets[i].AccessOrDefault()
	}
	if b := app.Spec.Backup; b != nil && b.Prefix == "" && app.Name != "" {
		b.Prefix = app.BackupPrefixOrDefault()
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-paas-osm-dev-v1alpha1-application,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=paas.osm.dev,resources=applications,verbs=create;update,versions=v1alpha1,name=vapplication-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get

// ApplicationValidator rejects Applications the controller could not run, with every problem
// and its field path in one answer.
type ApplicationValidator struct {
	// Reader looks up linked Buckets. The manager's API reader (uncached) is the right one: a
	// Bucket and an Application applied together from one file reach the API server moments
	// apart, before an informer cache could have seen the Bucket.
	Reader client.Reader
	// Applications finds the Applications that serve a host, in every namespace the manager
	// serves: the manager's cache, with index.ApplicationHostField (a namespaced manager may
	// list nothing cluster-wide from the API server). Two Applications admitted within the
	// cache's lag can both pass; the controller then serves the host for the one created first.
	Applications client.Reader
	// IngressDomains are the domains spec.host must be under (the manager's --ingress-domains);
	// empty allows any host.
	IngressDomains []string
}

var _ admission.Validator[*paasv1alpha1.Application] = &ApplicationValidator{}

var applicationGroupKind = paasv1alpha1.GroupVersion.WithKind("Application").GroupKind()

// ValidateCreate checks the whole Application and that every linked Bucket exists in its
// namespace.
func (v *ApplicationValidator) ValidateCreate(ctx context.Context, app *paasv1alpha1.Application) (admission.Warnings, error) {
	errs := validateName(app)
	errs = append(errs, validateSpec(app, v.IngressDomains)...)
	errs = append(errs, application.RestoreProblems(app)...)
	missing, err := v.checkBuckets(ctx, app, nil)
	if err != nil {
		return nil, err
	}
	taken, err := v.checkBackupPrefix(ctx, app)
	if err != nil {
		return nil, err
	}
	served, err := v.checkHost(ctx, app)
	if err != nil {
		return nil, err
	}
	contracts, err := v.checkContracts(ctx, app)
	if err != nil {
		return nil, err
	}
	return nil, invalid(app.Name, append(append(append(append(errs, served...), taken...), missing...), contracts...))
}

// ValidateUpdate checks the spec when it changed, and that Buckets linked by this update exist.
// An update that leaves the spec alone (labels, finalizers, owner references) is always allowed,
// so an Application admitted under older rules stays manageable; a Bucket linked earlier may
// since be gone, which the Application's status reports.
func (v *ApplicationValidator) ValidateUpdate(ctx context.Context, oldApp, newApp *paasv1alpha1.Application) (admission.Warnings, error) {
	restore, oldRestore := newApp.Annotations[paasv1alpha1.RestoreAnnotation], oldApp.Annotations[paasv1alpha1.RestoreAnnotation]
	var restoreErrs field.ErrorList
	if restore != oldRestore {
		// A restore asked for now must be able to run.
		restoreErrs = application.RestoreProblems(newApp)
	}
	if apiequality.Semantic.DeepEqual(oldApp.Spec, newApp.Spec) {
		return nil, invalid(newApp.Name, restoreErrs)
	}
	errs := validateSpec(newApp, v.IngressDomains)
	if newApp.Spec.Backup != nil && oldApp.Spec.Backup == nil {
		errs = append(validateName(newApp), errs...)
	}
	missing, err := v.checkBuckets(ctx, newApp, oldApp.Spec.Buckets)
	if err != nil {
		return nil, err
	}
	taken, err := v.checkBackupPrefix(ctx, newApp)
	if err != nil {
		return nil, err
	}
	var served field.ErrorList
	if newApp.Spec.Host != oldApp.Spec.Host {
		// A host kept is not looked up again: the Application holds it.
		if served, err = v.checkHost(ctx, newApp); err != nil {
			return nil, err
		}
	}
	contracts, err := v.checkContracts(ctx, newApp)
	if err != nil {
		return nil, err
	}
	return nil, invalid(newApp.Name, append(append(append(append(append(errs, restoreErrs...), served...), taken...), missing...), contracts...))
}

// ValidateDelete allows every deletion; the children go with the Application.
func (v *ApplicationValidator) ValidateDelete(context.Context, *paasv1alpha1.Application) (admission.Warnings, error) {
	return nil, nil
}

// validateName checks that the name fits the objects named after it: the Service (a DNS-1035
// label) and, with a backup, the CronJob "<name>-backup".
func validateName(app *paasv1alpha1.Application) field.ErrorList {
	if app.Name == "" {
		return nil // generateName: the API server checks the name it makes
	}
	path := field.NewPath("metadata", "name")
	if msgs := validation.IsDNS1035Label(app.Name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, app.Name, "must be usable as a Service name: "+strings.Join(msgs, "; "))}
	}
	if app.Spec.Backup != nil && len(app.Name) > maxNameWithBackup {
		return field.ErrorList{field.Invalid(path, app.Name, fmt.Sprintf(
			"must be no more than %d characters with spec.backup set: the backup CronJob is named %q, at most 52 characters",
			maxNameWithBackup, application.BackupCronJobName(app.Name)))}
	}
	return nil
}

// validateSpec checks what can be checked without reading other objects. allowedDomains are
// the domains hosts must be under (none: any host).
func validateSpec(app *paasv1alpha1.Application, allowedDomains []string) field.ErrorList {
	var errs field.ErrorList
	spec := &app.Spec
	specPath := field.NewPath("spec")

	if strings.TrimSpace(spec.Image) == "" {
		errs = append(errs, field.Required(specPath.Child("image"), "name the container image to run"))
	} else {
		errs = append(errs, validateImage(specPath.Child("image"), spec.Image)...)
	}
	if spec.Port != 0 {
		for _, msg := range validation.IsValidPortNum(int(spec.Port)) {
			errs = append(errs, field.Invalid(specPath.Child("port"), spec.Port, msg))
		}
	}
	if spec.Replicas != nil && *spec.Replicas < 0 {
		errs = append(errs, field.Invalid(specPath.Child("replicas"), *spec.Replicas, "must be greater than or equal to 0"))
	}
	if spec.Host != "" {
		errs = append(errs, validateHost(specPath.Child("host"), spec.Host)...)
	}
	errs = append(errs, validateResources(specPath.Child("resources"), spec.Resources)...)

	errs = append(errs, validateLinks(specPath.Child("buckets"), spec.Buckets)...)
	if spec.Backup != nil {
		errs = append(errs, validateBackup(specPath.Child("backup"), spec.Backup, spec.Buckets)...)
	}
	// The rules the controller enforces too, since webhooks can be off.
	errs = append(errs, application.EnvProblems(specPath.Child("env"), spec)...)
	errs = append(errs, application.Errors(application.BackupProblems(app, nil, nil))...)
	if err := application.HostProblem(specPath.Child("host"), spec.Host, app.Namespace, allowedDomains); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// validateResources refuses requests above their limits, which the API server would refuse in
// the Deployment, after the Application had been admitted.
func validateResources(path *field.Path, r corev1.ResourceRequirements) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		request := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && request.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), request.String(),
				fmt.Sprintf("must be less than or equal to the %s limit (%s)", name, limit.String())))
		}
	}
	return errs
}

func validateHost(path *field.Path, host string) field.ErrorList {
	if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, host, "must be a DNS name such as app.example.com: "+strings.Join(msgs, "; "))}
	}
	if len(validation.IsValidIP(field.NewPath(""), host)) == 0 {
		return field.ErrorList{field.Invalid(path, host, "must be a DNS name, not an IP address")}
	}
	return nil
}

// validateLinks checks each link's name and envPrefix.
func validateLinks(path *field.Path, links []paasv1alpha1.BucketLink) field.ErrorList {
	var errs field.ErrorList
	names := map[string]int{}
	prefixes := map[string]int{}
	for i, l := range links {
		p := path.Index(i)
		if l.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "name a Bucket in this namespace"))
		} else if first, ok := names[l.Name]; ok {
			errs = append(errs, field.Invalid(p.Child("name"), l.Name, fmt.Sprintf("is already linked by %s", path.Index(first))))
		} else {
			names[l.Name] = i
		}

		prefix := l.EnvPrefixOrDefault()
		if prefix == "" {
			continue
		}
		prefixPath := p.Child("envPrefix")
		if !envPrefixRE.MatchString(prefix) {
			errs = append(errs, field.Invalid(prefixPath, prefix,
				"must consist of upper-case letters, digits and '_', and must not start with a digit (regex "+envPrefixRE.String()+")"))
			continue
		}
		if first, ok := prefixes[prefix]; ok {
			errs = append(errs, field.Invalid(prefixPath, prefix, fmt.Sprintf(
				"is also the envPrefix of %s (Bucket %s): each link needs its own; set envPrefix on one of them",
				path.Index(first), links[first].Name)))
			continue
		}
		prefixes[prefix] = i
	}
	return errs
}

func validateBackup(path *field.Path, b *paasv1alpha1.Backup, links []paasv1alpha1.BucketLink) field.ErrorList {
	var errs field.ErrorList
	if b.Bucket == "" {
		errs = append(errs, field.Required(path.Child("bucket"), "name the linked Bucket to back up to"))
	} else if !linked(links, b.Bucket) {
		var names []string
		for _, l := range links {
			names = append(names, fmt.Sprintf("%q", l.Name))
		}
		msg := "must be one of the linked Buckets (spec.buckets[].name), and none is linked"
		if len(names) > 0 {
			msg = "must be one of the linked Buckets (spec.buckets[].name): " + strings.Join(names, ", ")
		}
		errs = append(errs, field.Invalid(path.Child("bucket"), b.Bucket, msg))
	}
	errs = append(errs, validateSchedule(path.Child("schedule"), b.Schedule)...)
	if len(b.Command) == 0 {
		errs = append(errs, field.Required(path.Child("command"), "give the command that makes the backup"))
	}
	if b.Image != "" {
		errs = append(errs, validateImage(path.Child("image"), b.Image)...)
	}
	return errs
}

// validateImage accepts what a container runtime can pull: a reference as the distribution
// library parses it (the one Docker, containerd and CRI-O use), such as nginx:1.27 or
// registry.example.com/team/app@sha256:..., with no space anywhere. Otherwise every pod of the
// Deployment would fail to pull, long after kubectl apply said yes.
func validateImage(path *field.Path, image string) field.ErrorList {
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return field.ErrorList{field.Invalid(path, image,
			"must be a container image reference such as nginx:1.27 or registry.example.com/team/app:1.2: "+err.Error())}
	}
	return nil
}

// validateSchedule accepts what a CronJob accepts: five fields or a descriptor such as @daily,
// without a time zone (the CronJob's time zone is the controller manager's).
func validateSchedule(path *field.Path, schedule string) field.ErrorList {
	if strings.TrimSpace(schedule) == "" {
		return field.ErrorList{field.Required(path, `give a cron schedule such as "0 3 * * *" or "@daily"`)}
	}
	if strings.Contains(schedule, "TZ") {
		return field.ErrorList{field.Invalid(path, schedule, "must not set a time zone (TZ= or CRON_TZ=)")}
	}
	if _, err := cron.ParseStandard(schedule); err != nil {
		return field.ErrorList{field.Invalid(path, schedule, "must be a cron schedule such as \"0 3 * * *\" or \"@daily\": "+err.Error())}
	}
	return nil
}

func linked(links []paasv1alpha1.BucketLink, name string) bool {
	for _, l := range links {
		if l.Name == name {
			return true
		}
	}
	return false
}

// checkBuckets returns a field error for each link, not in old, whose Bucket does not exist in
// the namespace or is being deleted, and an error when a lookup itself failed.
func (v *ApplicationValidator) checkBuckets(ctx context.Context, app *paasv1alpha1.Application, old []paasv1alpha1.BucketLink) (field.ErrorList, error) {
	var errs field.ErrorList
	path := field.NewPath("spec", "buckets")
	checked := map[string]bool{}
	for i, l := range app.Spec.Buckets {
		if l.Name == "" || checked[l.Name] || linked(old, l.Name) {
			continue
		}
		checked[l.Name] = true
		var b storagev1alpha1.Bucket
		err := v.Reader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: l.Name}, &b)
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), l.Name, fmt.Sprintf("no Bucket of this name in namespace %q", app.Namespace)))
		case err != nil:
			logf.FromContext(ctx).Error(err, "Looking up a linked Bucket", "bucket", l.Name)
			return nil, apierrors.NewInternalError(fmt.Errorf("looking up Bucket %q: %w", l.Name, err))
		case b.DeletionTimestamp != nil:
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), l.Name, "the Bucket is being deleted"))
		}
	}
	return errs, nil
}

// checkContracts returns, with spec.authentication ServiceAccount, a field error for each link
// to a Bucket of another Contract than the first link's (application.ContractProblems), and an
// error when a lookup itself failed. A Bucket that does not exist is checkBuckets' to report.
func (v *ApplicationValidator) checkContracts(ctx context.Context, app *paasv1alpha1.Application) (field.ErrorList, error) {
	if !app.Keyless() || len(app.Spec.Buckets) < 2 {
		return nil, nil
	}
	contracts := map[string]string{}
	for _, l := range app.Spec.Buckets {
		var b storagev1alpha1.Bucket
		err := v.Reader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: l.Name}, &b)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			logf.FromContext(ctx).Error(err, "Looking up a linked Bucket", "bucket", l.Name)
			return nil, apierrors.NewInternalError(fmt.Errorf("looking up Bucket %q: %w", l.Name, err))
		default:
			contracts[l.Name] = b.Spec.ContractName
		}
	}
	return application.ContractProblems(app, func(name string) (string, bool) {
		c, ok := contracts[name]
		return c, ok
	}), nil
}

// checkHost returns a field error when another Application, in any namespace the manager
// serves, serves app's host, and an error when the lookup itself failed.
func (v *ApplicationValidator) checkHost(ctx context.Context, app *paasv1alpha1.Application) (field.ErrorList, error) {
	if app.Spec.Host == "" {
		return nil, nil
	}
	others, err := index.ApplicationsServing(ctx, v.Applications, app.Spec.Host)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Listing the Applications that serve a host", "host", app.Spec.Host)
		return nil, apierrors.NewInternalError(err)
	}
	return application.HostConflicts(field.NewPath("spec", "host"), app, others, func(*paasv1alpha1.Application) bool { return true }), nil
}

// checkBackupPrefix returns a field error when another Application of the namespace backs up
// into app's backup Bucket under a prefix that overlaps app's, and an error when the lookup
// itself failed. Two Applications admitted at once can both pass; the controller then keeps
// the backup of the one created first (application.Precedes) and refuses the other's.
func (v *ApplicationValidator) checkBackupPrefix(ctx context.Context, app *paasv1alpha1.Application) (field.ErrorList, error) {
	if app.Spec.Backup == nil {
		return nil, nil
	}
	var list paasv1alpha1.ApplicationList
	if err := v.Reader.List(ctx, &list, client.InNamespace(app.Namespace)); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the Applications of the namespace")
		return nil, apierrors.NewInternalError(fmt.Errorf("listing the Applications of namespace %q: %w", app.Namespace, err))
	}
	var errs field.ErrorList
	for _, p := range application.BackupProblems(app, list.Items, func(*paasv1alpha1.Application) bool { return true }) {
		if p.Reason == paasv1alpha1.ReasonBackupPrefixConflict {
			errs = append(errs, p.Error)
		}
	}
	return errs, nil
}

// invalid turns errs into the Invalid status the API server shows the user, or nil when errs is
// empty.
func invalid(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(applicationGroupKind, name, errs)
}
