package paas_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

var _ = Describe("Backup and restore", func() {
	// The commands a user would write, with the AWS CLI: a backup run copies DATA_DIR into its
	// own snapshot, a restore copies a snapshot back.
	backupCommand := []string{"sh", "-c", `aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp --recursive --only-show-errors "$DATA_DIR" "s3://$BACKUP_BUCKET/$BACKUP_SNAPSHOT_PREFIX"`}
	restoreCommand := []string{"sh", "-c", `aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp --recursive --only-show-errors "s3://$BACKUP_BUCKET/$RESTORE_PREFIX" "$DATA_DIR"`}

	// The backup writes with a WriteOnly key, and status.backups and the restore read with a
	// ReadOnly one: both BucketAccesses of the Application.
	It("restores the data a backup run wrote, each run with the environment its pod would get", func(ctx SpecContext) {
		awsCLI()
		data := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(data, "orders.db"), []byte("orders v1"), 0o600)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(data, "media"), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(data, "media", "logo.png"), []byte("png"), 0o600)).To(Succeed())

		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Env = []corev1.EnvVar{{Name: "DATA_DIR", Value: data}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "* * * * *", Command: backupCommand, RestoreCommand: restoreCommand}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)

		By("running a backup as the CronJob's pod would, and reporting it as its controller would")
		cj := &batchv1.CronJob{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, cj)).To(Succeed())
		const run = "web-backup-29412345"
		runAsPod(ctx, ns, cj.Spec.JobTemplate.Spec.Template.Spec, run)

		By("the backup's WriteOnly key cannot list, read or delete what it wrote, nor write outside the backup prefix")
		for _, cmd := range [][]string{
			{"sh", "-c", `echo x | aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp - "s3://$BACKUP_BUCKET/elsewhere/x"`},
			{"sh", "-c", `aws --endpoint-url "$AWS_ENDPOINT_URL" s3 ls "s3://$BACKUP_BUCKET/$BACKUP_PREFIX"`},
			{"sh", "-c", `aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp "s3://$BACKUP_BUCKET/${BACKUP_SNAPSHOT_PREFIX}orders.db" -`},
			{"sh", "-c", `aws --endpoint-url "$AWS_ENDPOINT_URL" s3 rm "s3://$BACKUP_BUCKET/${BACKUP_SNAPSHOT_PREFIX}orders.db"`},
		} {
			out, err := runInPod(ctx, ns, cj.Spec.JobTemplate.Spec.Template.Spec, run, cmd)
			Expect(err).To(HaveOccurred(), "%s succeeded with the backup's key: %s", cmd[2], out)
			Expect(out).To(MatchRegexp(`AccessDenied|\(403\)`), cmd[2]) // HeadObject's 403 has no body
		}
		By("no key a backup run holds can delete what it wrote: the link's variables carry a ReadOnly key")
		var keyVars []string
		for _, e := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env {
			if strings.HasSuffix(e.Name, "ACCESS_KEY_ID") {
				keyVars = append(keyVars, strings.TrimSuffix(e.Name, "ACCESS_KEY_ID"))
			}
		}
		Expect(keyVars).To(ConsistOf("PHOTOS_", "AWS_"))
		for _, p := range keyVars {
			rm := fmt.Sprintf(`AWS_ACCESS_KEY_ID="$%[1]sACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$%[1]sSECRET_ACCESS_KEY" `+
				`aws --endpoint-url "$AWS_ENDPOINT_URL" s3 rm "s3://$BACKUP_BUCKET/${BACKUP_SNAPSHOT_PREFIX}orders.db"`, p)
			out, err := runInPod(ctx, ns, cj.Spec.JobTemplate.Spec.Template.Spec, run, []string{"sh", "-c", rm})
			Expect(err).To(HaveOccurred(), "the backup's %s key deleted a backup: %s", p, out)
			Expect(out).To(ContainSubstring("AccessDenied"), p)
		}
		cj.Status.LastScheduleTime = &metav1.Time{Time: metav1.Now().Add(-1e9)}
		cj.Status.LastSuccessfulTime = ptrTime(metav1.Now())
		Expect(k8s.Status().Update(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Backups).To(HaveLen(1))
			g.Expect(app.Status.Backups[0].Name).To(Equal(run))
			g.Expect(app.Status.Backups[0].Objects).To(Equal(int64(2)))
		}).Should(Succeed())

		By("losing the data, then asking for a restore of that snapshot")
		Expect(os.RemoveAll(data)).To(Succeed())
		Expect(os.MkdirAll(data, 0o700)).To(Succeed())
		patch := client.MergeFrom(app.DeepCopy())
		app.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: run}
		Expect(k8s.Patch(ctx, app, patch)).To(Succeed())
		var jobName string
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Restore).NotTo(BeNil())
			g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestoreRunning))
			jobName = app.Status.Restore.Job
		}).Should(Succeed())
		job := &batchv1.Job{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobName}, job)).To(Succeed())
		Expect(metav1.IsControlledBy(job, app)).To(BeTrue())
		runAsPod(ctx, ns, job.Spec.Template.Spec, jobName)
		Expect(os.ReadFile(filepath.Join(data, "orders.db"))).To(Equal([]byte("orders v1")), "the data comes back")
		Expect(os.ReadFile(filepath.Join(data, "media", "logo.png"))).To(Equal([]byte("png")))

		By("reporting the Job's success in status and in an event")
		now := metav1.Now()
		job.Status.StartTime, job.Status.CompletionTime = &now, &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		job.Status.Succeeded = 1
		Expect(k8s.Status().Update(ctx, job)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestoreSucceeded))
			var reasons []string
			for _, e := range namespaceEvents(ctx, ns).Items {
				if e.Regarding.UID == app.UID {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElements("RestoreStarted", "RestoreSucceeded"))
		}).Should(Succeed())
	})

	It("holds the backup back while its Bucket is not versioned, when asked to", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team") // versitygw as the tests start it keeps no versions
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: backupCommand, RequireVersionedBucket: true}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		cond := appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketNotVersioned)
		Expect(cond.Message).To(ContainSubstring("Bucket photos does not have versioning Enabled"))
		Consistently(func() bool {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, &batchv1.CronJob{})
			return apierrors.IsNotFound(err)
		}, 2*time.Second).Should(BeTrue(), "no backup runs into a bucket that keeps no old versions")
	})

	It("keeps only the restore Job the annotation asks for, and runs one restore at a time", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: backupCommand, RestoreCommand: restoreCommand}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		restoreOf := func(snapshot string) *paasv1alpha1.RestoreStatus {
			GinkgoHelper()
			var st *paasv1alpha1.RestoreStatus
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
				g.Expect(app.Status.Restore).NotTo(BeNil())
				g.Expect(app.Status.Restore.Snapshot).To(Equal(snapshot))
				st = app.Status.Restore
			}).Should(Succeed())
			return st
		}

		annotate(ctx, app, "web-backup-1")
		// The restore waits for its read-only key to work; its Job comes after that.
		Eventually(func() string { return restoreOf("web-backup-1").Job }).ShouldNot(BeEmpty())
		first := restoreOf("web-backup-1").Job

		By("asking for another snapshot while the first restore runs")
		annotate(ctx, app, "web-backup-2")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Restore.Snapshot).To(Equal("web-backup-2"))
			g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestorePending))
			g.Expect(app.Status.Restore.Message).To(Equal("The restore waits for restore Job " + first + " to finish"))
		}).Should(Succeed())
		var jobs batchv1.JobList
		Expect(k8s.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
		Expect(jobs.Items).To(HaveLen(1), "a second restore started beside the first")

		By("the first finishes: its Job goes, the second starts")
		completeJob(ctx, ns, first)
		gone(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: first}})
		Eventually(func() paasv1alpha1.RestorePhase { return restoreOf("web-backup-2").Phase }).Should(Equal(paasv1alpha1.RestoreRunning))
		second := restoreOf("web-backup-2").Job

		By("the second finishes and the annotation is removed: its Job goes, status keeps the outcome")
		completeJob(ctx, ns, second)
		Eventually(func() paasv1alpha1.RestorePhase { return restoreOf("web-backup-2").Phase }).Should(Equal(paasv1alpha1.RestoreSucceeded))
		patch := client.MergeFrom(app.DeepCopy())
		delete(app.Annotations, paasv1alpha1.RestoreAnnotation)
		Expect(k8s.Patch(ctx, app, patch)).To(Succeed())
		gone(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: second}})
		Expect(restoreOf("web-backup-2").Phase).To(Equal(paasv1alpha1.RestoreSucceeded))
	})

	It("says why a restore cannot run, without starting one", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: backupCommand}
		})
		app.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "web-backup-1"}
		Expect(k8s.Create(ctx, app)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Restore).NotTo(BeNil())
			g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestoreFailed))
			g.Expect(app.Status.Restore.Message).To(ContainSubstring("spec.backup.restoreCommand: Required value"))
		}).Should(Succeed())
		var jobs batchv1.JobList
		Expect(k8s.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
		Expect(jobs.Items).To(BeEmpty())
	})
})

