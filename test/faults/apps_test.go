package faults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// Applications in the scenario: two back up into each backup Bucket, each under its own prefix,
// beside objects no Application owns. (versitygw has no lifecycle rules, so no retention here:
// its rule's prefix is pinned in internal/controller/paas and on Ceph RGW.) The stack has no
// kube-controller-manager, so the scenario plays its part: a backup run (a snapshot written with
// the backup's own key, the CronJob's status), the restore Job's completion, and the garbage
// collector when the Applications go.

// snapshot is the backup run the scenario plays, and restores.
const snapshot = "snap-1"

// createApplications deploys two Applications to a backup Bucket, two Buckets' worth from twenty
// Buckets on (four BucketAccesses each: at any N the scenario's other BucketAccesses are what
// loads the key checks), after putting objects into those Buckets that belong to no
// Application: one beside the prefixes, and one under a name that a prefix without its "/"
// would also cover.
func (sc *scenario) createApplications() {
	var backupBuckets []*storagev1alpha1.Bucket
	for _, b := range sc.buckets {
		if b.Spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyDelete {
			backupBuckets = append(backupBuckets, b)
		}
	}
	n := 2 * min(2, max(1, sc.size.buckets/20))
	sc.kept = map[string]string{}
	for i := range n {
		b := backupBuckets[(i/2)%len(backupBuckets)]
		app := &paasv1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: fmt.Sprintf("app-%d", i)},
			Spec: paasv1alpha1.ApplicationSpec{Image: "app:1", Buckets: []paasv1alpha1.BucketLink{{Name: b.Name}},
				Backup: &paasv1alpha1.Backup{Bucket: b.Name, Schedule: "0 3 * * *",
					Command: []string{"sh", "-c", "backup"}, RestoreCommand: []string{"sh", "-c", "restore"}}},
		}
		for _, key := range []string{"shared/report.csv", app.Name + "-old/" + snapshot + "/dump.sql"} {
			sc.kept[b.Spec.BucketName+"/"+key] = sc.putObject(sc.admin(), b.Spec.BucketName, key, "not an application's: "+key)
		}
		sc.create(app)
		sc.apps = append(sc.apps, app)
	}
}

// backUpAndRestore waits until every Application has its keys and its backup scheduled, plays
// one backup run each, tries each backup key where it must not write, and restores each
// snapshot. It returns how many writes outside an Application's own prefix succeeded.
func (sc *scenario) backUpAndRestore() (trespassed int) {
	sc.t.Helper()
	sc.waitFor("every Application's buckets ready and backup scheduled", func() (string, bool) {
		for _, app := range sc.apps {
			if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(app), app); err != nil {
				return err.Error(), false
			}
			for _, cond := range []string{paasv1alpha1.BucketsReadyCondition, paasv1alpha1.BackupScheduledCondition} {
				if c := meta.FindStatusCondition(app.Status.Conditions, cond); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != app.Generation {
					return fmt.Sprintf("Application %s: %s is %v", app.Name, cond, c), false
				}
			}
		}
		return "", true
	})
	sc.rememberApplicationAccesses()
	for i, app := range sc.apps {
		bucket := sc.bucketOf(app)
		backup := sc.clientFor(app.Name + "-backup-credentials")
		own := app.BackupPrefixOrDefault() + snapshot + "/dump.sql"
		sc.kept[bucket+"/"+own] = sc.putObject(backup, bucket, own, "select 1;")
		neighbour := sc.apps[i^1] // the other Application of the same backup Bucket
		for _, key := range []string{"shared/report.csv", app.Name + "-old/" + snapshot + "/dump.sql", neighbour.BackupPrefixOrDefault() + snapshot + "/dump.sql"} {
			if _, err := backup.PutObject(sc.ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("overwritten")}); err == nil {
				trespassed++
				sc.t.Errorf("the backup key of %s wrote %s in %s, outside its prefix %s", app.Name, key, bucket, app.BackupPrefixOrDefault())
			}
		}
		sc.finishBackupRun(app)
	}
	for _, app := range sc.apps {
		sc.waitFor("the snapshot listed in "+app.Name+"'s status", func() (string, bool) {
			if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(app), app); err != nil {
				return err.Error(), false
			}
			ok := slices.ContainsFunc(app.Status.Backups, func(s paasv1alpha1.BackupSnapshot) bool { return s.Name == snapshot })
			return fmt.Sprintf("status.backups %v", app.Status.Backups), ok
		})
		patch := client.RawPatch(k8stypes.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, paasv1alpha1.RestoreAnnotation, snapshot))
		if err := sc.k8s.Patch(sc.ctx, app, patch); err != nil {
			sc.t.Fatalf("asking %s for a restore: %v", app.Name, err)
		}
	}
	for _, app := range sc.apps {
		sc.completeRestore(app)
	}
	return trespassed
}

