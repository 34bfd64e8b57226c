// Package paas holds the Application controller: it runs an image as a Deployment, a Service, an
// Ingress and a backup CronJob, wired to the Buckets the Application links.
package paas

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/fairqueue"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
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
	// TokenAudience is the audience of the ServiceAccount token projected into a keyless
	// Application's pods: the one the providers' roles check (the manager's --oidc-audience).
	TokenAudience string
	// Listers read the backup bucket with the restore's ReadOnly credentials, for
	// status.backups; nil shows no backups.
	Listers func(endpoint, region, accessKeyID, secretAccessKey string) objectstore.Lister
	// PodEndpoints maps an S3 endpoint as the manager reaches it to the endpoint pods reach it
	// at, where the two differ (a manager outside the cluster, make dev's real node); the
	// Application's containers get the second. Endpoints not in it are given as they are.
	PodEndpoints map[string]string

	// listed remembers, by Application UID, when its backups were last listed.
	listed ttlcache.Cache[types.UID, backupsListing]
	// written is this controller's record of its own last writes (engine.Writes).
	written engine.Writes
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
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=storage.osm.dev,resources=buckets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.osm.dev,resources=bucketaccesses,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the Application's objects match its spec and its linked Buckets, and reports
// what it saw in status. An Application has no finalizer: nothing outside the cluster depends on
// it, and its children carry owner references, so the garbage collector removes them.
func (r *ApplicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return engine.Reconciler[*paasv1alpha1.Application, applicationFound]{Client: r.Client, Kind: applicationKind{r},
		Written: &r.written, Recorder: r.Recorder}.Reconcile(ctx, req)
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
		Owns(&corev1.ServiceAccount{}).
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
