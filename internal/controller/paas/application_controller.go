// Package paas holds the Application controller: it runs an image as a Deployment, a Service, an
// Ingress and a backup CronJob, wired to the Buckets the Application links.
package paas

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/engine/status"
	"github.com/object-storage-manager/object-storage-manager/internal/fairqueue"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// ApplicationReconciler runs each Application as a Deployment and a Service, an Ingress when it
// has a host and a CronJob when it has a backup, with the environment of its linked Buckets.
type ApplicationReconciler struct {
	client.Client
	// APIReader reads from the API server what the cache does not hold: the cache holds only
	// children carrying the controller's labels (see operator.CacheOptions).
	APIReader client.Reader
	// Recorder emits events on the Application.
	Recorder events.EventRecorder
	// MaxConcurrentReconciles bounds parallel reconciles; 0 means 1.
	MaxConcurrentReconciles int
	// IngressDomains are the domains spec.host must be under; empty allows any host.
	IngressDomains []string
	// IngressClass is set on the Ingresses; empty leaves the class to the cluster.
	IngressClass string
	// Listers read the backup bucket with the restore's ReadOnly credentials, for
	// status.backups; nil shows no backups.
	Listers func(endpoint, region, accessKeyID, secretAccessKey string) objectstore.Lister

	// listed remembers, by Application UID, when its backups were last listed.
	listed ttlcache.Cache[types.UID, backupsListing]
}

// The Application controller never reads a Contract or its Secret: each link, the backup and
// the restore get the keys of a BucketAccess the Application owns, by secretKeyRef, and the
// controller reads one Secret itself, through the cache, only to list the backups with the
// restore's ReadOnly key.
//
// Children are written with create, update (CreateOrUpdate) and delete, never patched;
// BucketAccesses, whose status is written by their own controller, with create and an
// optimistically locked patch of their spec. Setting their owner reference with
// blockOwnerDeletion needs update on applications/finalizers.
// +kubebuilder:rbac:groups=paas.osm.dev,resources=applications,verbs=get;list;watch
// +kubebuilder:rbac:groups=paas.osm.dev,resources=applications/status,verbs=patch
// +kubebuilder:rbac:groups=paas.osm.dev,resources=applications/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the Application's objects match its spec and its linked Buckets, and reports
// what it saw in status.
func (r *ApplicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	app := &paasv1alpha1.Application{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		// The children carry owner references: the garbage collector removes them. Nothing
		// outside the cluster depends on an Application, so it needs no finalizer.
		return ctrl.Result{}, nil
	}

	before := app.DeepCopy()
	defer func() {
		if err := status.Patch(ctx, r.Client, app, &before.Status, &app.Status); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
		}
	}()

	res, err := r.reconcileNormal(ctx, app)
	if apierrors.IsConflict(err) {
		// Someone else wrote the object since the cache saw it; the next pass sees their write.
		logf.FromContext(ctx).V(1).Info("Write conflict, trying again", "error", err.Error())
		return ctrl.Result{RequeueAfter: tuning.ConflictRetry}, nil
	}
	return res, err
}

