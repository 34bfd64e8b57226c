package paas

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// applicationFound is what a pass over an Application found; Conclude derives every condition,
// and the status the steps observed, from it, once, at the end of the pass. A nil field leaves
// what it decides as it was: the pass stopped before it.
type applicationFound struct {
	// buckets decides BucketsReady.
	buckets *engine.Condition
	// backup decides BackupScheduled and the times of the last backup runs.
	backup *backupFound
	// restore is status.restore: the restore the annotation asks for, as it stands.
	restore *paasv1alpha1.RestoreStatus
	// backups decides status.backups.
	backups *backupsSeen
	// ready decides Ready.
	ready readyFinding
}

// end is how a pass that found f ends.
func (f applicationFound) end(ready readyFinding, after time.Duration, err error) applicationOutcome {
	f.ready = ready
	return applicationOutcome{Found: f, After: after, Err: err}
}

// A readyFinding is one thing a pass can find that decides the Application's Ready.
type readyFinding interface {
	ready(app *paasv1alpha1.Application) engine.Condition
}

// A halt is a finding the Application does not get past by waiting: someone has to act, so its
// Ready event is a warning.
type halt interface{ halts() }

type (
	// refused: the spec asks for what the operator will not write for a tenant, whatever
	// admission let through: an env (reason EnvNotAllowed), a host (HostNotAllowed,
	// HostConflict), a backup prefix or retention (application.BackupProblems).
	refused struct {
		reason string
		errs   field.ErrorList
	}
	// childRejected: the API server refused a child; retrying the same object gets the same
	// answer.
	childRejected struct{ err error }
	// childTaken: a child's name is taken by an object the Application does not own.
	childTaken struct{ foreign *foreignError }
	// running: the children are written; Ready follows the links and the Deployment (nil
	// while there is none).
	running struct {
		buckets engine.Condition
		deploy  *appsv1.Deployment
	}
)

func (refused) halts()       {}
func (childRejected) halts() {}
func (childTaken) halts()    {}

// refusal is what the operator refuses to write for reason, nil when errs is empty.
func refusal(reason string, errs field.ErrorList) *refused {
	if len(errs) == 0 {
		return nil
	}
	return &refused{reason, errs}
}

// condition lists every problem as the webhook would.
func (f refused) condition() engine.Condition {
	msgs := make([]string, len(f.errs))
	for i, e := range f.errs {
		msgs[i] = e.Error()
	}
	return *engine.False(f.reason, "The operator refuses to write this for the Application: "+strings.Join(msgs, "; "))
}

func (f refused) ready(*paasv1alpha1.Application) engine.Condition { return f.condition() }

func (f childRejected) ready(*paasv1alpha1.Application) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonChildRejected, "The API server refused a child of this Application: "+apiMessage(f.err))
}

func (f childTaken) ready(*paasv1alpha1.Application) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonResourceConflict, f.foreign.Error()+"; delete it or give the Application another name")
}

func (f running) ready(app *paasv1alpha1.Application) engine.Condition {
	return readyCondition(f.buckets, f.deploy, ptr.Deref(app.Spec.Replicas, 1))
}

// backupFound is what a pass found of the backup CronJob: the CronJob as it stands (nil when
// there is none), and what keeps it from being brought up to date (nil when nothing does).
type backupFound struct {
	cronJob *batchv1.CronJob
	blocked backupFinding
}

// lastSuccess is when a backup run last succeeded, nil when none is known.
func (f *backupFound) lastSuccess() *metav1.Time {
	if f == nil || f.cronJob == nil {
		return nil
	}
	return f.cronJob.Status.LastSuccessfulTime
}

// A backupFinding is one thing that keeps the backup CronJob from being made or brought up to
// date; it decides BackupScheduled.
type backupFinding interface {
	scheduled(backup *paasv1alpha1.Backup) engine.Condition
}

type (
	// notLinked: spec.backup.bucket names a Bucket spec.buckets does not link.
	notLinked struct{}
	// envWaits: the backup's env is the Application's, which the operator refuses to write.
	envWaits struct{}
	// linksWait: the linked Buckets cannot be used yet; reason says whether only their
	// BucketAccesses are not Ready.
	linksWait struct{ reason string }
	// notVersioned: spec.backup.requireVersionedBucket, and the Bucket shows versioning.
	notVersioned struct{ versioning string }
	// keyWaits: the backup's WriteOnly BucketAccess has no key yet.
	keyWaits struct{ problem string }
	// readKeyWaits: the backup's ReadOnly key to the Bucket of a link is not there yet.
	readKeyWaits struct{ bucket, problem string }
)

func (f refused) scheduled(*paasv1alpha1.Backup) engine.Condition { return f.condition() }

