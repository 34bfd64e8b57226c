package paas

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// ComponentRestore labels the restore Jobs.
const ComponentRestore = "restore"

// restoreBackoffLimit is how often a failed restore is retried by its Job before it is Failed.
const restoreBackoffLimit = 2

// restoreJobName is the Job that restores snapshot: the same snapshot always gets the same Job,
// so a restore runs once per snapshot until its Job is deleted.
func restoreJobName(app *paasv1alpha1.Application, snapshot string) string {
	sum := sha256.Sum256([]byte(snapshot))
	base := app.Name
	if len(base) > 40 {
		base = base[:40]
	}
	return strings.TrimRight(base, "-.") + "-restore-" + hex.EncodeToString(sum[:])[:8]
}

// syncRestore starts the restore the annotation paas.osm.dev/restore asks for, once, and
// reports it in status.restore, with an event when its phase changes. Without the annotation
// status.restore keeps the outcome of the last restore. The Job gets the links' environment,
// with the keys of the links that may write (to put the data back; restoreWriteKey), and the
// backup's with the keys of creds, the restore's ReadOnly BucketAccess: it reads the snapshot
// with a key that cannot change the backups.
//
// Only the Job of the snapshot the annotation names is kept: a finished restore Job of another
// snapshot, or of none, is deleted (status.restore keeps its outcome), and a new restore waits
// while another one still runs, so two never write the data at once.
func (r *ApplicationReconciler) syncRestore(ctx context.Context, app *paasv1alpha1.Application, links []resolvedLink, target *resolvedLink, creds *accessState,
	backupRefused *condition) error {
	snapshot, asked := app.Annotations[paasv1alpha1.RestoreAnnotation]
	keep := ""
	if asked {
		keep = restoreJobName(app, snapshot)
	}
	running, err := r.pruneRestoreJobs(ctx, app, keep)
	if err != nil || !asked {
		return err
	}
	st := &paasv1alpha1.RestoreStatus{Snapshot: snapshot}
	defer func() { r.setRestore(app, st) }()
	if errs := application.RestoreProblems(app); len(errs) > 0 {
		st.Phase, st.Message = paasv1alpha1.RestoreFailed, "The restore cannot run: "+errs.ToAggregate().Error()
		return nil
	}
	if backupRefused != nil {
		st.Phase, st.Message = paasv1alpha1.RestoreFailed, "The restore cannot run: "+backupRefused.Message
		return nil
	}
	if target == nil || creds == nil {
		st.Phase, st.Message = paasv1alpha1.RestorePending, fmt.Sprintf(
			"The restore waits for Bucket %s (see BucketsReady)", app.Spec.Backup.Bucket)
		return nil
	}
	if !creds.Usable {
		st.Phase, st.Message = paasv1alpha1.RestorePending, "The restore waits for its ReadOnly credentials: "+creds.Problem
		return nil
	}
	st.Job = restoreJobName(app, snapshot)
	job := &batchv1.Job{}
	err = r.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: st.Job}, job)
	switch {
	case apierrors.IsNotFound(err) && running != "":
		st.Job = ""
		st.Phase, st.Message = paasv1alpha1.RestorePending, fmt.Sprintf("The restore waits for restore Job %s to finish", running)
		return nil
	case apierrors.IsNotFound(err):
		job = &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: st.Job}}
		env := append(append(bucketEnv(links, restoreWriteKey), backupEnv(*target, *creds, application.BackupPrefix(app))...), userEnv(app.Spec.Env)...)
		keys := []accessState{*creds}
		for _, l := range links {
			if key := restoreWriteKey(l); key != nil {
				keys = append(keys, *key)
			}
		}
		mutateRestoreJob(job, app, snapshot, env, accessKeys(keys...))
		if err := controllerutil.SetControllerReference(app, job, r.Scheme()); err != nil {
			return err
		}
		if err := r.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating restore Job %q: %w", st.Job, err)
		}
		logf.FromContext(ctx).Info("Started a restore", "snapshot", snapshot, "job", st.Job)
		st.Phase = paasv1alpha1.RestoreRunning
		return nil
	case err != nil:
		return fmt.Errorf("reading restore Job %q: %w", st.Job, err)
	case !metav1.IsControlledBy(job, app):
		st.Phase, st.Message = paasv1alpha1.RestoreFailed, fmt.Sprintf("Job %s exists and does not belong to this Application", st.Job)
		return nil
	}
	st.Phase, st.Message = restorePhase(job)
	st.StartTime, st.CompletionTime = job.Status.StartTime, job.Status.CompletionTime
	return nil
}

// pruneRestoreJobs deletes app's finished restore Jobs but keep, and returns the name of one
// that still runs ("" for none).
func (r *ApplicationReconciler) pruneRestoreJobs(ctx context.Context, app *paasv1alpha1.Application, keep string) (string, error) {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(app.Namespace), client.MatchingLabels{
		LabelInstance: app.Name, LabelComponent: ComponentRestore, LabelManagedBy: ManagedBy}); err != nil {
		return "", fmt.Errorf("listing the restore Jobs of the Application: %w", err)
	}
	var running string
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Name == keep || !metav1.IsControlledBy(job, app) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if phase, _ := restorePhase(job); phase == paasv1alpha1.RestoreRunning {
			running = job.Name
			continue
		}
		if err := r.deleteOwned(ctx, app, job, "Job", "the restore it ran is finished, and paas.osm.dev/restore no longer asks for it"); err != nil {
			return "", err
		}
	}
	return running, nil
}

