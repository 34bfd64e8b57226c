package paas_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	paascontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/paas"
)

// testAudience is the token audience the Application controller run alone is given, as the
// manager passes its --oidc-audience.
const testAudience = "sts.test.osm.dev"

func keyless(s *paasv1alpha1.ApplicationSpec) {
	s.Authentication = storagev1alpha1.AuthenticationServiceAccount
}

var _ = Describe("A keyless Application (spec.authentication ServiceAccount)", Serial, func() {
	It("gets a ServiceAccount of its own, one BucketAccess its links share, and pods with a projected token and no key",
		func(ctx SpecContext) {
			ns := newNamespace(ctx)
			readyContract(ctx, ns, "team")
			photos := readyBucket(ctx, ns, "photos", "team")
			logs := readyBucket(ctx, ns, "logs", "team")
			applicationControllerAlone(ctx, ns)

			app := newApp(ns, "web", keyless, func(s *paasv1alpha1.ApplicationSpec) {
				s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs", Access: storagev1alpha1.AccessReadOnly}}
			})
			Expect(k8s.Create(ctx, app)).To(Succeed())

			By("making the ServiceAccount web, owned by the Application, that mounts no token by itself")
			sa := &corev1.ServiceAccount{}
			Eventually(func() error { return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, sa) }).Should(Succeed())
			Expect(sa.OwnerReferences).To(Equal(controlledBy(app)))
			Expect(sa.Labels).To(Equal(labels("web", "app")))
			Expect(sa.AutomountServiceAccountToken).To(Equal(ptr.To(false)))

			By("making one BucketAccess web over both Buckets, with each link's access, for that ServiceAccount")
			var list storagev1alpha1.BucketAccessList
			Eventually(func(g Gomega) {
				g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
				g.Expect(list.Items).To(HaveLen(1))
			}).Should(Succeed())
			shared := list.Items[0]
			Expect(shared.Name).To(Equal("web"))
			Expect(shared.OwnerReferences).To(Equal(controlledBy(app)))
			Expect(shared.Spec.Authentication).To(Equal(storagev1alpha1.AuthenticationServiceAccount))
			Expect(shared.Spec.ServiceAccountName).To(Equal("web"))
			Expect(shared.Spec.Bucket).To(BeEmpty())
			Expect(shared.Spec.Buckets).To(Equal([]storagev1alpha1.AccessBucket{
				{Name: "photos", Access: storagev1alpha1.AccessReadWrite}, {Name: "logs", Access: storagev1alpha1.AccessReadOnly}}))

			By("waiting for its role, with no Deployment meanwhile")
			ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
			Expect(ready.Message).To(Equal("2 linked Buckets of 2 not Ready: photos: BucketAccess web has no status yet; " +
				"logs: BucketAccess web has no status yet"))
			Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{}))).To(BeTrue())

			By("its role: the pods run as the ServiceAccount, with a token for the audience and the role's env, and no key")
			issueRole(ctx, ns, "web", "arn:aws:iam::RGW1:role/osm-1")
			appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady)
			d := &appsv1.Deployment{}
			Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(app), d) }).Should(Succeed())
			pod := d.Spec.Template.Spec
			Expect(pod.ServiceAccountName).To(Equal("web"))
			Expect(pod.AutomountServiceAccountToken).To(Equal(ptr.To(false)), "no token but the projected one")
			Expect(pod.Volumes).To(Equal([]corev1.Volume{{Name: "osm-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Audience: testAudience, ExpirationSeconds: ptr.To(int64(3600)), Path: "token"}}},
				DefaultMode: ptr.To(int32(0o644)),
			}}}}))
			c := pod.Containers[0]
			Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "osm-token", MountPath: "/var/run/secrets/osm.dev/serviceaccount", ReadOnly: true}}))
			Expect(c.Env).To(Equal([]corev1.EnvVar{
				{Name: "PHOTOS_BUCKET", Value: photos.Status.BucketName},
				{Name: "PHOTOS_ENDPOINT", Value: photos.Status.Endpoint},
				{Name: "PHOTOS_REGION", Value: photos.Status.Region},
				{Name: "LOGS_BUCKET", Value: logs.Status.BucketName},
				{Name: "LOGS_ENDPOINT", Value: logs.Status.Endpoint},
				{Name: "LOGS_REGION", Value: logs.Status.Region},
				{Name: "AWS_ROLE_ARN", ValueFrom: secretRef("web-credentials", "AWS_ROLE_ARN")},
				{Name: "AWS_WEB_IDENTITY_TOKEN_FILE", Value: "/var/run/secrets/osm.dev/serviceaccount/token"},
				{Name: "AWS_ROLE_SESSION_NAME", Value: "web"},
				{Name: "AWS_ENDPOINT_URL", Value: photos.Status.Endpoint},
				{Name: "AWS_ENDPOINT_URL_STS", Value: photos.Status.Endpoint},
				{Name: "AWS_REGION", ValueFrom: secretRef("web-credentials", "AWS_REGION")},
			}))
			for _, e := range c.Env {
				Expect(e.Name).NotTo(Or(HaveSuffix("ACCESS_KEY_ID"), HaveSuffix("SECRET_ACCESS_KEY")), "a key variable in a keyless pod")
			}
			Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(paascontroller.AccessKeysAnnotation, "web=arn:aws:iam::RGW1:role/osm-1"))
			makeAvailable(ctx, app)
			appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			Consistently(func(g Gomega) {
				now := &appsv1.Deployment{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), now)).To(Succeed())
				g.Expect(now.ResourceVersion).To(Equal(d.ResourceVersion), "the Deployment is written again though nothing changed")
			}, "2s").Should(Succeed())

			By("unlinking logs: the shared BucketAccess is edited, not made again, and Ready waits for it")
			updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = s.Buckets[:1] })
			Eventually(func(g Gomega) {
				ba := &storagev1alpha1.BucketAccess{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&shared), ba)).To(Succeed())
				g.Expect(ba.UID).To(Equal(shared.UID))
				g.Expect(ba.Spec.Buckets).To(Equal([]storagev1alpha1.AccessBucket{{Name: "photos", Access: storagev1alpha1.AccessReadWrite}}))
			}).Should(Succeed())
			ready = appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketAccessNotReady)
			Expect(ready.Message).To(Equal("1 linked Bucket of 1 not Ready: photos: BucketAccess web has not yet taken its buckets into account"))
			issueRole(ctx, ns, "web", "arn:aws:iam::RGW1:role/osm-1")
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
				g.Expect(d.Spec.Template.Spec.Containers[0].Env).NotTo(ContainElement(HaveField("Name", HavePrefix("LOGS_"))))
			}).Should(Succeed())
			Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			Expect(list.Items).To(HaveLen(1))

			By("switching to Key: the ServiceAccount and the shared BucketAccess go, the link gets a key, the pods no token")
			updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Authentication = storagev1alpha1.AuthenticationKey })
			gone(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})
			gone(ctx, &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})
			Eventually(func() error {
				return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-photos"}, &storagev1alpha1.BucketAccess{})
			}).Should(Succeed())
			issueKey(ctx, ns, "web-photos", "AKIAPHOTOS1")
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
				g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(Equal(linkEnv("PHOTOS_", photos, "web-photos-credentials")))
				g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(BeEmpty())
				g.Expect(d.Spec.Template.Spec.Volumes).To(BeEmpty())
				g.Expect(d.Spec.Template.Spec.Containers[0].VolumeMounts).To(BeEmpty())
			}).Should(Succeed())
		})

	It("goes keyless from Key: the link's key goes, the pods roll to the role", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		photos := readyBucket(ctx, ns, "photos", "team")
		applicationControllerAlone(ctx, ns)

		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		Expect(k8s.Create(ctx, app)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-photos"}, &storagev1alpha1.BucketAccess{})
		}).Should(Succeed())
		issueKey(ctx, ns, "web-photos", "AKIAPHOTOS1")
		d := &appsv1.Deployment{}
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(app), d) }).Should(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Env).To(Equal(linkEnv("PHOTOS_", photos, "web-photos-credentials")))

		updateApp(ctx, app, keyless)
		gone(ctx, &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-photos"}})
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &corev1.ServiceAccount{})
		}).Should(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &storagev1alpha1.BucketAccess{})
		}).Should(Succeed())
		issueRole(ctx, ns, "web", "arn:aws:iam::RGW1:role/osm-3")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal("web"))
			g.Expect(d.Spec.Template.Spec.Volumes).To(HaveLen(1))
			g.Expect(secretsRead(d.Spec.Template.Spec)).To(HaveEach("web-credentials"))
		}).Should(Succeed())
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(paascontroller.AccessKeysAnnotation, "web=arn:aws:iam::RGW1:role/osm-3"))
	})

	It("keeps narrow keys for the backup and the restore, which no link lends them", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		readyBucket(ctx, ns, "logs", "team")
		applicationControllerAlone(ctx, ns)

		app := newApp(ns, "web", keyless, func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs", Access: storagev1alpha1.AccessReadOnly}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}, RestoreCommand: []string{"restore"}}
		})
		app.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "web-backup-1"}
		Expect(k8s.Create(ctx, app)).To(Succeed())

		By("making the shared BucketAccess for the links, and keys of their own for the backup and the restore")
		want := map[string]string{"web": "", "web-backup": "WriteOnly", "web-restore": "ReadOnly",
			"web-photos-read": "ReadOnly", "web-logs-read": "ReadOnly", "web-photos-write": "ReadWrite"}
		Eventually(func(g Gomega) {
			var list storagev1alpha1.BucketAccessList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			got := map[string]string{}
			for _, ba := range list.Items {
				got[ba.Name] = string(ba.Spec.Access)
				g.Expect(ba.Keyless()).To(Equal(ba.Name == "web"), ba.Name)
			}
			g.Expect(got).To(Equal(want))
		}).Should(Succeed())
		issueRole(ctx, ns, "web", "arn:aws:iam::RGW1:role/osm-2")
		for name := range want {
			if name != "web" {
				issueKey(ctx, ns, name, "AKIA"+strings.ToUpper(strings.ReplaceAll(name, "-", "")))
			}
		}

		By("the backup reads each link with a ReadOnly key of its own, the restore writes with one of its own")
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		cj := &batchv1.CronJob{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, cj)).To(Succeed())
		Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(ContainElements(
			corev1.EnvVar{Name: "PHOTOS_ACCESS_KEY_ID", ValueFrom: secretRef("web-photos-read-credentials", "AWS_ACCESS_KEY_ID")},
			corev1.EnvVar{Name: "LOGS_ACCESS_KEY_ID", ValueFrom: secretRef("web-logs-read-credentials", "AWS_ACCESS_KEY_ID")},
			corev1.EnvVar{Name: "AWS_ACCESS_KEY_ID", ValueFrom: secretRef("web-backup-credentials", "AWS_ACCESS_KEY_ID")},
		))
		backupReads := []any{"web-backup-credentials", "web-photos-read-credentials", "web-logs-read-credentials"}
		Expect(secretsRead(cj.Spec.JobTemplate.Spec.Template.Spec)).To(And(HaveEach(BeElementOf(backupReads...)), ContainElements(backupReads...)))
		job := &batchv1.Job{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Restore).NotTo(BeNil())
			g.Expect(app.Status.Restore.Phase).To(Equal(paasv1alpha1.RestoreRunning), app.Status.Restore.Message)
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.Status.Restore.Job}, job)).To(Succeed())
		}).Should(Succeed())
		Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElement(
			corev1.EnvVar{Name: "PHOTOS_ACCESS_KEY_ID", ValueFrom: secretRef("web-photos-write-credentials", "AWS_ACCESS_KEY_ID")}))
		restoreReads := []any{"web-restore-credentials", "web-photos-write-credentials"}
		Expect(secretsRead(job.Spec.Template.Spec)).To(And(HaveEach(BeElementOf(restoreReads...)), ContainElements(restoreReads...)))

		By("the app's pods read the role's Secret only")
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
		Expect(secretsRead(d.Spec.Template.Spec)).To(HaveEach("web-credentials"))
	})

	It("never takes over a ServiceAccount of its name that is not its own", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		theirs := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())

		app := newApp(ns, "shop", keyless, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		Expect(k8s.Create(ctx, app)).To(Succeed())
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonResourceConflict)
		Expect(ready.Message).To(Equal("ServiceAccount shop exists and does not belong to this Application; " +
			"delete it or give the Application another name"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
		Expect(theirs.OwnerReferences).To(BeEmpty())
		Expect(theirs.Labels).To(BeEmpty())
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &storagev1alpha1.BucketAccess{}))).
			To(BeTrue(), "a role made for a ServiceAccount the Application does not own")
	})

	It("makes no role for links to Buckets of two Contracts, even when admission let them through", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyContract(ctx, ns, "other")
		readyBucket(ctx, ns, "photos", "team")
		readyBucket(ctx, ns, "logs", "other")

		// This suite installs no webhooks, as when they are off.
		app := newApp(ns, "web", keyless, func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonLinksSpanContracts)
		Expect(ready.Message).To(Equal(`The operator refuses to write this for the Application: spec.buckets[1].name: Invalid value: "logs": ` +
			"belongs to Contract other and Bucket photos to Contract team: with spec.authentication ServiceAccount the links share one role, " +
			"in one Contract's account, so every linked Bucket must belong to the same Contract"))
		buckets := appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonLinksSpanContracts)
		Expect(buckets.Message).To(Equal(ready.Message))
		var list storagev1alpha1.BucketAccessList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(BeEmpty())
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{}))).To(BeTrue())

		By("unlinking the other Contract's Bucket: the shared BucketAccess is made")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = s.Buckets[:1] })
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &storagev1alpha1.BucketAccess{})
		}).Should(Succeed())
	})

	It("says so when the provider cannot serve it (versitygw has no STS, this manager no token issuer)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")

		app := newApp(ns, "web", keyless, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		Expect(k8s.Create(ctx, app)).To(Succeed())
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonAuthenticationUnsupported)
		Expect(ready.Message).To(HavePrefix("1 linked Bucket of 1 not Ready: photos: BucketAccess web is not Ready (AuthenticationUnsupported: "))
		appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonAuthenticationUnsupported)
		Eventually(func(g Gomega) {
			var warnings []string
			for _, e := range namespaceEvents(ctx, ns).Items {
				if e.Regarding.Kind == "Application" && e.Type == corev1.EventTypeWarning {
					warnings = append(warnings, e.Reason)
				}
			}
			g.Expect(warnings).To(ContainElement(paasv1alpha1.ReasonAuthenticationUnsupported))
		}).Should(Succeed())
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{}))).To(BeTrue())
	})
})

// issueRole plays the BucketAccess controller serving a keyless BucketAccess the role roleARN
// (issued).
func issueRole(ctx context.Context, ns, name, roleARN string) {
	GinkgoHelper()
	issued(ctx, ns, name, map[string][]byte{
		storagev1alpha1.SecretKeyRoleARN:       []byte(roleARN),
		storagev1alpha1.SecretKeyEndpointURL:   []byte(stk.S3.Endpoint),
		storagev1alpha1.SecretKeyEndpointSTS:   []byte(stk.S3.Endpoint),
		storagev1alpha1.SecretKeyRegion:        []byte(stk.S3.Region),
		storagev1alpha1.SecretKeyTokenAudience: []byte(testAudience),
	}, func(st *storagev1alpha1.BucketAccessStatus) { st.RoleARN = roleARN }, "Role "+roleARN+" is in Secret %s.")
}