func (r *ApplicationReconciler) reconcileNormal(ctx context.Context, app *paasv1alpha1.Application) (ctrl.Result, error) {
	app.Status.ObservedGeneration = app.Generation
	app.Status.URL = applicationURL(app.Spec.Host)
	linked, err := r.linkedBuckets(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A refused backup gets no keys, so it is decided first.
	backupRefused, err := r.backupRefusal(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}
	accesses, err := r.syncAccesses(ctx, app, linked, backupRefused == nil)
	if err != nil {
		return r.childFailed(app, err)
	}
	links, states := resolveLinks(app, linked, accesses)
	conflict := prefixConflict(app.Spec.Buckets)
	buckets := bucketsReady(states, conflict)
	usable := conflict == "" && len(links) == len(app.Spec.Buckets)
	setCondition(&app.Status.Conditions, app.Generation, paasv1alpha1.BucketsReadyCondition, buckets)

	// What the operator must not write for a tenant, whatever admission let through.
	envRefused := refusal(paasv1alpha1.ReasonEnvNotAllowed, application.EnvProblems(field.NewPath("spec", "env"), &app.Spec))
	hostRefused, err := r.hostRefusal(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}

	if err := r.syncService(ctx, app); err != nil {
		return r.childFailed(app, err)
	}
	if err := r.syncIngress(ctx, app, hostRefused); err != nil {
		return r.childFailed(app, err)
	}
	// Pods wait for an env the operator may write; one already running keeps what it has.
	deploy, err := r.syncDeployment(ctx, app, links, usable && envRefused == nil)
	if err != nil {
		return r.childFailed(app, err)
	}
	if err := r.reconcileBackup(ctx, app, links, accesses, usable, buckets, envRefused, backupRefused); err != nil {
		return r.childFailed(app, err)
	}
	switch {
	case envRefused != nil:
		r.setReady(app, *envRefused)
	case hostRefused != nil:
		r.setReady(app, *hostRefused)
	case backupRefused != nil:
		r.setReady(app, *backupRefused)
	default:
		r.setReady(app, readyCondition(buckets, deploy, ptr.Deref(app.Spec.Replicas, 1)))
	}
	return ctrl.Result{}, nil
}

// reconcileBackup keeps the backup CronJob, the restore and the list of backups, and says in
// BackupScheduled where the backup stands. usable says the linked Buckets can be used (buckets
// says why not); envRefused, when set, is why the operator may not write the env, and
// backupRefused why it may not back up under the backup prefix.
func (r *ApplicationReconciler) reconcileBackup(ctx context.Context, app *paasv1alpha1.Application, links []resolvedLink, accesses appAccesses,
	usable bool, buckets condition, envRefused, backupRefused *condition) error {
	var waiting *condition
	if !usable {
		waiting = &condition{metav1.ConditionFalse, waitingReason(buckets), "The backup waits for the linked Buckets (see BucketsReady)"}
	}
	var cronJob *batchv1.CronJob
	var blocked *condition
	var err error
	if backupRefused != nil {
		// Nothing is written under a prefix that is not the Application's own, not even by a
		// CronJob made before.
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: application.BackupCronJobName(app.Name)}}
		blocked, err = backupRefused, r.deleteOwned(ctx, app, cj, "CronJob", "the operator refuses the backup (see BackupScheduled)")
	} else {
		cronJob, blocked, err = r.syncCronJob(ctx, app, links, accesses, waiting, envRefused)
	}
	if err != nil {
		return err
	}
	setCondition(&app.Status.Conditions, app.Generation, paasv1alpha1.BackupScheduledCondition,
		backupCondition(app.Spec.Backup, cronJob, blocked))
	app.Status.LastBackupTime, app.Status.LastSuccessfulBackupTime = nil, nil
	if cronJob != nil {
		app.Status.LastBackupTime = cronJob.Status.LastScheduleTime
		app.Status.LastSuccessfulBackupTime = cronJob.Status.LastSuccessfulTime
	}
	// Restores and the list of backups need the backup bucket's link, its ReadOnly
	// BucketAccess, and an env the operator may write.
	target := backupTarget(app, links)
	if !usable || envRefused != nil || backupRefused != nil {
		target = nil
	}
	if err := r.syncRestore(ctx, app, links, target, accesses.restore, backupRefused); err != nil {
		return err
	}
	r.listBackups(ctx, app, target, accesses.restore)
	return nil
}

// linkedBuckets reads the Buckets app links, by name; one that does not exist is left out.
func (r *ApplicationReconciler) linkedBuckets(ctx context.Context, app *paasv1alpha1.Application) (map[string]*storagev1alpha1.Bucket, error) {
	buckets := make(map[string]*storagev1alpha1.Bucket, len(app.Spec.Buckets))
	for _, l := range app.Spec.Buckets {
		b := &storagev1alpha1.Bucket{}
		err := r.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: l.Name}, b)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading Bucket %q: %w", l.Name, err)
		default:
			buckets[l.Name] = b
		}
	}
	return buckets, nil
}

