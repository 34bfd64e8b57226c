package paas_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	paascontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/paas"
)

// A backup's retention is a lifecycle rule written with the account's keys, so the operator
// must never point it, or the backup's writes, at objects that are not the Application's own.
// The webhooks are off in this suite: these specs pin what the controller refuses by itself.
var _ = Describe("An Application's backup prefix", func() {
	// retentionPrefixes are the prefixes the retention rules of Bucket photos expire, by rule
	// id, as the Bucket controller gets them.
	retentionPrefixes := func(ctx SpecContext, ns string) map[string]string {
		GinkgoHelper()
		rules, err := paascontroller.BackupRetentionRules(ctx, cached, ns, "photos")
		Expect(err).NotTo(HaveOccurred())
		out := map[string]string{}
		for _, r := range rules {
			out[r.ID] = r.Prefix
		}
		return out
	}
	noCronJob := func(ctx SpecContext, ns, name string) {
		GinkgoHelper()
		Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &batchv1.CronJob{}))
		}, 2*time.Second).Should(BeTrue(), "a backup CronJob was written for a refused backup")
	}

	It("is one string for the pod, the retention rule and the listing, so $(VAR) is refused", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			// The kubelet would expand this for the pod; the rule and the listing would use it raw.
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"},
				Prefix: "$(PHOTOS_BUCKET)/", Retention: "7d"}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())

		cond := appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBackupPrefixNotAllowed)
		Expect(cond.Message).To(HavePrefix(`The operator refuses to write this for the Application: spec.backup.prefix: Invalid value: "$(PHOTOS_BUCKET)/": must not contain "$"`))
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBackupPrefixNotAllowed)
		noCronJob(ctx, ns, "web-backup")
		Expect(retentionPrefixes(ctx, ns)).To(BeEmpty())

		By("a plain folder: the CronJob's BACKUP_PREFIX is the rule's prefix, character for character")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Backup.Prefix = "team/web/" })
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		cj := &batchv1.CronJob{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, cj)).To(Succeed())
		Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "BACKUP_PREFIX", Value: "team/web/"}))
		Eventually(func() map[string]string { return retentionPrefixes(ctx, ns) }).Should(Equal(map[string]string{"osm-backup-web": "team/web/"}))

		By("changing it back to a refused one deletes the CronJob it had")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Backup.Prefix = "team/../shop/" })
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBackupPrefixNotAllowed)
		gone(ctx, cj)
		Expect(retentionPrefixes(ctx, ns)).To(BeEmpty())
	})

	It("cannot expire another Application's backups, through a ReadOnly link or an overlapping prefix", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		owner := newApp(ns, "owner", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}, Prefix: "data/", Retention: "30d"}
		})
		Expect(k8s.Create(ctx, owner)).To(Succeed())
		appCondition(ctx, owner, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)

		By("a later Application that may only read the Bucket asks to expire everything under data/ after a day")
		// Created a second later at least, so owner comes first whatever the names.
		time.Sleep(time.Second)
		thief := newApp(ns, "aaa-thief", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos", Access: storagev1alpha1.AccessReadOnly}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}, Prefix: "data/", Retention: "1d"}
		})
		Expect(k8s.Create(ctx, thief)).To(Succeed())
		cond := appCondition(ctx, thief, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBackupPrefixConflict)
		Expect(cond.Message).To(Equal(`The operator refuses to write this for the Application: ` +
			`spec.backup.prefix: Invalid value: "data/": overlaps "data/", where Application owner backs up into Bucket photos: ` +
			`each Application backs up under a prefix of its own that no other one's starts with; ` +
			`spec.backup.retention: Forbidden: expires objects in Bucket photos, which this Application links ReadOnly (spec.buckets[0].access): ` +
			`link it ReadWrite or WriteOnly, or keep the backups without a retention`))
		noCronJob(ctx, ns, "aaa-thief-backup")
		Expect(retentionPrefixes(ctx, ns)).To(Equal(map[string]string{"osm-backup-owner": "data/"}))
		appCondition(ctx, owner, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)

		By("once the owner is gone, the prefix is free, and the ReadOnly link still may not expire it")
		Expect(k8s.Delete(ctx, owner)).To(Succeed())
		gone(ctx, owner)
		appCondition(ctx, thief, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonRetentionNotAllowed)
		Expect(retentionPrefixes(ctx, ns)).To(BeEmpty())

		By("a link that may write the Bucket may have its backups expire")
		updateApp(ctx, thief, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets[0].Access = storagev1alpha1.AccessWriteOnly })
		appCondition(ctx, thief, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		Eventually(func() map[string]string { return retentionPrefixes(ctx, ns) }).Should(Equal(map[string]string{"osm-backup-aaa-thief": "data/"}))
	})
})