// annotate asks for a restore of snapshot.
func annotate(ctx context.Context, app *paasv1alpha1.Application, snapshot string) {
	GinkgoHelper()
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
	patch := client.MergeFrom(app.DeepCopy())
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[paasv1alpha1.RestoreAnnotation] = snapshot
	Expect(k8s.Patch(ctx, app, patch)).To(Succeed())
}

// completeJob reports the Job ns/name complete, as the Job controller would.
func completeJob(ctx context.Context, ns, name string) {
	GinkgoHelper()
	job := &batchv1.Job{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)).To(Succeed())
	now := metav1.Now()
	job.Status.StartTime, job.Status.CompletionTime = &now, &now
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	job.Status.Succeeded = 1
	Expect(k8s.Status().Update(ctx, job)).To(Succeed())
}

// awsCLI fails the spec unless the AWS CLI, which the commands above use, is on PATH.
func awsCLI() {
	GinkgoHelper()
	if _, err := exec.LookPath("aws"); err != nil {
		Fail("the AWS CLI (aws) is not on PATH: `make deps` installs it (Debian package awscli)")
	}
}

// runAsPod runs the pod's only container's command here, with the environment the kubelet
// would give it: values with $(VAR) references expanded, Secret keys read from the API server,
// and the Job name label, which a Job's pods carry.
func runAsPod(ctx context.Context, ns string, spec corev1.PodSpec, jobName string) {
	GinkgoHelper()
	Expect(spec.Containers).To(HaveLen(1))
	c := spec.Containers[0]
	out, err := runInPod(ctx, ns, spec, jobName, append(c.Command, c.Args...))
	Expect(err).NotTo(HaveOccurred(), "%s: %s", strings.Join(c.Command, " "), out)
}