// resolveLinks puts each link's Bucket with its BucketAccess. It returns the links whose
// environment can be built, in spec order, and what it saw of every link.
func resolveLinks(app *paasv1alpha1.Application, buckets map[string]*storagev1alpha1.Bucket, accesses appAccesses) ([]resolvedLink, []linkState) {
	var links []resolvedLink
	states := make([]linkState, 0, len(app.Spec.Buckets))
	for _, l := range app.Spec.Buckets {
		link, state := resolveLink(app.Namespace, l, buckets[l.Name], accesses.links[l.Name])
		if state.Usable {
			links = append(links, link)
		}
		states = append(states, state)
	}
	return links, states
}

// resolveLink puts link l with its Bucket b (nil when it does not exist) and its BucketAccess.
func resolveLink(namespace string, l paasv1alpha1.BucketLink, b *storagev1alpha1.Bucket, access accessState) (resolvedLink, linkState) {
	state := linkState{Name: l.Name}
	if b == nil {
		state.Problem = fmt.Sprintf("Bucket %s does not exist in namespace %s", l.Name, namespace)
		return resolvedLink{}, state
	}
	notReady := fmt.Sprintf("Bucket %s has no status yet", b.Name)
	ready := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
	if ready != nil {
		notReady = fmt.Sprintf("Bucket %s is not Ready (%s: %s)", b.Name, ready.Reason, ready.Message)
	}
	bucketReady := ready != nil && ready.Status == metav1.ConditionTrue
	located := b.Status.BucketName != "" && b.Status.Endpoint != ""

	// The Bucket's own problem comes first: its BucketAccess waits for it too.
	switch {
	case !located || (!bucketReady && !access.Usable):
		state.Problem = notReady
		return resolvedLink{}, state
	case !access.Usable:
		state.Problem, state.WaitsForAccess = access.Problem, true
		return resolvedLink{}, state
	}
	state.Usable = true
	state.Ready = bucketReady && access.Ready
	switch {
	case !bucketReady:
		state.Problem = notReady
	case !access.Ready:
		state.Problem, state.WaitsForAccess = access.Problem, true
	}
	return resolvedLink{
		Name:       l.Name,
		Prefix:     l.EnvPrefixOrDefault(),
		Mode:       l.AccessOrDefault(),
		BucketName: b.Status.BucketName,
		Endpoint:   b.Status.Endpoint,
		Region:     b.Status.Region,
		Versioning: b.Status.Versioning,
		Access:     access,
	}, state
}

// prefixConflict says which links share an envPrefix, "" when none do.
func prefixConflict(links []paasv1alpha1.BucketLink) string {
	byPrefix := map[string][]string{}
	for _, l := range links {
		p := l.EnvPrefixOrDefault()
		byPrefix[p] = append(byPrefix[p], l.Name)
	}
	var problems []string
	for p, names := range byPrefix {
		if len(names) > 1 {
			problems = append(problems, fmt.Sprintf("Buckets %s share the env prefix %s", strings.Join(names, ", "), p))
		}
	}
	if len(problems) == 0 {
		return ""
	}
	sort.Strings(problems)
	return strings.Join(problems, "; ") + ": set spec.buckets[].envPrefix so that each link has its own"
}

func (r *ApplicationReconciler) syncService(ctx context.Context, app *paasv1alpha1.Application) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	return r.apply(ctx, app, svc, "Service", func() { mutateService(svc, app) })
}

// syncIngress makes the Ingress when spec.host is set and allowed, and deletes it otherwise
// (refused says why not): an Ingress for a host outside the allowed domains, or one another
// Application serves, would route someone else's name.
func (r *ApplicationReconciler) syncIngress(ctx context.Context, app *paasv1alpha1.Application, refused *condition) error {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if app.Spec.Host == "" {
		return r.deleteOwned(ctx, app, ing, "Ingress", "spec.host is not set")
	}
	if refused != nil && refused.Reason == paasv1alpha1.ReasonHostConflict {
		return r.deleteOwned(ctx, app, ing, "Ingress", "another Application serves spec.host")
	}
	if refused != nil {
		return r.deleteOwned(ctx, app, ing, "Ingress", "spec.host is not under an allowed domain")
	}
	return r.apply(ctx, app, ing, "Ingress", func() { mutateIngress(ing, app, r.IngressClass) })
}