func (notLinked) scheduled(b *paasv1alpha1.Backup) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonBucketNotLinked, fmt.Sprintf("spec.backup.bucket is %s, which spec.buckets does not link", b.Bucket))
}

func (envWaits) scheduled(*paasv1alpha1.Backup) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonEnvNotAllowed, "The backup waits for spec.env to be fixed (see Ready)")
}

func (f linksWait) scheduled(*paasv1alpha1.Backup) engine.Condition {
	return *engine.False(f.reason, "The backup waits for the linked Buckets (see BucketsReady)")
}

func (f notVersioned) scheduled(b *paasv1alpha1.Backup) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonBucketNotVersioned, fmt.Sprintf(
		"spec.backup.requireVersionedBucket: Bucket %s does not have versioning Enabled (it shows %q); set its spec.versioning to Enabled",
		b.Bucket, f.versioning))
}

func (f keyWaits) scheduled(*paasv1alpha1.Backup) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonBucketAccessNotReady, "The backup waits for its WriteOnly credentials: "+f.problem)
}

func (f readKeyWaits) scheduled(*paasv1alpha1.Backup) engine.Condition {
	return *engine.False(paasv1alpha1.ReasonBucketAccessNotReady, fmt.Sprintf(
		"The backup waits for its ReadOnly credentials to Bucket %s: %s", f.bucket, f.problem))
}

// backupsSeen is the snapshots a pass listed, for status.backups (nil: none to show).
type backupsSeen struct{ shown []paasv1alpha1.BackupSnapshot }

// Conclude sets the Application's status from what the pass found, and emits the events of
// the restore and of Ready, in that order.
func (k applicationKind) Conclude(app *paasv1alpha1.Application, out applicationOutcome) {
	f := out.Found
	app.Status.ObservedGeneration = app.Generation
	app.Status.URL = applicationURL(app.Spec.Host)
	if f.buckets != nil {
		engine.Set(&app.Status.Conditions, app.Generation, paasv1alpha1.BucketsReadyCondition, *f.buckets)
	}
	if b := f.backup; b != nil {
		var blocked *engine.Condition
		if b.blocked != nil {
			blocked = ptr.To(b.blocked.scheduled(app.Spec.Backup))
		}
		engine.Set(&app.Status.Conditions, app.Generation, paasv1alpha1.BackupScheduledCondition,
			backupCondition(app.Spec.Backup, b.cronJob, blocked))
		app.Status.LastBackupTime, app.Status.LastSuccessfulBackupTime = nil, nil
		if b.cronJob != nil {
			app.Status.LastBackupTime = b.cronJob.Status.LastScheduleTime
			app.Status.LastSuccessfulBackupTime = b.cronJob.Status.LastSuccessfulTime
		}
	}
	if f.restore != nil {
		k.setRestore(app, f.restore)
	}
	if f.backups != nil {
		app.Status.Backups = f.backups.shown
	}
	if f.ready != nil {
		k.setReady(app, f.ready)
	}
}

// setReady sets the Ready condition and, when its reason changes, emits an event that says so:
// a warning when the Application cannot proceed (a halt, or a keyless one's BucketAccess that
// the provider cannot serve) or stops being Ready for another reason than a rollout; a normal
// event otherwise, its first Ready included.
func (k applicationKind) setReady(app *paasv1alpha1.Application, f readyFinding) {
	wasReady := meta.IsStatusConditionTrue(app.Status.Conditions, paasv1alpha1.ReadyCondition)
	engine.SetAnnounced(k.Recorder, app, &app.Status.Conditions, app.Generation, paasv1alpha1.ReadyCondition, f.ready(app),
		func(c engine.Condition) string {
			if _, halts := f.(halt); halts || c.Reason == paasv1alpha1.ReasonAuthenticationUnsupported ||
				(c.Status == metav1.ConditionFalse && wasReady && c.Reason != paasv1alpha1.ReasonDeploymentProgressing) {
				return corev1.EventTypeWarning
			}
			return corev1.EventTypeNormal
		})
}

// linkState is what one pass saw of a linked Bucket.
type linkState struct {
	// Name is the Bucket.
	Name string
	// Usable: the Bucket has a bucket at the provider and the link's BucketAccess has a key in
	// its Secret, so its environment can be built.
	Usable bool
	// Ready: Usable, and both the Bucket and the BucketAccess are Ready.
	Ready bool
	// Problem says, for people, why the link is not Ready.
	Problem string
	// WaitsForAccess: the Bucket is Ready; only the link's BucketAccess is not. AccessReason
	// is then the reason of the BucketAccess's Ready, when it has one.
	WaitsForAccess bool
	AccessReason   string
}

