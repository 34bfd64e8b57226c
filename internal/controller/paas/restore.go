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
// finds how it stands, for status.restore (with an event when its phase changes). Without the
// annotation status.restore keeps the outcome of the last restore.
//
// Only the Job of the snapshot the annotation names is kept: a finished restore Job of another
// snapshot, or of none, is deleted (status.restore keeps its outcome), and a new restore waits
// while another one still runs, so two never write the data at once.
func (k applicationKind) syncRestore(ctx context.Context, s *appPass) error {
	snapshot, asked := s.app.Annotations[paasv1alpha1.RestoreAnnotation]
	keep := ""
	if asked {
		keep = restoreJobName(s.app, snapshot)
	}
	running, err := k.pruneRestoreJobs(ctx, s.app, keep)
	if err != nil || !asked {
		return err
	}
	st := s.restoreWaits(snapshot)
	if st == nil {
		st, err = k.restoreJob(ctx, s, snapshot, running)
	}
	s.found.restore = st
	return err
}

// restoreWaits is the status of a restore of snapshot that cannot start, or not yet; nil when
// it may start.
func (s *appPass) restoreWaits(snapshot string) *paasv1alpha1.RestoreStatus {
	st := &paasv1alpha1.RestoreStatus{Snapshot: snapshot}
	creds := s.accesses.restore
	if errs := application.RestoreProblems(s.app); len(errs) > 0 {
		st.Phase, st.Message = paasv1alpha1.RestoreFailed, "The restore cannot run: "+errs.ToAggregate().Error()
		return st
	}
	switch {
	case s.backupRefused != nil:
		st.Phase, st.Message = paasv1alpha1.RestoreFailed, "The restore cannot run: "+s.backupRefused.condition().Message
	case s.backupSource() == nil || creds == nil:
		st.Phase, st.Message = paasv1alpha1.RestorePending, fmt.Sprintf(
			"The restore waits for Bucket %s (see BucketsReady)", s.app.Spec.Backup.Bucket)
	case !creds.Usable:
		st.Phase, st.Message = paasv1alpha1.RestorePending, "The restore waits for its ReadOnly credentials: "+creds.Problem
	default:
		for _, l := range s.links {
			key, ok := s.accesses.restoreWriteKey(l)
			switch {
			case !ok:
				st.Phase, st.Message = paasv1alpha1.RestorePending, fmt.Sprintf("The restore waits for its credentials to Bucket %s", l.Name)
				return st
			case key != nil && !key.Usable:
				st.Phase, st.Message = paasv1alpha1.RestorePending, fmt.Sprintf("The restore waits for its credentials to Bucket %s: %s", l.Name, key.Problem)
				return st
			}
		}
		return nil
	}
	return st
}

// restoreJob finds the restore Job of snapshot, or starts it unless running, another restore
// Job, still runs; it returns the restore as it stands.
func (k applicationKind) restoreJob(ctx context.Context, s *appPass, snapshot, running string) (*paasv1alpha1.RestoreStatus, error) {
	st := &paasv1alpha1.RestoreStatus{Snapshot: snapshot, Job: restoreJobName(s.app, snapshot)}
	job := &batchv1.Job{}
	err := k.Get(ctx, client.ObjectKey{Namespace: s.app.Namespace, Name: st.Job}, job)
	switch {
	case apierrors.IsNotFound(err) && running != "":
		st.Job = ""
		st.Phase, st.Message = paasv1alpha1.RestorePending, fmt.Sprintf("The restore waits for restore Job %s to finish", running)
		return st, nil
	case apierrors.IsNotFound(err):
		return st, k.startRestore(ctx, s, st)
	case err != nil:
		return st, fmt.Errorf("reading restore Job %q: %w", st.Job, err)
	case !metav1.IsControlledBy(job, s.app):
		st.Phase, st.Message = paasv1alpha1.RestoreFailed, fmt.Sprintf("Job %s exists and does not belong to this Application", st.Job)
		return st, nil
	}
	st.Phase, st.Message = restorePhase(job)
	st.StartTime, st.CompletionTime = job.Status.StartTime, job.Status.CompletionTime
	return st, nil
}

