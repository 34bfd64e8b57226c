package paas

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// applicationKind is the Application's part of the reconcile skeleton. A pass reads what the
// Application depends on (observe), then runs its children as steps, in order: the
// BucketAccesses the links get their keys from, the Service, the Ingress, the Deployment, the
// backup CronJob and the restore Job; then it lists the backups. What the steps see and find
// travels in one appPass; a step that fails ends the pass (failed); Conclude derives the
// status from what the pass found.
type applicationKind struct{ *ApplicationReconciler }

type applicationOutcome = engine.Outcome[applicationFound]

// appPass is one pass over an Application: what its steps have seen, and what they found.
type appPass struct {
	app *paasv1alpha1.Application
	// linked are the linked Buckets that exist, by name.
	linked map[string]*storagev1alpha1.Bucket
	// envRefused, hostRefused, backupRefused and linksRefused are what the operator will not
	// write for the tenant (nil when it may): an env, a host, a backup under the backup prefix,
	// a keyless Application's shared BucketAccess.
	envRefused, hostRefused, backupRefused, linksRefused *refused
	// accesses are the Application's BucketAccesses as they stand; links the links whose
	// environment can be built, in spec order.
	accesses appAccesses
	links    []resolvedLink
	// usable: every link can be used, and no two share an env prefix.
	usable bool
	// deploy is the Deployment as it stands, nil when there is none.
	deploy *appsv1.Deployment
	found  applicationFound
}

// Normal brings the Application's children to its spec and its linked Buckets.
func (k applicationKind) Normal(ctx context.Context, app *paasv1alpha1.Application, _ *engine.Pass[*paasv1alpha1.Application]) applicationOutcome {
	s := &appPass{app: app}
	if err := k.observe(ctx, s); err != nil {
		return applicationOutcome{Err: err}
	}
	// The children, each a step that writes only what differs, in the order they need each
	// other: the ServiceAccount whose tokens the links' role trusts and the links' keys first,
	// the backup and the restore last.
	if err := k.syncServiceAccount(ctx, s); err != nil {
		return s.failed(err)
	}
	if err := k.linkBuckets(ctx, s); err != nil {
		return s.failed(err)
	}
	if err := k.syncService(ctx, s); err != nil {
		return s.failed(err)
	}
	if err := k.syncIngress(ctx, s); err != nil {
		return s.failed(err)
	}
	if err := k.syncDeployment(ctx, s); err != nil {
		return s.failed(err)
	}
	if err := k.syncCronJob(ctx, s); err != nil {
		return s.failed(err)
	}
	if err := k.syncRestore(ctx, s); err != nil {
		return s.failed(err)
	}
	s.found.backups = k.listBackups(ctx, s)
	return s.found.end(s.readiness(), 0, nil)
}

// Delete never runs: an Application has no finalizer (see Reconcile).
func (applicationKind) Delete(context.Context, *paasv1alpha1.Application, *engine.Pass[*paasv1alpha1.Application]) applicationOutcome {
	return applicationOutcome{}
}

// observe reads what the Application depends on, and decides what the operator refuses to
// write for it, whatever admission let through. It writes nothing.
func (k applicationKind) observe(ctx context.Context, s *appPass) (err error) {
	if s.linked, err = k.linkedBuckets(ctx, s.app); err != nil {
		return err
	}
	// A refused backup gets no keys, so it is decided before the BucketAccesses are written.
	if s.backupRefused, err = k.backupRefusal(ctx, s.app); err != nil {
		return err
	}
	if s.hostRefused, err = k.hostRefusal(ctx, s.app); err != nil {
		return err
	}
	s.envRefused = refusal(paasv1alpha1.ReasonEnvNotAllowed, application.EnvProblems(field.NewPath("spec", "env"), &s.app.Spec))
	s.linksRefused = linksRefusal(s.app, s.linked)
	return nil
}

// readiness is what decides Ready once every step went through: a refusal first, then the
// links and the Deployment.
func (s *appPass) readiness() readyFinding {
	for _, r := range []*refused{s.linksRefused, s.envRefused, s.hostRefused, s.backupRefused} {
		if r != nil {
			return *r
		}
	}
	return running{buckets: *s.found.buckets, deploy: s.deploy}
}

// failed ends a pass whose step failed to write a child. An object of the child's name that
// belongs to someone else is left alone and reported, and looked at again after
// tuning.ForeignRetry (no watch reports when it goes); a child the API server refuses waits
// for the spec to change; anything else is retried with backoff.
func (s *appPass) failed(err error) applicationOutcome {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return s.found.end(childRejected{err}, 0, reconcile.TerminalError(err))
	}
	var foreign *foreignError
	if errors.As(err, &foreign) {
		return s.found.end(childTaken{foreign}, tuning.ForeignRetry, nil)
	}
	return applicationOutcome{Found: s.found, Err: err}
}

// hostRefusal is why the operator refuses to serve the Application's host, nil when it may: a host outside the allowed domains, or one an Application that came first serves
// too, in any namespace the manager serves.
func (k applicationKind) hostRefusal(ctx context.Context, app *paasv1alpha1.Application) (*refused, error) {
	path := field.NewPath("spec", "host")
	if err := application.HostProblem(path, app.Spec.Host, app.Namespace, k.IngressDomains); err != nil {
		return refusal(paasv1alpha1.ReasonHostNotAllowed, field.ErrorList{err}), nil
	}
	if app.Spec.Host == "" {
		return nil, nil
	}
	others, err := index.ApplicationsServing(ctx, k.Client, app.Spec.Host)
	if err != nil {
		return nil, err
	}
	taken := application.HostConflicts(path, app, others, func(other *paasv1alpha1.Application) bool { return application.Precedes(other, app) })
	if len(taken) > 0 {
		return refusal(paasv1alpha1.ReasonHostConflict, taken), nil
	}
	return nil, nil
}