// bucketsReady summarises the links. conflict, when set, says that two links would define the
// same variables (only possible when the webhook was bypassed).
func bucketsReady(links []linkState, conflict string) engine.Condition {
	if conflict != "" {
		return *engine.False(paasv1alpha1.ReasonEnvPrefixConflict, conflict)
	}
	if len(links) == 0 {
		return *engine.True(paasv1alpha1.ReasonNoBuckets, "The Application links no Bucket")
	}
	var problems []string
	reason := paasv1alpha1.ReasonBucketAccessNotReady
	unsupported := false
	for _, l := range links {
		if !l.Ready {
			problems = append(problems, fmt.Sprintf("%s: %s", l.Name, l.Problem))
			if !l.WaitsForAccess {
				reason = paasv1alpha1.ReasonBucketsNotReady
			}
			unsupported = unsupported || l.AccessReason == storagev1alpha1.ReasonAuthenticationUnsupported
		}
	}
	if unsupported && reason == paasv1alpha1.ReasonBucketAccessNotReady {
		// Waiting does not help: the platform or the Application has to change.
		reason = paasv1alpha1.ReasonAuthenticationUnsupported
	}
	if len(problems) > 0 {
		return *engine.False(reason,
			fmt.Sprintf("%s of %d not Ready: %s", plural(len(problems), "linked Bucket"), len(links), strings.Join(problems, "; ")))
	}
	if len(links) == 1 {
		return *engine.True(paasv1alpha1.ReasonBucketsReady, fmt.Sprintf("Linked Bucket %s is Ready", links[0].Name))
	}
	return *engine.True(paasv1alpha1.ReasonBucketsReady, fmt.Sprintf("All %d linked Buckets are Ready", len(links)))
}

// readyCondition summarises the Application: its Buckets first, then its Deployment. replicas is
// spec.replicas as defaulted.
func readyCondition(buckets engine.Condition, deploy *appsv1.Deployment, replicas int32) engine.Condition {
	if buckets.Status != metav1.ConditionTrue {
		return *engine.False(waitingReason(buckets), buckets.Message)
	}
	if deploy == nil {
		return *engine.False(paasv1alpha1.ReasonDeploymentUnavailable, "The Deployment does not exist yet")
	}
	if deploy.Status.ObservedGeneration < deploy.Generation {
		return *engine.False(paasv1alpha1.ReasonDeploymentProgressing,
			fmt.Sprintf("Deployment %s is rolling out generation %d", deploy.Name, deploy.Generation))
	}
	available := deploy.Status.AvailableReplicas
	msg := fmt.Sprintf("Deployment %s has %d of %d replicas available", deploy.Name, available, replicas)
	if available < replicas && !deploymentAvailable(deploy) {
		return *engine.False(paasv1alpha1.ReasonDeploymentUnavailable, msg)
	}
	return *engine.True(paasv1alpha1.ReasonAvailable, msg)
}

// deploymentAvailable reports the Deployment controller's Available engine.Condition: at least
// the minimum of replicas the rollout strategy allows are available.
func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitingReason is the reason of what waits for the links: BucketAccessNotReady when only
// their BucketAccesses are not Ready, AuthenticationUnsupported or LinksSpanContracts when a
// keyless Application's shared one cannot be served or made, BucketsNotReady otherwise.
func waitingReason(buckets engine.Condition) string {
	switch buckets.Reason {
	case paasv1alpha1.ReasonBucketAccessNotReady, paasv1alpha1.ReasonAuthenticationUnsupported, paasv1alpha1.ReasonLinksSpanContracts:
		return buckets.Reason
	}
	return paasv1alpha1.ReasonBucketsNotReady
}

// backupCondition summarises spec.backup. blocked, when set, says why the CronJob could not be
// made or brought up to date; cronJob is the CronJob as it stands (nil when there is none).
func backupCondition(backup *paasv1alpha1.Backup, cronJob *batchv1.CronJob, blocked *engine.Condition) engine.Condition {
	switch {
	case backup == nil:
		return *engine.False(paasv1alpha1.ReasonNotConfigured, "spec.backup is not set")
	case blocked != nil:
		return *blocked
	case cronJob == nil:
		return *engine.False(paasv1alpha1.ReasonBucketsNotReady, "The backup CronJob does not exist yet")
	case ptr.Deref(cronJob.Spec.Suspend, false):
		return *engine.False(paasv1alpha1.ReasonSuspended,
			fmt.Sprintf("CronJob %s is suspended (spec.backup.suspend)", cronJob.Name))
	}
	return *engine.True(paasv1alpha1.ReasonScheduled,
		fmt.Sprintf("CronJob %s backs up to Bucket %s on schedule %q", cronJob.Name, backup.Bucket, cronJob.Spec.Schedule))
}

// applicationURL is where the application is served, "" without a host.
func applicationURL(host string) string {
	if host == "" {
		return ""
	}
	return "http://" + host
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