// syncDeployment brings the Deployment in line with the spec and the links. While a link cannot
// be resolved it leaves an existing Deployment as it is (its pods keep running with what they
// have) and makes none: pods started without their credentials would only fail. It returns the
// Deployment as it stands, nil when there is none.
func (r *ApplicationReconciler) syncDeployment(ctx context.Context, app *paasv1alpha1.Application, links []resolvedLink, usable bool) (*appsv1.Deployment, error) {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if !usable {
		return getOwned(ctx, r.Client, app, deploy, "Deployment")
	}
	env := append(bucketEnv(links, ownKey), userEnv(app.Spec.Env)...)
	keys := accessKeys(linkAccesses(links)...)
	var oldKeys string
	err := r.apply(ctx, app, deploy, "Deployment", func() {
		oldKeys = deploy.Spec.Template.Annotations[AccessKeysAnnotation]
		mutateDeployment(deploy, app, env, keys)
	})
	if err != nil {
		return nil, err
	}
	if oldKeys != "" && oldKeys != keys {
		r.Recorder.Eventf(app, deploy, corev1.EventTypeNormal, "CredentialsChanged", "Update",
			"The key of a linked BucketAccess changed; Deployment %s rolls its pods to pick it up", deploy.Name)
	}
	return deploy, nil
}

// syncCronJob brings the backup CronJob in line with spec.backup, or deletes it when there is
// no backup. Its runs get the backup's own WriteOnly key and, for the links, ReadOnly keys only
// (appAccesses.backupReadKey). waiting, when set, says why the links cannot be used. blocked
// says why an existing CronJob could not be brought up to date.
func (r *ApplicationReconciler) syncCronJob(ctx context.Context, app *paasv1alpha1.Application, links []resolvedLink, accesses appAccesses,
	waiting, envRefused *condition) (*batchv1.CronJob, *condition, error) {
	creds := accesses.backup
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: application.BackupCronJobName(app.Name)}}
	backup := app.Spec.Backup
	if backup == nil {
		return nil, nil, r.deleteOwned(ctx, app, cj, "CronJob", "spec.backup is not set")
	}
	if !linksBucket(app.Spec.Buckets, backup.Bucket) || creds == nil || accesses.restore == nil {
		existing, err := getOwned(ctx, r.Client, app, cj, "CronJob")
		return existing, &condition{metav1.ConditionFalse, paasv1alpha1.ReasonBucketNotLinked, fmt.Sprintf(
			"spec.backup.bucket is %s, which spec.buckets does not link", backup.Bucket)}, err
	}
	if envRefused != nil {
		existing, err := getOwned(ctx, r.Client, app, cj, "CronJob")
		return existing, &condition{metav1.ConditionFalse, paasv1alpha1.ReasonEnvNotAllowed,
			"The backup waits for spec.env to be fixed (see Ready)"}, err
	}
	if waiting != nil {
		existing, err := getOwned(ctx, r.Client, app, cj, "CronJob")
		return existing, waiting, err
	}
	target := backupTarget(app, links)
	if target == nil {
		return nil, nil, fmt.Errorf("backup bucket %q is linked but not resolved", backup.Bucket)
	}
	if backup.RequireVersionedBucket && target.Versioning != string(storagev1alpha1.VersioningEnabled) {
		// A backup overwritten or deleted in an unversioned bucket is gone: none is written
		// until the bucket keeps old versions. The Bucket's change wakes this Application.
		existing, err := getOwned(ctx, r.Client, app, cj, "CronJob")
		return existing, &condition{metav1.ConditionFalse, paasv1alpha1.ReasonBucketNotVersioned, fmt.Sprintf(
			"spec.backup.requireVersionedBucket: Bucket %s does not have versioning Enabled (it shows %q); set its spec.versioning to Enabled",
			backup.Bucket, target.Versioning)}, err
	}
	if !creds.Usable {
		existing, err := getOwned(ctx, r.Client, app, cj, "CronJob")
		return existing, &condition{metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady,
			"The backup waits for its WriteOnly credentials: " + creds.Problem}, err
	}
	reads := []accessState{*creds}
	for _, l := range links {
		key, ok := accesses.backupReadKey(l)
		if !ok {
			return nil, nil, fmt.Errorf("the backup's read key for Bucket %q is not known", l.Name)
		}
		if key == nil {
			continue
		}
		if !key.Usable {
			existing, err := getOwned(ctx, r.Client, app, cj, "CronJob")
			return existing, &condition{metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady, fmt.Sprintf(
				"The backup waits for its ReadOnly credentials to Bucket %s: %s", l.Name, key.Problem)}, err
		}
		reads = append(reads, *key)
	}
	env := append(bucketEnv(links, func(l resolvedLink) *accessState {
		key, _ := accesses.backupReadKey(l)
		return key
	}), backupEnv(*target, *creds, application.BackupPrefix(app))...)
	env = append(env, backupRunEnv()...)
	env = append(env, userEnv(app.Spec.Env)...)
	keys := accessKeys(reads...)
	if err := r.apply(ctx, app, cj, "CronJob", func() { mutateCronJob(cj, app, env, keys) }); err != nil {
		return nil, nil, err
	}
	return cj, nil, nil
}