// runInPod runs command here with the environment runAsPod gives the pod's only container.
func runInPod(ctx context.Context, ns string, spec corev1.PodSpec, jobName string, command []string) (string, error) {
	GinkgoHelper()
	Expect(spec.Containers).To(HaveLen(1))
	c := spec.Containers[0]
	env := map[string]string{}
	var list []string
	for _, e := range c.Env {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = expandRefs(e.Value, env)
		case e.ValueFrom.SecretKeyRef != nil:
			s := &corev1.Secret{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: e.ValueFrom.SecretKeyRef.Name}, s)).To(Succeed())
			v = string(s.Data[e.ValueFrom.SecretKeyRef.Key])
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+batchv1.JobNameLabel+"']":
			v = jobName
		default:
			Fail(fmt.Sprintf("env %s: a source this test cannot resolve", e.Name))
		}
		env[e.Name] = v
		list = append(list, e.Name+"="+v)
	}
	cmd := exec.CommandContext(ctx, imageBinary(command[0]), command[1:]...)
	cmd.Env = append(list, "PATH="+os.Getenv("PATH"), "HOME="+GinkgoT().TempDir(),
		"AWS_REQUEST_CHECKSUM_CALCULATION=when_required", "AWS_RESPONSE_CHECKSUM_VALIDATION=when_required")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// imageBinaries are the packages of the images built here, by the binary's path in the image
// (hack/tools/image puts it at /NAME): a pod command that names one runs the same code here.
var imageBinaries = map[string]string{"/osm-backup": "./cmd/osm-backup"}

// imageBinary is where name, a pod command's first word, runs here: the image's binary built
// for this machine, or name itself.
func imageBinary(name string) string {
	GinkgoHelper()
	pkg, ok := imageBinaries[name]
	if !ok {
		return name
	}
	root, err := localenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	bin := filepath.Join(GinkgoT().TempDir(), filepath.Base(name))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = root
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build %s: %s", pkg, out)
	return bin
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandRefs expands $(VAR) from the variables defined before, as the kubelet does.
func expandRefs(s string, defined map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := defined[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
