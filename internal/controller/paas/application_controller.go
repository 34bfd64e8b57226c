// Package paas holds the Application controller: it runs an image as a Deployment, a Service, an
// Ingress and a backup CronJob, wired to the Buckets the Application links.
package paas

import (
	"context"
	"errors"
	"slices"

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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