// hostRefusal is the condition of an Application whose host the operator refuses to serve, nil
// when it may: a host outside the allowed domains, or one an Application that came first serves
// too, in any namespace the manager serves.
func (r *ApplicationReconciler) hostRefusal(ctx context.Context, app *paasv1alpha1.Application) (*condition, error) {
	path := field.NewPath("spec", "host")
	if err := application.HostProblem(path, app.Spec.Host, app.Namespace, r.IngressDomains); err != nil {
		return refusal(paasv1alpha1.ReasonHostNotAllowed, field.ErrorList{err}), nil
	}
	if app.Spec.Host == "" {
		return nil, nil
	}
	others, err := index.ApplicationsServing(ctx, r.Client, app.Spec.Host)
	if err != nil {
		return nil, err
	}
	taken := application.HostConflicts(path, app, others, func(other *paasv1alpha1.Application) bool { return application.Precedes(other, app) })
	if len(taken) > 0 {
		return refusal(paasv1alpha1.ReasonHostConflict, taken), nil
	}
	return nil, nil
}

// backupRefusal is the condition of an Application whose backup the operator refuses to run
// (application.BackupProblems), nil when it may run. Of two Applications whose backup prefixes
// overlap in one Bucket, the one created first keeps its backup: the other's is refused.
func (r *ApplicationReconciler) backupRefusal(ctx context.Context, app *paasv1alpha1.Application) (*condition, error) {
	if app.Spec.Backup == nil {
		return nil, nil
	}
	var list paasv1alpha1.ApplicationList
	if err := r.List(ctx, &list, client.InNamespace(app.Namespace),
		client.MatchingFields{index.ApplicationBucketField: app.Spec.Backup.Bucket}); err != nil {
		return nil, fmt.Errorf("listing the Applications that link Bucket %q: %w", app.Spec.Backup.Bucket, err)
	}
	problems := application.BackupProblems(app, list.Items, func(other *paasv1alpha1.Application) bool { return application.Precedes(other, app) })
	if len(problems) == 0 {
		return nil, nil
	}
	return refusal(problems[0].Reason, application.Errors(problems)), nil
}

// backupTarget is the resolved link of the backup's Bucket, nil without a backup or when that
// link could not be resolved.
func backupTarget(app *paasv1alpha1.Application, links []resolvedLink) *resolvedLink {
	if app.Spec.Backup == nil {
		return nil
	}
	for i := range links {
		if links[i].Name == app.Spec.Backup.Bucket {
			return &links[i]
		}
	}
	return nil
}

func linksBucket(links []paasv1alpha1.BucketLink, name string) bool {
	for _, l := range links {
		if l.Name == name {
			return true
		}
	}
	return false
}

// foreignError says that a child's name is taken by an object this Application does not own.
type foreignError struct{ kind, name string }

