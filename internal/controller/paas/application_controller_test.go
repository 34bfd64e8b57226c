package paas_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/paas"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

func secretRef(secret, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}
}

// linkEnv is what a link to b, with prefix, must inject.
func linkEnv(prefix string, b *storagev1alpha1.Bucket, secret string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: prefix + "BUCKET", Value: b.Status.BucketName},
		{Name: prefix + "ENDPOINT", Value: b.Status.Endpoint},
		{Name: prefix + "REGION", Value: b.Status.Region},
		{Name: prefix + "ACCESS_KEY_ID", ValueFrom: secretRef(secret, "AWS_ACCESS_KEY_ID")},
		{Name: prefix + "SECRET_ACCESS_KEY", ValueFrom: secretRef(secret, "AWS_SECRET_ACCESS_KEY")},
	}
}

func controlledBy(app *paasv1alpha1.Application) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: "paas.osm.dev/v1alpha1", Kind: "Application", Name: app.Name, UID: app.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

func labels(app, component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app,
		"app.kubernetes.io/component": component, "app.kubernetes.io/managed-by": "object-storage-manager",
	}
}

var _ = Describe("Application", func() {
	It("runs the image with its Buckets' environment, a Service, an Ingress and a backup CronJob", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		contract := readyContract(ctx, ns, "team")
		photos := readyBucket(ctx, ns, "photos", "team")
		uploads := readyBucket(ctx, ns, "user-uploads", "team")
		keyID, secretKey := credentials(ctx, ns, contract)
		secret := contract.Status.SecretName

		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Command = []string{"/bin/web"}
			s.Args = []string{"--verbose"}
			s.Env = []corev1.EnvVar{{Name: "STORE", Value: "$(PHOTOS_BUCKET)"}}
			s.Port = 3000
			s.Replicas = ptr.To(int32(2))
			s.Host = "web.example.com"
			s.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "user-uploads", EnvPrefix: "UP_"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "0 3 * * *", Command: []string{"/bin/backup", "--all"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())

		By("waiting for the BucketAccesses, the Deployment and the other objects")
		photosAccess := accessReady(ctx, ns, "web-photos")
		uploadsAccess := accessReady(ctx, ns, "web-user-uploads")
		backupAccess := accessReady(ctx, ns, "web-backup")
		restoreAccess := accessReady(ctx, ns, "web-restore")
		uploadsReadAccess := accessReady(ctx, ns, "web-user-uploads-read")
		photosReadAccess := accessReady(ctx, ns, "web-photos-read")
		for _, ba := range []*storagev1alpha1.BucketAccess{photosAccess, uploadsAccess, backupAccess, restoreAccess, uploadsReadAccess, photosReadAccess} {
			Expect(ba.OwnerReferences).To(Equal(controlledBy(app)), ba.Name)
		}
		env := []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv} // the schema's defaults, with key
		auth := storagev1alpha1.AuthenticationKey
		Expect(photosAccess.Spec).To(Equal(storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: storagev1alpha1.AccessReadWrite, Formats: env, Authentication: auth}))
		Expect(backupAccess.Spec).To(Equal(storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: storagev1alpha1.AccessWriteOnly,
			Prefix: "web/", Formats: env, Authentication: auth}), "the backup's key reaches only the backup prefix")
		Expect(restoreAccess.Spec).To(Equal(storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: storagev1alpha1.AccessReadOnly,
			Prefix: "web/", Formats: env, Authentication: auth}), "the restore's key reads only the backup prefix")
		Expect(uploadsReadAccess.Spec).To(Equal(storagev1alpha1.BucketAccessSpec{Bucket: "user-uploads", Access: storagev1alpha1.AccessReadOnly, Formats: env, Authentication: auth}))
		Expect(photosReadAccess.Spec).To(Equal(storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: storagev1alpha1.AccessReadOnly, Formats: env, Authentication: auth}))
		appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady)
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
		Expect(ready.Message).To(Equal("Deployment web is rolling out generation 1"))
		Expect(app.Status.URL).To(Equal("http://web.example.com"))
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)

		key := client.ObjectKeyFromObject(app)
		wantEnv := append(linkEnv("PHOTOS_", photos, "web-photos-credentials"), linkEnv("UP_", uploads, "web-user-uploads-credentials")...)

		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, key, d)).To(Succeed())
		Expect(d.OwnerReferences).To(Equal(controlledBy(app)))
		Expect(d.Labels).To(Equal(labels("web", "app")))
		Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{
			"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web", "app.kubernetes.io/component": "app"}))
		Expect(d.Spec.Replicas).To(Equal(ptr.To(int32(2))))
		Expect(d.Spec.Template.Labels).To(Equal(labels("web", "app")))
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(paas.AccessKeysAnnotation,
			"web-photos="+photosAccess.Status.AccessKeyID+",web-user-uploads="+uploadsAccess.Status.AccessKeyID))
		Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Name).To(Equal("app"))
		Expect(c.Image).To(Equal("registry.example/web:1.0"))
		Expect(c.Command).To(Equal([]string{"/bin/web"}))
		Expect(c.Args).To(Equal([]string{"--verbose"}))
		Expect(c.Ports).To(Equal([]corev1.ContainerPort{{Name: "http", ContainerPort: 3000, Protocol: corev1.ProtocolTCP}}))
		Expect(c.Env).To(Equal(append(wantEnv, corev1.EnvVar{Name: "STORE", Value: "$(PHOTOS_BUCKET)"})))
		Expect(c.Resources.Limits.Memory().String()).To(Equal("256Mi"))
		Expect(photos.Status.BucketName).To(Equal("photos-" + ns))
		Expect(photos.Status.Endpoint).To(Equal(stk.S3.Endpoint))

		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, key, svc)).To(Succeed())
		Expect(svc.OwnerReferences).To(Equal(controlledBy(app)))
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(svc.Spec.Selector).To(Equal(d.Spec.Selector.MatchLabels))
		Expect(svc.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 3000,
			TargetPort: intstr.FromString("http")}}))

		ing := &networkingv1.Ingress{}
		Expect(k8s.Get(ctx, key, ing)).To(Succeed())
		Expect(ing.OwnerReferences).To(Equal(controlledBy(app)))
		Expect(ing.Spec.IngressClassName).To(Equal(ptr.To("public")))
		Expect(ing.Spec.Rules).To(Equal([]networkingv1.IngressRule{{
			Host: "web.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}}},
			}}}},
		}}))

		cj := &batchv1.CronJob{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, cj)).To(Succeed())
		Expect(cj.OwnerReferences).To(Equal(controlledBy(app)))
		Expect(cj.Labels).To(Equal(labels("web", "backup")))
		Expect(cj.Spec.Schedule).To(Equal("0 3 * * *"))
		Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
		Expect(cj.Spec.Suspend).To(Equal(ptr.To(false)))
		Expect(cj.Spec.SuccessfulJobsHistoryLimit).To(Equal(ptr.To(int32(3))))
		Expect(cj.Spec.FailedJobsHistoryLimit).To(Equal(ptr.To(int32(3))))
		Expect(cj.Spec.JobTemplate.Spec.BackoffLimit).To(Equal(ptr.To(int32(2))))
		pod := cj.Spec.JobTemplate.Spec.Template
		Expect(pod.Labels).To(Equal(labels("web", "backup")))
		Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		Expect(pod.Spec.Containers).To(HaveLen(1))
		bc := pod.Spec.Containers[0]
		Expect(bc.Name).To(Equal("backup"))
		Expect(bc.Image).To(Equal("registry.example/web:1.0"), "the backup image defaults to the app's")
		Expect(bc.Command).To(Equal([]string{"/bin/backup", "--all"}))
		// A run reads the links with ReadOnly keys of its own (the restore's reaches only the
		// backup prefix); no key of a link that may write.
		backupLinkEnv := append(linkEnv("PHOTOS_", photos, "web-photos-read-credentials"), linkEnv("UP_", uploads, "web-user-uploads-read-credentials")...)
		Expect(pod.Annotations).To(HaveKeyWithValue(paas.AccessKeysAnnotation, "web-backup="+backupAccess.Status.AccessKeyID+
			",web-photos-read="+photosReadAccess.Status.AccessKeyID+",web-user-uploads-read="+uploadsReadAccess.Status.AccessKeyID))
		Expect(bc.Env).To(Equal(append(append(backupLinkEnv,
			corev1.EnvVar{Name: "BACKUP_BUCKET", Value: photos.Status.BucketName},
			corev1.EnvVar{Name: "BACKUP_PREFIX", Value: "web/"},
			corev1.EnvVar{Name: "AWS_ACCESS_KEY_ID", ValueFrom: secretRef("web-backup-credentials", "AWS_ACCESS_KEY_ID")},
			corev1.EnvVar{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: secretRef("web-backup-credentials", "AWS_SECRET_ACCESS_KEY")},
			corev1.EnvVar{Name: "AWS_ENDPOINT_URL", Value: photos.Status.Endpoint},
			corev1.EnvVar{Name: "AWS_REGION", Value: photos.Status.Region},
			corev1.EnvVar{Name: "BACKUP_RUN", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				APIVersion: "v1", FieldPath: "metadata.labels['batch.kubernetes.io/job-name']"}}},
			corev1.EnvVar{Name: "BACKUP_SNAPSHOT_PREFIX", Value: "$(BACKUP_PREFIX)$(BACKUP_RUN)/"},
		), corev1.EnvVar{Name: "STORE", Value: "$(PHOTOS_BUCKET)"})))

		By("making the Deployment available, as the Deployment controller would")
		makeAvailable(ctx, app)
		ready = appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
		Expect(ready.Message).To(Equal("Deployment web has 2 of 2 replicas available"))

		By("recording a backup run, as the CronJob controller would")
		scheduled := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		succeeded := metav1.NewTime(time.Now().Truncate(time.Second))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
			cj.Status.LastScheduleTime, cj.Status.LastSuccessfulTime = &scheduled, &succeeded
			g.Expect(k8s.Status().Update(ctx, cj)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key, app)).To(Succeed())
			g.Expect(app.Status.LastBackupTime).To(Equal(&scheduled))
			g.Expect(app.Status.LastSuccessfulBackupTime).To(Equal(&succeeded))
		}).Should(Succeed())

		By("finding the Contract's keys in no object, status or event, and its Secret read by no pod")
		Expect(k8s.Get(ctx, key, d)).To(Succeed())
		expectNoSecret([]any{d, cj, svc, ing, app, namespaceEvents(ctx, ns)}, keyID, secretKey)
		Expect(secretsRead(d.Spec.Template.Spec)).NotTo(ContainElement(secret))
		Expect(secretsRead(pod.Spec)).NotTo(ContainElement(secret))
	})

	It("becomes Ready when its Bucket does, without polling", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		photos := newBucket(ctx, ns, "photos", "team") // Contract team does not exist yet
		waitCondition(ctx, photos, func() []metav1.Condition { return photos.Status.Conditions }, storagev1alpha1.ReadyCondition,
			metav1.ConditionFalse, storagev1alpha1.ReasonContractNotFound)

		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		buckets := appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketsNotReady)
		Expect(buckets.Message).To(Equal(fmt.Sprintf("1 linked Bucket of 1 not Ready: photos: Bucket photos is not Ready "+
			"(ContractNotFound: Contract team does not exist in namespace %s)", ns)))
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketsNotReady)
		Expect(ready.Message).To(Equal(buckets.Message))
		By("making no Deployment or CronJob while the credentials are missing")
		Consistently(func() error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{})
		}, 2*time.Second).Should(MatchError(ContainSubstring("not found")))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), &corev1.Service{})).To(Succeed(), "the Service does not depend on Buckets")

		By("creating the Contract: the Bucket becomes Ready, and through it the Application")
		readyContract(ctx, ns, "team")
		appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
		makeAvailable(ctx, app)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)

		By("linking a Bucket that does not exist")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = append(s.Buckets, paasv1alpha1.BucketLink{Name: "logs"})
		})
		buckets = appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketsNotReady)
		Expect(buckets.Message).To(Equal(fmt.Sprintf("1 linked Bucket of 2 not Ready: logs: Bucket logs does not exist in namespace %s", ns)))
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonBucketsNotReady)
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Env).To(HaveLen(5), "the running Deployment is left as it was")
		logsAccess := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-logs"}}
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(logsAccess), logsAccess))).To(BeTrue(),
			"a BucketAccess for a Bucket that does not exist, which admission refuses")
		readyBucket(ctx, ns, "logs", "team")
		accessReady(ctx, ns, "web-logs")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(HaveLen(10))
		}).Should(Succeed())
		makeAvailable(ctx, app)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
	})

	It("rolls the Deployment when its BucketAccess's key is rotated", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		contract := readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		keyID, secretKey := credentials(ctx, ns, contract)
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
		before := makeAvailable(ctx, app)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
		ba := accessReady(ctx, ns, "web-photos")
		first := ba.Status.AccessKeyID
		Expect(before.Spec.Template.Annotations).To(HaveKeyWithValue(paas.AccessKeysAnnotation, "web-photos="+first))

		By("asking the BucketAccess for a new key")
		patch := client.MergeFrom(ba.DeepCopy())
		ba.Annotations = map[string]string{storagev1alpha1.RotateKeyAnnotation: "1"}
		Expect(k8s.Patch(ctx, ba, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ba), ba)).To(Succeed())
			g.Expect(ba.Status.AccessKeyID).NotTo(Equal(first))
		}, time.Minute).Should(Succeed())
		second := ba.Status.AccessKeyID

		d := &appsv1.Deployment{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(paas.AccessKeysAnnotation, "web-photos="+second))
		}).Should(Succeed())
		Expect(d.Generation).To(Equal(before.Generation+1), "a new pod template: the Deployment rolls its pods")
		Expect(d.Spec.Template.Spec.Containers[0].Env).To(Equal(before.Spec.Template.Spec.Containers[0].Env),
			"the environment refers to the Secret; only the annotation changes")
		expectNoSecret([]any{d}, keyID, secretKey)
		makeAvailable(ctx, app)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
	})

	It("makes the Ingress while a host is set and removes it after", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		app := newApp(ns, "site")
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonNoBuckets)
		Expect(app.Status.URL).To(BeEmpty())
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"}}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ing), ing)).To(MatchError(ContainSubstring("not found")))

		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Host = "site.example.com" })
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ing), ing)).To(Succeed())
			g.Expect(ing.Spec.Rules).To(HaveLen(1))
			g.Expect(ing.Spec.Rules[0].Host).To(Equal("site.example.com"))
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.URL).To(Equal("http://site.example.com"))
		}).Should(Succeed())

		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Host = "www.example.com" })
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ing), ing)).To(Succeed())
			g.Expect(ing.Spec.Rules[0].Host).To(Equal("www.example.com"))
		}).Should(Succeed())

		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Host = "" })
		gone(ctx, ing)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.URL).To(BeEmpty())
		}).Should(Succeed())
	})

	It("suspends and removes the backup CronJob with spec.backup", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"},
				Image: "registry.example/backup:2", Prefix: "nightly/"}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		cond := appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		Expect(cond.Message).To(Equal(`CronJob web-backup backs up to Bucket photos on schedule "@daily"`))
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-backup"}}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
		bc := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		Expect(bc.Image).To(Equal("registry.example/backup:2"))
		Expect(bc.Env).To(ContainElement(corev1.EnvVar{Name: "BACKUP_PREFIX", Value: "nightly/"}))

		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Backup.Suspend = true })
		cond = appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonSuspended)
		Expect(cond.Message).To(Equal("CronJob web-backup is suspended (spec.backup.suspend)"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
		Expect(cj.Spec.Suspend).To(Equal(ptr.To(true)))

		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Backup = nil })
		gone(ctx, cj)
		cond = appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionFalse, paasv1alpha1.ReasonNotConfigured)
		Expect(cond.Message).To(Equal("spec.backup is not set"))
		Expect(app.Status.LastBackupTime).To(BeNil())
	})

	It("writes nothing when nothing changed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		photos := readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Env = []corev1.EnvVar{{Name: "STORE", Value: "$(PHOTOS_BUCKET)"}}
			s.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5")}}
			s.Host = "quiet.example.com"
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@hourly", Command: []string{"backup"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		makeAvailable(ctx, app)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)

		key := client.ObjectKeyFromObject(app)
		objs := []client.Object{app, &appsv1.Deployment{}, &corev1.Service{}, &networkingv1.Ingress{}, &batchv1.CronJob{}}
		keys := []client.ObjectKey{key, key, key, key, {Namespace: ns, Name: "web-backup"}}
		versions := func() []string {
			GinkgoHelper()
			var out []string
			for i, o := range objs {
				Expect(k8s.Get(ctx, keys[i], o)).To(Succeed())
				out = append(out, fmt.Sprintf("%T %s", o, o.GetResourceVersion()))
			}
			// Their own controller writes the BucketAccesses' status; the Application's writes
			// would show in their generation or labels.
			var accesses storagev1alpha1.BucketAccessList
			Expect(k8s.List(ctx, &accesses, client.InNamespace(ns))).To(Succeed())
			Expect(accesses.Items).To(HaveLen(4)) // the link's, the backup's, the restore's, the backup's read
			for _, ba := range accesses.Items {
				out = append(out, fmt.Sprintf("BucketAccess %s %d %v", ba.Name, ba.Generation, ba.Labels))
			}
			return out
		}
		// Let the passes the last status change set off finish.
		var settled []string
		Eventually(func(g Gomega) {
			before := versions()
			time.Sleep(time.Second)
			g.Expect(versions()).To(Equal(before))
			settled = before
		}).Should(Succeed())

		By("waking the Application several times through its Bucket")
		for i := range 4 {
			n := reconciles()
			Eventually(func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(photos), photos); err != nil {
					return err
				}
				if photos.Annotations == nil {
					photos.Annotations = map[string]string{}
				}
				photos.Annotations["example.com/poke"] = fmt.Sprint(i)
				return k8s.Update(ctx, photos)
			}).Should(Succeed())
			Eventually(reconciles).Should(BeNumerically(">", n))
		}
		Expect(versions()).To(Equal(settled), "no object, and no status, was written")
	})

	It("lists the Applications linking a Bucket for the Bucket controller", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		a := newApp(ns, "a", func(s *paasv1alpha1.ApplicationSpec) {
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs"}}
		})
		b := newApp(ns, "b", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		c := newApp(ns, "c", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "logs"}} })
		other := newApp(newNamespace(ctx), "a", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		for _, app := range []*paasv1alpha1.Application{b, c, a, other} {
			Expect(k8s.Create(ctx, app)).To(Succeed())
		}
		linking := func(bucket string) func() ([]string, error) {
			return func() ([]string, error) { return index.ApplicationsLinking(ctx, cached, ns, bucket) }
		}
		Eventually(linking("photos")).Should(Equal([]string{"a", "b"}))
		Eventually(linking("logs")).Should(Equal([]string{"a", "c"}))
		Expect(linking("nothing")()).To(BeEmpty())

		updateApp(ctx, b, func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = nil })
		Eventually(linking("photos")).Should(Equal([]string{"a"}))
		Expect(k8s.Delete(ctx, a)).To(Succeed())
		Eventually(linking("photos")).Should(BeEmpty())
		Eventually(linking("logs")).Should(Equal([]string{"c"}))
	})

	// Needs the Bucket controller's in-use finalizer (it calls index.ApplicationsLinking, and
	// looks for BucketAccesses that name the Bucket).
	It("is deleted before its BucketAccesses, they before its Bucket, and the Bucket before its Contract", Label("bucket-in-use"), func(ctx SpecContext) {
		ns := newNamespace(ctx)
		contract := readyContract(ctx, ns, "team")
		photos := readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) { s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}} })
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady)

		By("deleting the Contract and the Bucket first: both wait")
		Expect(k8s.Delete(ctx, contract)).To(Succeed())
		Expect(k8s.Delete(ctx, photos)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(photos), photos)).To(Succeed(), "the Bucket went while an Application links it")
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(contract), contract)).To(Succeed())
		}, 3*time.Second).Should(Succeed())
		Expect(photos.DeletionTimestamp).NotTo(BeNil())

		By("deleting the Application: the Bucket stays while the Application's BucketAccess is there")
		ba := accessReady(ctx, ns, "web-photos")
		Expect(k8s.Delete(ctx, app)).To(Succeed())
		gone(ctx, app)
		Consistently(func() error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(photos), photos)
		}, 3*time.Second).Should(Succeed(), "the Bucket went while a BucketAccess names it")

		By("deleting the BucketAccess, as the garbage collector would: the Bucket goes, then the Contract")
		Expect(metav1.IsControlledBy(ba, app)).To(BeTrue())
		Expect(k8s.Delete(ctx, ba)).To(Succeed())
		gone(ctx, ba)
		gone(ctx, photos)
		gone(ctx, contract)
	})
})
