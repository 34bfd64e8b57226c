package paas

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

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