func (e *foreignError) Error() string {
	return fmt.Sprintf("%s %s exists and does not belong to this Application", e.kind, e.name)
}

// apply creates obj or updates it with mutate, and writes nothing when it already matches. It
// never takes over an object that belongs to something else.
func (r *ApplicationReconciler) apply(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind string, mutate func()) error {
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
		if obj.GetResourceVersion() != "" && !metav1.IsControlledBy(obj, app) {
			return &foreignError{kind: kind, name: obj.GetName()}
		}
		mutate()
		return controllerutil.SetControllerReference(app, obj, r.Scheme())
	})
	if apierrors.IsAlreadyExists(err) {
		op, err = r.reclaim(ctx, app, obj, kind, mutate)
	}
	var foreign *foreignError
	switch {
	case errors.As(err, &foreign):
		return foreign
	case err != nil:
		return fmt.Errorf("writing %s %q: %w", kind, obj.GetName(), err)
	}
	log := logf.FromContext(ctx)
	switch op {
	case controllerutil.OperationResultCreated:
		log.Info("Created "+kind, "object", klog.KObj(obj))
		r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Created", "Create", "Created %s %s", kind, obj.GetName())
	case controllerutil.OperationResultUpdated:
		log.Info("Updated "+kind, "object", klog.KObj(obj))
		r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Updated", "Update",
			"Updated %s %s to match the Application", kind, obj.GetName())
	}
	return nil
}

// reclaim handles a child the cache does not hold but the API server does: the cache sees only
// objects labelled as the controller's children, so this is an object of someone else of the
// same name, or a child whose labels were edited away. The first is reported, the second made
// whole again.
func (r *ApplicationReconciler) reclaim(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind string, mutate func()) (controllerutil.OperationResult, error) {
	live := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return controllerutil.OperationResultNone, err
	}
	if !metav1.IsControlledBy(live, app) {
		return controllerutil.OperationResultNone, &foreignError{kind: kind, name: obj.GetName()}
	}
	// mutate writes into obj: start it from the live object.
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(live).Elem())
	mutate()
	if err := r.Update(ctx, obj); err != nil {
		return controllerutil.OperationResultNone, err
	}
	return controllerutil.OperationResultUpdated, nil
}

// deleteOwned deletes obj when it exists and belongs to app; why says, for the event, why it
// is no longer wanted.
func (r *ApplicationReconciler) deleteOwned(ctx context.Context, app *paasv1alpha1.Application, obj client.Object, kind, why string) error {
	if err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return nil
	}
	uid := obj.GetUID()
	if err := r.Delete(ctx, obj, client.Preconditions{UID: &uid},
		client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Deleted "+kind, "object", klog.KObj(obj))
	r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, kind+"Deleted", "Delete", "Deleted %s %s: %s", kind, obj.GetName(), why)
	return nil
}

// getOwned reads obj and returns it when it belongs to app, nil when it does not exist.
func getOwned[T client.Object](ctx context.Context, c client.Reader, app *paasv1alpha1.Application, obj T, kind string) (T, error) {
	var none T
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return none, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return none, &foreignError{kind: kind, name: obj.GetName()}
	}
	return obj, nil
}

// childFailed records a failed write of a child. An object of the child's name that belongs to
// someone else is left alone and reported; anything else is retried with backoff.
func (r *ApplicationReconciler) childFailed(app *paasv1alpha1.Application, err error) (ctrl.Result, error) {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		// Retrying the same object gets the same answer: say it, and wait for the spec.
		r.setReady(app, condition{metav1.ConditionFalse, paasv1alpha1.ReasonChildRejected,
			"The API server refused a child of this Application: " + apiMessage(err)})
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	var foreign *foreignError
	if !errors.As(err, &foreign) {
		return ctrl.Result{}, err
	}
	r.setReady(app, condition{metav1.ConditionFalse, paasv1alpha1.ReasonResourceConflict,
		foreign.Error() + "; delete it or give the Application another name"})
	return ctrl.Result{RequeueAfter: tuning.ForeignRetry}, nil
}

