package paas_test

import (
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	paascontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/paas"
)

// The operator writes pods and Ingresses with its own permissions for whoever may write
// Applications. These specs pin that a tenant gets no more through it than a pod or an Ingress
// of their own could have, with the webhooks off (as this suite runs): the controller is the
// last line.
var _ = Describe("An Application written by a tenant", func() {
	It("runs pods that the API server's restricted Pod Security admission accepts", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		readyBucket(ctx, ns, "photos", "team")
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.RunAsUser = ptr.To(int64(1000))
			s.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}}
			s.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
		cj := &batchv1.CronJob{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-backup"}, cj)).To(Succeed())

		By("creating their pod templates as pods in a namespace that enforces the restricted standard")
		restricted := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-",
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
		Expect(k8s.Create(ctx, restricted)).To(Succeed())
		for name, tpl := range map[string]corev1.PodTemplateSpec{"app": d.Spec.Template, "backup": cj.Spec.JobTemplate.Spec.Template} {
			Expect(tpl.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(false)), "%s: no service account token", name)
			Expect(tpl.Spec.SecurityContext.RunAsUser).To(Equal(ptr.To(int64(1000))), "%s: spec.runAsUser", name)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: restricted.Name, Name: name}, Spec: tpl.Spec}
			Expect(k8s.Create(ctx, pod)).To(Succeed(), "the %s pod is refused by the restricted standard", name)
		}

		By("checking that the judge is awake: the same pod without its security context is refused")
		bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: restricted.Name, Name: "bare"}, Spec: *d.Spec.Template.Spec.DeepCopy()}
		bare.Spec.SecurityContext = nil
		bare.Spec.Containers[0].SecurityContext = nil
		err := k8s.Create(ctx, bare)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want PodSecurity to refuse, got %v", err)
		Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted`))
	})

	It("gets no pod that reads a Secret, even when admission let it through", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Env = []corev1.EnvVar{{Name: "STOLEN", ValueFrom: secretRef("someone-elses", "password")}}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())

		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonEnvNotAllowed)
		Expect(ready.Message).To(Equal("The operator refuses to write this for the Application: " +
			"spec.env[0].valueFrom.secretKeyRef: Forbidden: an Application reads Secrets only through its linked Buckets (spec.buckets)"))
		err := k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment was written: %v", err)
		Eventually(func(g Gomega) {
			var warned bool
			for _, e := range namespaceEvents(ctx, ns).Items {
				warned = warned || (e.Type == corev1.EventTypeWarning && e.Reason == paasv1alpha1.ReasonEnvNotAllowed)
			}
			g.Expect(warned).To(BeTrue(), "no EnvNotAllowed warning event")
		}).Should(Succeed())

		By("running once the env is fixed")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Env = []corev1.EnvVar{{Name: "MODE", Value: "demo"}} })
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
	})

	It("gets no pod that reads a ConfigMap or the downward API, even when admission let it through", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) {
			s.Env = []corev1.EnvVar{
				{Name: "CONFIG", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "someone-elses"}, Key: "settings"}}},
				{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed())

		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonEnvNotAllowed)
		Expect(ready.Message).To(Equal("The operator refuses to write this for the Application: " +
			"spec.env[0].valueFrom.configMapKeyRef: Forbidden: an Application's env holds plain values (value); " +
			"the operator writes the pods, which would read a ConfigMap the Application's author may not; " +
			"spec.env[1].valueFrom.fieldRef: Forbidden: an Application's env holds plain values (value); the pod's fields (the downward API) are not offered"))
		err := k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment was written: %v", err)
	})

	It("says what the API server refused in a child, instead of retrying it in silence", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		app := newApp(ns, "greedy", func(s *paasv1alpha1.ApplicationSpec) {
			s.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		})
		Expect(k8s.Create(ctx, app)).To(Succeed()) // no webhooks here: as if admitted under older rules

		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonChildRejected)
		Expect(ready.Message).To(HavePrefix("The API server refused a child of this Application: "))
		Expect(ready.Message).To(ContainSubstring("must be less than or equal to cpu limit"))

		By("running once the spec is fixed")
		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Resources = corev1.ResourceRequirements{} })
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
	})

	It("cannot claim a host outside the allowed domains, and loses the Ingress it had", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		app := newApp(ns, "web", func(s *paasv1alpha1.ApplicationSpec) { s.Host = "tenant.example.com" })
		Expect(k8s.Create(ctx, app)).To(Succeed())
		ing := &networkingv1.Ingress{}
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(app), ing) }).Should(Succeed())

		updateApp(ctx, app, func(s *paasv1alpha1.ApplicationSpec) { s.Host = "grafana.corp.test" })
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonHostNotAllowed)
		Expect(ready.Message).To(Equal(`The operator refuses to write this for the Application: spec.host: Invalid value: "grafana.corp.test": ` +
			"must be a name under a domain this cluster lets Applications serve: *.example.com, *.localhost"))
		gone(ctx, ing)
		Expect(strings.HasPrefix(app.Status.URL, "http://")).To(BeTrue())
	})
})

// Two Ingresses for one name let the ingress controller pick either: a tenant could take
// another's traffic. The webhooks are off here: two Applications claim one host, and the
// controller serves it for the one created first only.
var _ = Describe("A host claimed from two namespaces", func() {
	It("is served for the Application that claimed it first, and for the other once that one goes", func(ctx SpecContext) {
		first, second := newNamespace(ctx), newNamespace(ctx)
		owner := newApp(first, "shop", func(s *paasv1alpha1.ApplicationSpec) { s.Host = "shop.example.com" })
		Expect(k8s.Create(ctx, owner)).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(owner), &networkingv1.Ingress{}) }).Should(Succeed())

		// Created a second later at least, so owner comes first whatever the names.
		time.Sleep(time.Second)
		claimer := newApp(second, "shop", func(s *paasv1alpha1.ApplicationSpec) { s.Host = "shop.example.com" })
		Expect(k8s.Create(ctx, claimer)).To(Succeed())
		ready := appCondition(ctx, claimer, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonHostConflict)
		Expect(ready.Message).To(Equal(`The operator refuses to write this for the Application: spec.host: Invalid value: "shop.example.com": ` +
			"is already served by an Application in another namespace: a host belongs to one Application"))
		Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(claimer), &networkingv1.Ingress{}))
		}, 2*time.Second).Should(BeTrue(), "a second Ingress routes the host of another namespace's Application")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(owner), &networkingv1.Ingress{})).To(Succeed(), "the first keeps its Ingress")

		By("the first Application goes: the host is free")
		Expect(k8s.Delete(ctx, owner)).To(Succeed())
		gone(ctx, owner)
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(claimer), &networkingv1.Ingress{}) }).Should(Succeed())
		appCondition(ctx, claimer, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
	})
})

var _ = Describe("What a tenant can make the manager cache", func() {
	It("holds neither their unrelated objects nor the data of Secrets they label as a Contract's", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyContract(ctx, ns, "team")
		theirs := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}},
		}}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		large := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forged",
			Labels: map[string]string{storagev1alpha1.ContractLabel: "team"}},
			Data: map[string][]byte{"blob": make([]byte, 512<<10)}}
		Expect(k8s.Create(ctx, large)).To(Succeed())

		By("an Application of the same name is refused the Deployment it does not own")
		app := newApp(ns, "web")
		Expect(k8s.Create(ctx, app)).To(Succeed())
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonResourceConflict)
		Expect(ready.Message).To(HavePrefix("Deployment web exists and does not belong to this Application"))

		By("the cache has seen the labelled Secret without its data, and never the Deployment")
		Eventually(func(g Gomega) {
			cachedSecret := &corev1.Secret{}
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(large), cachedSecret)).To(Succeed())
			g.Expect(cachedSecret.Data).To(BeEmpty())
			g.Expect(cachedSecret.ManagedFields).To(BeEmpty())
		}).Should(Succeed())
		err := cached.Get(ctx, client.ObjectKeyFromObject(theirs), &appsv1.Deployment{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the cache holds a Deployment the operator did not make: %v", err)

		By("the Contract's own Secret is cached whole, as the controllers need it")
		own := &corev1.Secret{}
		Expect(cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: "team-credentials"}, own)).To(Succeed())
		Expect(own.Data).To(HaveKey(storagev1alpha1.SecretKeySecretAccessKey))
	})

	It("gets its labels back on a child whose labels were removed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		app := newApp(ns, "web")
		Expect(k8s.Create(ctx, app)).To(Succeed())
		d := &appsv1.Deployment{}
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(app), d) }).Should(Succeed())

		delete(d.Labels, paascontroller.LabelManagedBy)
		Expect(k8s.Update(ctx, d)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
			g.Expect(d.Labels).To(HaveKeyWithValue(paascontroller.LabelManagedBy, paascontroller.ManagedBy))
		}).Should(Succeed())
	})
})

// The manager runs as its ServiceAccount under the ClusterRole config/rbac ships (see
// stack.ManagerConfig), and the API server enforces owner-reference permissions as hardened
// clusters do. This spec shows that a verb taken from that role stops the manager, so the
// suites above prove the role is enough.
var _ = Describe("The manager's shipped RBAC", Serial, func() {
	It("needs update on applications/finalizers to make an Application's children", func(ctx SpecContext) {
		DeferCleanup(func(ctx SpecContext) { Expect(stk.SetManagerRole(ctx, nil)).To(Succeed()) })
		Expect(stk.SetManagerRole(ctx, func(role *rbacv1.ClusterRole) {
			role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
				return slices.Contains(r.Resources, "applications/finalizers")
			})
		})).To(Succeed())

		ns := newNamespace(ctx)
		app := newApp(ns, "web")
		Expect(k8s.Create(ctx, app)).To(Succeed())
		Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{}))
		}, 3*time.Second).Should(BeTrue(), "the Deployment was made without update on applications/finalizers")

		By("giving the verb back")
		Expect(stk.SetManagerRole(ctx, nil)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(app), &appsv1.Deployment{})
		}, time.Minute).Should(Succeed())
	})
})
