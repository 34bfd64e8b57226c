package paas_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	paascontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/paas"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
)

// These specs run the Application controller by itself, under the manager's ServiceAccount and
// shipped RBAC, and play the BucketAccess controller: they write a BucketAccess's Secret and
// status as its contract says (status.secretName, status.accessKeyID, Ready), so they can give
// a key, take it back and rotate it at will and watch what the Application controller does.
// The Buckets are made Ready by the whole operator first.
var _ = Describe("The Application controller and its BucketAccesses", Serial, func() {
	It("gives each link, the backup and the restore a BucketAccess of their own, and their pods its keys only",
		func(ctx SpecContext) {
			ns := newNamespace(ctx)
			contract := readyContract(ctx, ns, "team")
			photos := readyBucket(ctx, ns, "photos", "team")
			logs := readyBucket(ctx, ns, "logs", "team")
			contractKeyID, contractSecretKey := credentials(ctx, ns, contract)
			applicationControllerAlone(ctx, ns)

			app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
				s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs", Access: storagev1alpha1.AccessReadOnly}}
				s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"},
					RestoreCommand: []string{"restore"}}
			})
			Expect(k8s.Create(ctx, app)).To(Succeed())
			Expect(app.Spec.Buckets[0].Access).To(Equal(storagev1alpha1.AccessReadWrite), "the CRD defaults access")

			By("making five BucketAccesses, owned by the Application")
			want := map[string]struct {
				bucket    string
				access    storagev1alpha1.AccessMode
				component string
			}{
				"web-photos":  {"photos", storagev1alpha1.AccessReadWrite, "app"},
				"web-logs":    {"logs", storagev1alpha1.AccessReadOnly, "app"},
				"web-backup":  {"photos", storagev1alpha1.AccessWriteOnly, "backup"},
				"web-restore": {"photos", storagev1alpha1.AccessReadOnly, "restore"},
				// The backup reads photos, which the link may write, with a ReadOnly key of its own:
				// the restore's reaches only the backup prefix.
				"web-photos-read": {"photos", storagev1alpha1.AccessReadOnly, "backup"},
			}
			Eventually(func(g Gomega) {
				var list storagev1alpha1.BucketAccessList
				g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
				g.Expect(list.Items).To(HaveLen(len(want)))
				for _, ba := range list.Items {
					w, ok := want[ba.Name]
					g.Expect(ok).To(BeTrue(), "unexpected BucketAccess %s", ba.Name)
					g.Expect(string(ba.Spec.Bucket)).To(Equal(w.bucket), ba.Name)
					g.Expect(ba.Spec.Access).To(Equal(w.access), ba.Name)
					g.Expect(ba.OwnerReferences).To(Equal(controlledBy(app)), ba.Name)
					g.Expect(ba.Labels).To(Equal(labels("web", w.component)), ba.Name)
				}
			}).Should(Succeed())

			By("waiting for their keys, with no Deployment and no CronJob meanwhile")
			buckets := appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
			Expect(buckets.Message).To(Equal("2 linked Buckets of 2 not Ready: photos: BucketAccess web-photos has no status yet; " +
				"logs: BucketAccess web-logs has no status yet"))
			ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
			Expect(ready.Message).To(Equal(buckets.Message))
			backup := appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
			Expect(backup.Message).To(Equal("The backup waits for the linked Buckets (see BucketsReady)"))
			Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{}))).To(BeTrue())

			By("a key for the links: the Deployment reads their Secrets")
			issueKey(ctx, ns, "web-photos", "AKIAPHOTOS1")
			issueKey(ctx, ns, "web-logs", "AKIALOGS1")
			appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady)
			d := &appsv1.Deployment{}
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			Expect(d.Spec.Template.Spec.Containers[0].Env).To(Equal(append(
				linkEnv("PHOTOS_", photos, "web-photos-credentials"), linkEnv("LOGS_", logs, "web-logs-credentials")...)))
			Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(paascontroller.AccessKeysAnnotation, "web-photos=AKIAPHOTOS1,web-logs=AKIALOGS1"))
			backup = appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
			Expect(backup.Message).To(Equal("The backup waits for its WriteOnly credentials: BucketAccess web-backup has no status yet"))

			By("a key for the backup: it waits for the ReadOnly key it reads the backup Bucket with")
			issueKey(ctx, ns, "web-backup", "AKIABACKUP1")
			Eventually(func() string {
				return appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady).Message
			}).Should(Equal("The backup waits for its ReadOnly credentials to Bucket photos: BucketAccess web-photos-read has no status yet"))

			By("a restore waits for the ReadOnly key too")
			patch := client.MergeFrom(app.DeepCopy())
			app.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "web-backup-1"}
			Expect(k8s.Patch(ctx, app, patch)).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
				g.Expect(app.Status.Restore).NotTo(BeNil())
				g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestorePending))
				g.Expect(app.Status.Restore.Message).To(Equal("The restore waits for its ReadOnly credentials: BucketAccess web-restore has no status yet"))
			}).Should(Succeed())

			By("the ReadOnly key: the backup runs with its WriteOnly key and ReadOnly keys to the links only")
			issueKey(ctx, ns, "web-photos-read", "AKIAPHOTOSREAD1")
			issueKey(ctx, ns, "web-restore", "AKIARESTORE1")
			appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
			cj := &batchv1.CronJob{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, cj)).To(Succeed())
			bc := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
			Expect(bc.Env).To(ContainElements(
				corev1.EnvVar{Name: "AWS_ACCESS_KEY_ID", ValueFrom: secretRef("web-backup-credentials", "AWS_ACCESS_KEY_ID")},
				corev1.EnvVar{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: secretRef("web-backup-credentials", "AWS_SECRET_ACCESS_KEY")},
				// photos, the backup Bucket, linked ReadWrite: read with a ReadOnly key of the backup's.
				corev1.EnvVar{Name: "PHOTOS_ACCESS_KEY_ID", ValueFrom: secretRef("web-photos-read-credentials", "AWS_ACCESS_KEY_ID")},
				// logs, linked ReadOnly: read with the link's own key.
				corev1.EnvVar{Name: "LOGS_ACCESS_KEY_ID", ValueFrom: secretRef("web-logs-credentials", "AWS_ACCESS_KEY_ID")},
			))
			backupReads := []any{"web-backup-credentials", "web-photos-read-credentials", "web-logs-credentials"}
			Expect(secretsRead(cj.Spec.JobTemplate.Spec.Template.Spec)).To(And(HaveEach(BeElementOf(backupReads...)), ContainElements(backupReads...)),
				"the backup reads a key that may write")
			Expect(cj.Spec.JobTemplate.Spec.Template.Annotations).To(HaveKeyWithValue(paascontroller.AccessKeysAnnotation,
				"web-backup=AKIABACKUP1,web-photos-read=AKIAPHOTOSREAD1,web-logs=AKIALOGS1"))

			By("the restore reads the snapshot with the ReadOnly key, and writes back with the keys of the links that may write")
			job := &batchv1.Job{}
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
				g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestoreRunning))
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.Status.Restore.Job}, job)).To(Succeed())
			}).Should(Succeed())
			Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElements(
				corev1.EnvVar{Name: "AWS_ACCESS_KEY_ID", ValueFrom: secretRef("web-restore-credentials", "AWS_ACCESS_KEY_ID")},
				corev1.EnvVar{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: secretRef("web-restore-credentials", "AWS_SECRET_ACCESS_KEY")},
				corev1.EnvVar{Name: "PHOTOS_ACCESS_KEY_ID", ValueFrom: secretRef("web-photos-credentials", "AWS_ACCESS_KEY_ID")},
				corev1.EnvVar{Name: "LOGS_BUCKET", Value: logs.Status.BucketName},
			))
			restoreReads := []any{"web-restore-credentials", "web-photos-credentials"}
			Expect(secretsRead(job.Spec.Template.Spec)).To(And(HaveEach(BeElementOf(restoreReads...)), ContainElements(restoreReads...)),
				"the restore reads the key of a link that cannot write back")

			By("finding the Contract's Secret and keys nowhere in the workloads")
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			for name, spec := range map[string]corev1.PodSpec{"Deployment": d.Spec.Template.Spec,
				"CronJob": cj.Spec.JobTemplate.Spec.Template.Spec, "restore Job": job.Spec.Template.Spec} {
				Expect(secretsRead(spec)).To(HaveEach(BeElementOf("web-photos-credentials", "web-logs-credentials",
					"web-backup-credentials", "web-restore-credentials", "web-photos-read-credentials")), "%s reads a Secret that is not a BucketAccess's", name)
				Expect(secretsRead(spec)).NotTo(ContainElement(contract.Status.SecretName), name)
			}
			expectNoSecret([]any{d, cj, job, app, namespaceEvents(ctx, ns)}, contractKeyID, contractSecretKey)

			makeAvailable(ctx, app)
			appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
		})

	It("rolls the Deployment when a BucketAccess's key changes, and only then", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		applicationControllerAlone(ctx, ns)

		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		Expect(k8s.Create(ctx, app)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-photos"}, &storagev1alpha1.BucketAccess{})
		}).Should(Succeed())
		issueKey(ctx, ns, "web-photos", "AKIAFIRST")
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
		before := makeAvailable(ctx, app)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
		Expect(before.Spec.Template.Annotations).To(HaveKeyWithValue(paascontroller.AccessKeysAnnotation, "web-photos=AKIAFIRST"))

		By("rotating the key, as the BucketAccess controller does: a new key in the Secret, its id in status")
		issueKey(ctx, ns, "web-photos", "AKIASECOND")
		d := &appsv1.Deployment{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(paascontroller.AccessKeysAnnotation, "web-photos=AKIASECOND"))
		}).Should(Succeed())
		Expect(d.Generation).To(Equal(before.Generation+1), "a new pod template: the Deployment rolls its pods")
		Expect(d.Spec.Template.Spec.Containers[0].Env).To(Equal(before.Spec.Template.Spec.Containers[0].Env),
			"the environment refers to the Secret; only the annotation changes")
		Eventually(func(g Gomega) {
			var reasons []string
			for _, e := range namespaceEvents(ctx, ns).Items {
				reasons = append(reasons, e.Reason)
			}
			g.Expect(reasons).To(ContainElement("CredentialsChanged"))
		}).Should(Succeed())

		By("changing the BucketAccess otherwise, or its Ready alone: no roll")
		ba := &storagev1alpha1.BucketAccess{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-photos"}, ba)).To(Succeed())
		ba.Labels["example.com/touched"] = "yes"
		Expect(k8s.Update(ctx, ba)).To(Succeed())
		setAccessReady(ctx, ns, "web-photos", metav1.ConditionFalse, "PolicyPending", "The bucket's policy does not grant the key yet.")
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
		Expect(ready.Message).To(Equal("1 linked Bucket of 1 not Ready: photos: BucketAccess web-photos is not Ready " +
			"(PolicyPending: The bucket's policy does not grant the key yet.)"))
		generation := d.Generation
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			g.Expect(d.Generation).To(Equal(generation))
		}, 2*time.Second).Should(Succeed())
	})

	It("follows spec.buckets: a new access patches the BucketAccess, an unlinked Bucket's goes", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		readyBucket(ctx, ns, "logs", "team")
		applicationControllerAlone(ctx, ns)

		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "logs", Schedule: "@daily", Command: []string{"backup"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		access := func(name string) func() (storagev1alpha1.AccessMode, error) {
			return func() (storagev1alpha1.AccessMode, error) {
				ba := &storagev1alpha1.BucketAccess{}
				err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ba)
				return ba.Spec.Access, err
			}
		}
		Eventually(access("web-logs")).Should(Equal(storagev1alpha1.AccessReadWrite))
		Eventually(access("web-restore")).Should(Equal(storagev1alpha1.AccessReadOnly))
		logsAccess := &storagev1alpha1.BucketAccess{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-logs"}, logsAccess)).To(Succeed())

		By("making the link ReadOnly: the same BucketAccess, patched")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets[1].Access = storagev1alpha1.AccessReadOnly })
		Eventually(access("web-logs")).Should(Equal(storagev1alpha1.AccessReadOnly))
		patched := &storagev1alpha1.BucketAccess{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(logsAccess), patched)).To(Succeed())
		Expect(patched.UID).To(Equal(logsAccess.UID))

		By("dropping the backup and the link to logs: their BucketAccesses go")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) {
			s.Backup = nil
			s.Buckets = s.Buckets[:1]
		})
		for _, name := range []string{"web-logs", "web-backup", "web-restore"} {
			gone(ctx, &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-photos"}, &storagev1alpha1.BucketAccess{})).To(Succeed())

		By("never taking over a BucketAccess that is someone else's")
		theirs := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-photos"},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: storagev1alpha1.AccessReadOnly}}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		shop := newApp(ns, "shop", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		Expect(k8s.Create(ctx, shop)).To(Succeed())
		ready := appCondition(ctx, shop, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonResourceConflict)
		Expect(ready.Message).To(Equal("BucketAccess shop-photos exists and does not belong to this Application; " +
			"delete it or give the Application another name"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
		Expect(theirs.OwnerReferences).To(BeEmpty())
		Expect(theirs.Spec.Access).To(Equal(storagev1alpha1.AccessReadOnly))
	})
})

