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

// syncCronJob brings the backup CronJob in line with spec.backup, or deletes it when there is
// no backup or the operator refuses it: nothing is written under a prefix that is not the
// Application's own, not even by a CronJob made before. Its runs get the backup's own
// WriteOnly key and, for the links, ReadOnly keys only (appAccesses.backupReadKey). While
// something keeps the backup from running as the spec says (backupWaits), an existing CronJob
// is left as it is.
func (k applicationKind) syncCronJob(ctx context.Context, s *appPass) error {
	app := s.app
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: application.BackupCronJobName(app.Name)}}
	if s.backupRefused != nil || app.Spec.Backup == nil {
		var blocked backupFinding
		why := "spec.backup is not set"
		if s.backupRefused != nil {
			blocked, why = *s.backupRefused, "the operator refuses the backup (see BackupScheduled)"
		}
		if err := k.deleteOwned(ctx, app, cj, "CronJob", why); err != nil {
			return err
		}
		s.found.backup = &backupFound{blocked: blocked}
		return nil
	}
	blocked, reads, err := s.backupWaits()
	if err != nil {
		return err
	}
	if blocked != nil {
		existing, err := getOwned(ctx, k.Client, app, cj, "CronJob")
		if err != nil {
			return err
		}
		s.found.backup = &backupFound{cronJob: existing, blocked: blocked}
		return nil
	}
	target, creds := backupTarget(app, s.links), *s.accesses.backup
	env := append(bucketEnv(s.links, func(l resolvedLink) *accessState {
		key, _ := s.accesses.backupReadKey(l)
		return key
	}), backupEnv(*target, creds, application.BackupPrefix(app))...)
	env = append(env, backupRunEnv()...)
	env = append(env, userEnv(app.Spec.Env)...)
	keys := accessKeys(append([]accessState{creds}, reads...)...)
	if err := k.apply(ctx, app, cj, "CronJob", func() { mutateCronJob(cj, app, env, keys) }); err != nil {
		return err
	}
	s.found.backup = &backupFound{cronJob: cj}
	return nil
}

// backupWaits is what keeps spec.backup from running as it says, nil when nothing does; reads
// are then the ReadOnly keys its runs copy the links' data with.
func (s *appPass) backupWaits() (blocked backupFinding, reads []accessState, err error) {
	backup, creds := s.app.Spec.Backup, s.accesses.backup
	switch {
	case !linksBucket(s.app.Spec.Buckets, backup.Bucket) || creds == nil || s.accesses.restore == nil:
		return notLinked{}, nil, nil
	case s.envRefused != nil:
		return envWaits{}, nil, nil
	case !s.usable:
		return linksWait{waitingReason(*s.found.buckets)}, nil, nil
	}
	target := backupTarget(s.app, s.links)
	switch {
	case target == nil:
		return nil, nil, fmt.Errorf("backup bucket %q is linked but not resolved", backup.Bucket)
	case backup.RequireVersionedBucket && target.Versioning != string(storagev1alpha1.VersioningEnabled):
		// A backup overwritten or deleted in an unversioned bucket is gone: none is written
		// until the bucket keeps old versions. The Bucket's change wakes this Application.
		return notVersioned{target.Versioning}, nil, nil
	case !creds.Usable:
		return keyWaits{creds.Problem}, nil, nil
	}
	for _, l := range s.links {
		key, ok := s.accesses.backupReadKey(l)
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("the backup's read key for Bucket %q is not known", l.Name)
		case key == nil:
			continue
		case !key.Usable:
			return readKeyWaits{l.Name, key.Problem}, nil, nil
		}
		reads = append(reads, *key)
	}
	return nil, reads, nil
}

// backupRefusal is why the operator refuses to run the Application's backup
// (application.BackupProblems), nil when it may. Of two Applications whose backup prefixes
// overlap in one Bucket, the one created first keeps its backup: the other's is refused.
func (k applicationKind) backupRefusal(ctx context.Context, app *paasv1alpha1.Application) (*refused, error) {
	if app.Spec.Backup == nil {
		return nil, nil
	}
	var list paasv1alpha1.ApplicationList
	if err := k.List(ctx, &list, client.InNamespace(app.Namespace),
		client.MatchingFields{index.ApplicationBucketField: app.Spec.Backup.Bucket}); err != nil {
		return nil, fmt.Errorf("listing the Applications that link Bucket %q: %w", app.Spec.Backup.Bucket, err)
	}
	problems := application.BackupProblems(app, list.Items, func(other *paasv1alpha1.Application) bool { return application.Precedes(other, app) })
	if len(problems) == 0 {
		return nil, nil
	}
	return refusal(problems[0].Reason, application.Errors(problems)), nil
}

// backupSource is the backup Bucket's link, for restores and the listing of backups, nil when
// they may not use it: they need its link and an env the operator may write.
func (s *appPass) backupSource() *resolvedLink {
	if !s.usable || s.envRefused != nil || s.backupRefused != nil {
		return nil
	}
	return backupTarget(s.app, s.links)
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