// finishBackupRun plays the CronJob controller: the run succeeded.
func (sc *scenario) finishBackupRun(app *paasv1alpha1.Application) {
	sc.t.Helper()
	cj := &batchv1.CronJob{}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: application.BackupCronJobName(app.Name)}, cj); err != nil {
		sc.t.Fatal(err)
	}
	cj.Status.LastScheduleTime, cj.Status.LastSuccessfulTime = now(), now()
	if err := sc.k8s.Status().Update(sc.ctx, cj); err != nil {
		sc.t.Fatal(err)
	}
}

// completeRestore waits for app's restore Job, plays the Job controller (it succeeded), and
// waits until the Application says the restore succeeded.
func (sc *scenario) completeRestore(app *paasv1alpha1.Application) {
	sc.t.Helper()
	sc.waitFor("the restore Job of "+app.Name, func() (string, bool) {
		if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("status.restore %+v", app.Status.Restore), app.Status.Restore != nil && app.Status.Restore.Job != ""
	})
	sc.succeedJob(app.Status.Restore.Job)
	sc.waitFor("the restore of "+app.Name+" succeeded", func() (string, bool) {
		if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err.Error(), false
		}
		r := app.Status.Restore
		return fmt.Sprintf("status.restore %+v", r), r != nil && r.Snapshot == snapshot && r.Phase == paasv1alpha1.RestoreSucceeded
	})
}

// succeedJob plays the Job controller: the Job named name ran and succeeded.
func (sc *scenario) succeedJob(name string) {
	sc.t.Helper()
	job := &batchv1.Job{}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: name}, job); err != nil {
		sc.t.Fatal(err)
	}
	t := now()
	job.Status.StartTime, job.Status.CompletionTime, job.Status.Succeeded = t, t, 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: *t},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: *t},
	}
	if err := sc.k8s.Status().Update(sc.ctx, job); err != nil {
		sc.t.Fatal(err)
	}
}

// rememberApplicationAccesses counts the Applications' BucketAccesses with the scenario's, so
// that the final checks hold their principals and keys to the same promise.
func (sc *scenario) rememberApplicationAccesses() {
	for _, o := range sc.list(&storagev1alpha1.BucketAccessList{}) {
		a := o.(*storagev1alpha1.BucketAccess)
		if !slices.ContainsFunc(a.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.Kind == "Application" }) {
			continue
		}
		if _, known := sc.issued[a.UID]; !known {
			sc.issued[a.UID] = nil
		}
		sc.remember(a)
	}
}

// deleteApplications deletes the Applications and, playing the garbage collector, what they
// own, and waits until their BucketAccesses are gone.
func (sc *scenario) deleteApplications() {
	sc.t.Helper()
	sc.rememberApplicationAccesses()
	deleteAll(sc, sc.apps)
	var owned []*storagev1alpha1.BucketAccess
	for _, o := range sc.list(&storagev1alpha1.BucketAccessList{}) {
		if a := o.(*storagev1alpha1.BucketAccess); len(a.OwnerReferences) > 0 {
			owned = append(owned, a)
		}
	}
	sc.collectGarbage(sc.objects())
	deleteAll(sc, owned)
}

// emptyBackupBuckets empties the Buckets the Applications backed up into, as their user would
// before deleting them.
func (sc *scenario) emptyBackupBuckets() {
	emptied := map[string]bool{}
	for _, app := range sc.apps {
		if b := app.Spec.Backup.Bucket; !emptied[b] {
			emptied[b] = true
			sc.emptyBucket(b)
		}
	}
}