// applicationControllerAlone stops the operator's manager and runs the Application controller
// by itself, as the manager's ServiceAccount, until the spec ends; then it deletes the
// Applications and BucketAccesses of namespace ns (as the garbage collector would; no
// BucketAccess controller ever saw them), and starts the operator's manager again.
func applicationControllerAlone(ctx SpecContext, ns string) {
	GinkgoHelper()
	Expect(stk.StopManager()).To(Succeed())
	mgr, err := ctrl.NewManager(stack.ManagerConfig(stk.Config), ctrl.Options{
		Scheme:                 operator.Scheme,
		Cache:                  operator.CacheOptions(nil),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(index.Register(ctx, mgr.GetFieldIndexer())).To(Succeed())
	Expect((&paascontroller.ApplicationReconciler{
		Client:         mgr.GetClient(),
		APIReader:      mgr.GetAPIReader(),
		Recorder:       mgr.GetEventRecorder("application-controller"),
		IngressDomains: stk.ManagerOptions.IngressDomains,
		IngressClass:   stk.ManagerOptions.IngressClass,
		TokenAudience:  testAudience,
	}).SetupWithManager(mgr)).To(Succeed())
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
	DeferCleanup(func(ctx SpecContext) {
		cancel()
		Expect(<-done).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &paasv1alpha1.Application{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &storagev1alpha1.BucketAccess{}, client.InNamespace(ns))).To(Succeed())
		Expect(stk.StartManager()).To(Succeed())
		cached = stk.ManagerClient
	})
}

// issueKey plays the BucketAccess controller giving a BucketAccess the key keyID (issued).
func issueKey(ctx context.Context, ns, name, keyID string) {
	GinkgoHelper()
	issued(ctx, ns, name, map[string][]byte{
		storagev1alpha1.SecretKeyAccessKeyID:     []byte(keyID),
		storagev1alpha1.SecretKeySecretAccessKey: []byte("secret-of-" + keyID),
		storagev1alpha1.SecretKeyEndpointURL:     []byte(stk.S3.Endpoint),
		storagev1alpha1.SecretKeyRegion:          []byte(stk.S3.Region),
	}, func(st *storagev1alpha1.BucketAccessStatus) { st.AccessKeyID = keyID }, "The credentials are in Secret %s.")
}

// issued plays the BucketAccess controller once it has what it hands out: it writes data into
// the BucketAccess's Secret (owned by it, labelled as its contract says), then records it in
// status (record, and the Secret's name) and sets Ready, with message (%s: the Secret), for the
// current generation.
func issued(ctx context.Context, ns, name string, data map[string][]byte, record func(*storagev1alpha1.BucketAccessStatus), message string) {
	GinkgoHelper()
	ba := &storagev1alpha1.BucketAccess{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ba)).To(Succeed())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ba.SecretNameOrDefault()}}
	_, err := controllerutil.CreateOrUpdate(ctx, k8s, secret, func() error {
		secret.Labels = map[string]string{storagev1alpha1.ContractLabel: "team", storagev1alpha1.BucketAccessLabel: name}
		secret.Data = data
		return controllerutil.SetControllerReference(ba, secret, k8s.Scheme())
	})
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ba), ba); err != nil {
			return err
		}
		ba.Status.SecretName = secret.Name
		record(&ba.Status)
		ba.Status.ObservedGeneration = ba.Generation
		meta.SetStatusCondition(&ba.Status.Conditions, metav1.Condition{Type: storagev1alpha1.ReadyCondition,
			Status: metav1.ConditionTrue, Reason: storagev1alpha1.ReasonAvailable, ObservedGeneration: ba.Generation,
			Message: fmt.Sprintf(message, secret.Name)})
		return k8s.Status().Update(ctx, ba)
	}).Should(Succeed())
}

// setAccessReady plays the BucketAccess controller changing only its Ready condition.
func setAccessReady(ctx context.Context, ns, name string, status metav1.ConditionStatus, reason, message string) {
	GinkgoHelper()
	ba := &storagev1alpha1.BucketAccess{}
	Eventually(func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ba); err != nil {
			return err
		}
		meta.SetStatusCondition(&ba.Status.Conditions, metav1.Condition{Type: storagev1alpha1.ReadyCondition,
			Status: status, Reason: reason, Message: message, ObservedGeneration: ba.Generation})
		return k8s.Status().Update(ctx, ba)
	}).Should(Succeed())
}

// secretsRead lists the Secrets a pod's containers read through their environment.
func secretsRead(spec corev1.PodSpec) []string {
	var names []string
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				names = append(names, e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, f := range c.EnvFrom {
			if f.SecretRef != nil {
				names = append(names, f.SecretRef.Name)
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			names = append(names, v.Secret.SecretName)
		}
	}
	return names
}