// restorePhase reads a restore Job's outcome from its conditions.
func restorePhase(job *batchv1.Job) (paasv1alpha1.RestorePhase, string) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return paasv1alpha1.RestoreSucceeded, ""
		case batchv1.JobFailed:
			return paasv1alpha1.RestoreFailed, fmt.Sprintf("Job %s failed (%s: %s); delete it to try again", job.Name, c.Reason, c.Message)
		}
	}
	return paasv1alpha1.RestoreRunning, ""
}

// setRestore records st, with an event when the restore reaches a new phase.
func (r *ApplicationReconciler) setRestore(app *paasv1alpha1.Application, st *paasv1alpha1.RestoreStatus) {
	old := app.Status.Restore
	app.Status.Restore = st
	if old != nil && old.Snapshot == st.Snapshot && old.Phase == st.Phase {
		return
	}
	switch st.Phase {
	case paasv1alpha1.RestoreRunning:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RestoreStarted", "Restore",
			"Restoring snapshot %s with Job %s", st.Snapshot, st.Job)
	case paasv1alpha1.RestoreSucceeded:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RestoreSucceeded", "Restore",
			"Restored snapshot %s (Job %s)", st.Snapshot, st.Job)
	case paasv1alpha1.RestoreFailed:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, "RestoreFailed", "Restore", "Snapshot %s: %s", st.Snapshot, st.Message)
	case paasv1alpha1.RestorePending:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RestorePending", "Restore", "Snapshot %s: %s", st.Snapshot, st.Message)
	}
}

// mutateRestoreJob makes job run spec.backup.restoreCommand once, with the given environment
// and where the snapshot is, restricted as the backup's pods are. accessKeys names the keys it
// reads.
func mutateRestoreJob(job *batchv1.Job, app *paasv1alpha1.Application, snapshot string, env []corev1.EnvVar, accessKeys string) {
	c := corev1.Container{Name: ComponentRestore}
	setImage(&c, app.BackupImageOrDefault())
	c.Command = app.Spec.Backup.RestoreCommand
	c.Env = append(append([]corev1.EnvVar(nil), env...),
		corev1.EnvVar{Name: application.EnvRestoreSnapshot, Value: snapshot},
		corev1.EnvVar{Name: application.EnvRestorePrefix, Value: application.BackupPrefix(app) + snapshot + "/"})
	mutateJobRun(&job.ObjectMeta, &job.Spec, app, ComponentRestore, restoreBackoffLimit, accessKeys, c)
}

// maxListedObjects bounds one listing of the backup prefix; maxShownBackups how many
// snapshots status shows.
const (
	maxListedObjects = 10000
	maxShownBackups  = 10
)

// backupsListing is the last successful backup run known when an Application's snapshots were
// last listed.
type backupsListing struct {
	lastSuccess time.Time
}

// listBackups fills status.backups with the newest snapshots under the backup prefix, when a
// backup run finished since the last listing or the listing is older than
// tuning.BackupsListInterval.
// It lists with creds, the restore's ReadOnly BucketAccess: the backup's own key cannot list.
func (r *ApplicationReconciler) listBackups(ctx context.Context, app *paasv1alpha1.Application, target *resolvedLink, creds *accessState) {
	if app.Spec.Backup == nil || target == nil || creds == nil || r.Listers == nil {
		app.Status.Backups = nil
		return
	}
	if !creds.Usable {
		return // status keeps what it showed until the key is back
	}
	var lastSuccess time.Time
	if t := app.Status.LastSuccessfulBackupTime; t != nil {
		lastSuccess = t.Time
	}
	if l, _, ok := r.listed.Get(app.UID, tuning.BackupsListInterval); ok && !lastSuccess.After(l.lastSuccess) && app.Status.Backups != nil {
		return
	}
	log := logf.FromContext(ctx)
	keyID, secretKey, err := r.accessKey(ctx, app.Namespace, *creds)
	if err != nil {
		log.Info("Cannot read the key to list the backups with", "bucketAccess", creds.Name, "error", err.Error())
		return
	}
	lister := r.Listers(target.Endpoint, target.Region, keyID, secretKey)
	sums, _, err := lister.SummarizePrefixes(ctx, target.BucketName, application.BackupPrefix(app), maxListedObjects)
	if err != nil {
		// Status keeps what it showed; the next pass tries again.
		log.Info("Cannot list the backups", "bucket", target.BucketName, "error", objectstore.Describe(err))
		return
	}
	r.listed.Put(app.UID, backupsListing{lastSuccess: lastSuccess})
	app.Status.Backups = make([]paasv1alpha1.BackupSnapshot, 0, min(len(sums), maxShownBackups))
	for _, s := range sums[:min(len(sums), maxShownBackups)] {
		app.Status.Backups = append(app.Status.Backups, paasv1alpha1.BackupSnapshot{
			Name: s.Name, Objects: s.Objects, Bytes: s.Bytes, LastModified: ptr.To(metav1.NewTime(s.LastModified.Truncate(time.Second))),
		})
	}
}

// accessKey reads the key pair in a BucketAccess's Secret, only from a Secret that BucketAccess
// controls. The cache holds it with its data (operator.SecretTransform).
func (r *ApplicationReconciler) accessKey(ctx context.Context, namespace string, creds accessState) (keyID, secretKey string, err error) {
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: creds.SecretName}, secret); err != nil {
		return "", "", fmt.Errorf("reading Secret %q: %w", creds.SecretName, err)
	}
	if owner := metav1.GetControllerOf(secret); owner == nil || string(owner.UID) != creds.UID {
		return "", "", fmt.Errorf("secret %s does not belong to BucketAccess %s", creds.SecretName, creds.Name)
	}
	keyID = string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
	secretKey = string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey])
	if keyID == "" || secretKey == "" {
		return "", "", fmt.Errorf("secret %s holds no key", creds.SecretName)
	}
	return keyID, secretKey, nil
}