// apiMessage is the API server's own account of a refusal, without the wrapping of the call.
func apiMessage(err error) string {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		return apiStatus.Status().Message
	}
	return err.Error()
}

// setReady sets the Ready condition and, when its reason changes, emits an event that says so:
// a warning when the Application stops being Ready for another reason than a rollout, or cannot
// proceed; a normal event otherwise.
func (r *ApplicationReconciler) setReady(app *paasv1alpha1.Application, c condition) {
	wasReady := meta.IsStatusConditionTrue(app.Status.Conditions, paasv1alpha1.ReadyCondition)
	oldReason := status.Reason(app.Status.Conditions, paasv1alpha1.ReadyCondition)
	setCondition(&app.Status.Conditions, app.Generation, paasv1alpha1.ReadyCondition, c)
	if oldReason == c.Reason {
		return
	}
	eventType := corev1.EventTypeNormal
	if c.Reason == paasv1alpha1.ReasonResourceConflict || c.Reason == paasv1alpha1.ReasonEnvNotAllowed ||
		c.Reason == paasv1alpha1.ReasonChildRejected ||
		c.Reason == paasv1alpha1.ReasonHostNotAllowed || c.Reason == paasv1alpha1.ReasonHostConflict ||
		c.Reason == paasv1alpha1.ReasonBackupPrefixNotAllowed || c.Reason == paasv1alpha1.ReasonBackupPrefixConflict ||
		c.Reason == paasv1alpha1.ReasonRetentionNotAllowed ||
		(c.Status == metav1.ConditionFalse && wasReady && c.Reason != paasv1alpha1.ReasonDeploymentProgressing) {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(app, nil, eventType, c.Reason, "Reconcile", "%s", c.Message)
}

// SetupWithManager registers the controller. An Application wakes when its spec changes, when
// one of its objects changes (a Deployment becoming available, a CronJob running, a
// BucketAccess getting a new key), and when a linked Bucket changes: no polling.
func (r *ApplicationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&paasv1alpha1.Application{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&networkingv1.Ingress{}).
		Owns(&batchv1.CronJob{}).
		Owns(&batchv1.Job{}).
		Owns(&storagev1alpha1.BucketAccess{}).
		Watches(&storagev1alpha1.Bucket{}, handler.EnqueueRequestsFromMapFunc(r.applicationsOfBucket)).
		// An Application whose backup prefix or host another one held gets it when that one goes.
		Watches(&paasv1alpha1.Application{}, handler.EnqueueRequestsFromMapFunc(r.applicationsSharing),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(fairqueue.ControllerOptions(r.MaxConcurrentReconciles)).
		Named("application").
		Complete(r)
}

func (r *ApplicationReconciler) applicationsOfBucket(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.applicationsLinking(ctx, obj.GetNamespace(), obj.GetName())
}

// applicationsSharing maps an Application to the others whose claims it may decide: those that
// back up into the same Bucket, and those that serve the same host, in any namespace.
func (r *ApplicationReconciler) applicationsSharing(ctx context.Context, obj client.Object) []reconcile.Request {
	app, ok := obj.(*paasv1alpha1.Application)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	if app.Spec.Backup != nil {
		reqs = r.applicationsLinking(ctx, app.Namespace, app.Spec.Backup.Bucket)
	}
	if app.Spec.Host != "" {
		others, err := index.ApplicationsServing(ctx, r.Client, app.Spec.Host)
		if err != nil {
			logf.FromContext(ctx).Error(err, "Finding the Applications that serve a host", "host", app.Spec.Host)
		}
		for _, o := range others {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
		}
	}
	return slices.DeleteFunc(reqs, func(req reconcile.Request) bool { return req.NamespacedName == client.ObjectKeyFromObject(app) })
}

func (r *ApplicationReconciler) applicationsLinking(ctx context.Context, namespace, bucket string) []reconcile.Request {
	names, err := index.ApplicationsLinking(ctx, r.Client, namespace, bucket)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Finding the Applications of a Bucket", "bucket", bucket)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: namespace, Name: n}})
	}
	return reqs
}