// startRestore creates st's restore Job. It gets the links' environment, with keys to the
// links that may write (to put the data back; appAccesses.restoreWriteKey), and the backup's with the key
// of the restore's ReadOnly BucketAccess: it reads the snapshot with a key that cannot change
// the backups.
func (k applicationKind) startRestore(ctx context.Context, s *appPass, st *paasv1alpha1.RestoreStatus) error {
	app, creds := s.app, *s.accesses.restore
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: st.Job}}
	writeKey := func(l resolvedLink) *accessState {
		key, _ := s.accesses.restoreWriteKey(l)
		return key
	}
	env := append(append(bucketEnv(s.links, writeKey), backupEnv(*s.backupSource(), creds, application.BackupPrefix(app))...), userEnv(app.Spec.Env)...)
	keys := []accessState{creds}
	for _, l := range s.links {
		if key := writeKey(l); key != nil {
			keys = append(keys, *key)
		}
	}
	mutateRestoreJob(job, app, st.Snapshot, env, accessKeys(keys...))
	if err := controllerutil.SetControllerReference(app, job, k.Scheme()); err != nil {
		return err
	}
	if err := k.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating restore Job %q: %w", st.Job, err)
	}
	logf.FromContext(ctx).Info("Started a restore", "snapshot", st.Snapshot, "job", st.Job)
	st.Phase = paasv1alpha1.RestoreRunning
	return nil
}

// pruneRestoreJobs deletes app's finished restore Jobs but keep, and returns the name of one
// that still runs ("" for none).
func (k applicationKind) pruneRestoreJobs(ctx context.Context, app *paasv1alpha1.Application, keep string) (string, error) {
	var jobs batchv1.JobList
	if err := k.List(ctx, &jobs, client.InNamespace(app.Namespace), client.MatchingLabels{
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
		if err := k.deleteOwned(ctx, app, job, "Job", "the restore it ran is finished, and paas.osm.dev/restore no longer asks for it"); err != nil {
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
func (k applicationKind) setRestore(app *paasv1alpha1.Application, st *paasv1alpha1.RestoreStatus) {
	old := app.Status.Restore
	app.Status.Restore = st
	if old != nil && old.Snapshot == st.Snapshot && old.Phase == st.Phase {
		return
	}
	switch st.Phase {
	case paasv1alpha1.RestoreRunning:
		k.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RestoreStarted", "Restore",
			"Restoring snapshot %s with Job %s", st.Snapshot, st.Job)
	case paasv1alpha1.RestoreSucceeded:
		k.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RestoreSucceeded", "Restore",
			"Restored snapshot %s (Job %s)", st.Snapshot, st.Job)
	case paasv1alpha1.RestoreFailed:
		k.Recorder.Eventf(app, nil, corev1.EventTypeWarning, "RestoreFailed", "Restore", "Snapshot %s: %s", st.Snapshot, st.Message)
	case paasv1alpha1.RestorePending:
		k.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RestorePending", "Restore", "Snapshot %s: %s", st.Snapshot, st.Message)
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
// It lists with the restore's ReadOnly BucketAccess: the backup's own key cannot list. nil
// leaves status.backups as it shows.
func (k applicationKind) listBackups(ctx context.Context, s *appPass) *backupsSeen {
	app, target, creds := s.app, s.backupSource(), s.accesses.restore
	if app.Spec.Backup == nil || target == nil || creds == nil || k.Listers == nil {
		return &backupsSeen{}
	}
	if !creds.Usable {
		return nil // status keeps what it showed until the key is back
	}
	var lastSuccess time.Time
	if t := s.found.backup.lastSuccess(); t != nil {
		lastSuccess = t.Time
	}
	if l, _, ok := k.listed.Get(app.UID, tuning.BackupsListInterval); ok && !lastSuccess.After(l.lastSuccess) && app.Status.Backups != nil {
		return nil
	}
	log := logf.FromContext(ctx)
	keyID, secretKey, err := k.accessKey(ctx, app.Namespace, *creds)
	if err != nil {
		log.Info("Cannot read the key to list the backups with", "bucketAccess", creds.Name, "error", err.Error())
		return nil
	}
	lister := k.Listers(target.Endpoint, target.Region, keyID, secretKey)
	sums, _, err := lister.SummarizePrefixes(ctx, target.BucketName, application.BackupPrefix(app), maxListedObjects)
	if err != nil {
		// Status keeps what it showed; the next pass tries again.
		log.Info("Cannot list the backups", "bucket", target.BucketName, "error", objectstore.Describe(err))
		return nil
	}
	k.listed.Put(app.UID, backupsListing{lastSuccess: lastSuccess})
	seen := &backupsSeen{shown: make([]paasv1alpha1.BackupSnapshot, 0, min(len(sums), maxShownBackups))}
	for _, sum := range sums[:min(len(sums), maxShownBackups)] {
		seen.shown = append(seen.shown, paasv1alpha1.BackupSnapshot{
			Name: sum.Name, Objects: sum.Objects, Bytes: sum.Bytes, LastModified: ptr.To(metav1.NewTime(sum.LastModified.Truncate(time.Second))),
		})
	}
	return seen
}

// accessKey reads the key pair in a BucketAccess's Secret, only from a Secret that BucketAccess
// controls. The cache holds it with its data (operator.SecretTransform).
func (k applicationKind) accessKey(ctx context.Context, namespace string, creds accessState) (keyID, secretKey string, err error) {
	secret := &corev1.Secret{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: creds.SecretName}, secret); err != nil {
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