// checkKeptObjects: every object no Application owns, and every Application's snapshot, is as
// it was put. It returns how many were changed or removed.
func (sc *scenario) checkKeptObjects() (touched int) {
	sc.t.Helper()
	for path, etag := range sc.kept {
		bucket, key, _ := strings.Cut(path, "/")
		out, err := sc.admin().HeadObject(sc.ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil || aws.ToString(out.ETag) != etag {
			touched++
			sc.t.Errorf("object %s was changed or removed: %v", path, err)
		}
	}
	return touched
}

// bucketOf is the name of the bucket app backs up into.
func (sc *scenario) bucketOf(app *paasv1alpha1.Application) string {
	return sc.ns + "-" + app.Spec.Backup.Bucket
}

// clientFor is an S3 client with the keys of a Secret, as a pod that mounts it has.
func (sc *scenario) clientFor(secretName string) *s3.Client {
	sc.t.Helper()
	secret := &corev1.Secret{}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: secretName}, secret); err != nil {
		sc.t.Fatal(err)
	}
	return localenv.NewS3Client(sc.stk.S3.Direct, sc.stk.S3.Region,
		string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
}

// putObject writes an object and returns its ETag.
func (sc *scenario) putObject(c *s3.Client, bucket, key, body string) string {
	sc.t.Helper()
	out, err := c.PutObject(sc.ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)})
	if err != nil {
		sc.t.Fatalf("putting %s into %s: %v", key, bucket, err)
	}
	return aws.ToString(out.ETag)
}

// collectGarbage plays the garbage collector the stack lacks: what the scenario's resources own
// is deleted once every owner is gone (a Retain Contract's Secret has none left by then).
func (sc *scenario) collectGarbage(owners []client.Object) {
	live := map[k8stypes.UID]bool{}
	for _, o := range owners {
		live[o.GetUID()] = true
	}
	for _, o := range sc.list(&corev1.SecretList{}, &storagev1alpha1.BucketAccessList{}, &appsv1.DeploymentList{},
		&corev1.ServiceList{}, &batchv1.CronJobList{}, &batchv1.JobList{}) {
		owners := o.GetOwnerReferences()
		if len(owners) == 0 || !o.GetDeletionTimestamp().IsZero() ||
			slices.ContainsFunc(owners, func(ref metav1.OwnerReference) bool { return live[ref.UID] }) {
			continue
		}
		if err := sc.k8s.Delete(sc.ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			sc.t.Fatal(err)
		}
	}
}

// list is every object of these kinds in the scenario's namespace.
func (sc *scenario) list(lists ...client.ObjectList) []client.Object {
	var out []client.Object
	for _, l := range lists {
		if err := sc.k8s.List(sc.ctx, l, client.InNamespace(sc.ns)); err != nil {
			sc.t.Fatal(err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			sc.t.Fatal(err)
		}
		for _, it := range items {
			out = append(out, it.(client.Object))
		}
	}
	return out
}

// adminBucket is how the S3 server's administrator names the bucket of the Bucket named name:
// on Ceph RGW, in the tenant of its contract's account (tenant:bucket), which is the contract's
// id (contractserver.RGWBackend.AccountName).
func (sc *scenario) adminBucket(name string) string {
	bucket := sc.ns + "-" + name
	if sc.stk.Backend.Kind() != "rgw" {
		return bucket
	}
	b, c := &storagev1alpha1.Bucket{}, &storagev1alpha1.Contract{}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: name}, b); err != nil {
		sc.t.Fatal(err)
	}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: b.Spec.ContractName}, c); err != nil {
		sc.t.Fatal(err)
	}
	return c.Status.ContractID + ":" + bucket
}

// emptyBucket deletes every object in the bucket of the Bucket named name, as its user would
// before deleting it.
func (sc *scenario) emptyBucket(name string) {
	sc.t.Helper()
	admin, bucket := sc.admin(), sc.adminBucket(name)
	out, err := admin.ListObjectsV2(sc.ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		sc.t.Fatal(err)
	}
	for _, o := range out.Contents {
		if _, err := admin.DeleteObject(sc.ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
			sc.t.Fatal(err)
		}
	}
}
