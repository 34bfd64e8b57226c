package v1alpha1

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// namespaceWithBucket makes a namespace with Contract team and Bucket photos under it.
func namespaceWithBucket(ctx SpecContext) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "app-webhook-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	Expect(k8sClient.Create(ctx, &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "team"},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}})).To(Succeed())
	Expect(k8sClient.Create(ctx, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "photos"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "photos-" + ns.Name, ContractName: "team"}})).To(Succeed())
	return ns.Name
}

var _ = Describe("Application webhooks", func() {
	It("stores the defaults", func(ctx SpecContext) {
		ns := namespaceWithBucket(ctx)
		app := &paasv1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: paasv1alpha1.ApplicationSpec{
				Image:   "registry.example/web:1",
				Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}},
				Backup:  &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}},
			},
		}
		Expect(k8sClient.Create(ctx, app)).To(Succeed())
		stored := &paasv1alpha1.Application{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), stored)).To(Succeed())
		Expect(stored.Spec.Port).To(Equal(int32(8080)))
		Expect(stored.Spec.Replicas).To(Equal(ptr.To(int32(1))))
		Expect(stored.Spec.Buckets).To(Equal([]paasv1alpha1.BucketLink{{Name: "photos", EnvPrefix: "PHOTOS_", Access: storagev1alpha1.AccessReadWrite}}))
		Expect(stored.Spec.Backup.Prefix).To(Equal("web/"))
	})

	It("rejects a bad manifest with every problem and its field", func(ctx SpecContext) {
		ns := namespaceWithBucket(ctx)
		app := &paasv1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: paasv1alpha1.ApplicationSpec{
				Image:   "registry.example/web:1",
				Env:     []corev1.EnvVar{{Name: "PHOTOS_BUCKET", Value: "mine"}},
				Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "videos"}},
				Backup:  &paasv1alpha1.Backup{Bucket: "backups", Schedule: "every night", Command: []string{"backup"}},
			},
		}
		err := k8sClient.Create(ctx, app)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Application "web" is invalid: ` +
			"\n* " + `spec.backup.bucket: Invalid value: "backups": must be one of the linked Buckets (spec.buckets[].name): "photos", "videos"` +
			"\n* " + `spec.backup.schedule: Invalid value: "every night": must be a cron schedule such as "0 3 * * *" or "@daily": expected exactly 5 fields, found 2: [every night]` +
			"\n* " + `spec.env[0].name: Invalid value: "PHOTOS_BUCKET": is set by the link to Bucket photos (spec.buckets[0]); choose another name` +
			"\n* " + `spec.buckets[1].name: Invalid value: "videos": no Bucket of this name in namespace "` + ns + `"`))
	})

	It("refuses a host outside the domains the manager allows", func(ctx SpecContext) {
		ns := namespaceWithBucket(ctx)
		app := &paasv1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec:       paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Host: "grafana.corp.example"},
		}
		err := k8sClient.Create(ctx, app)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Application "web" is invalid: spec.host: Invalid value: "grafana.corp.example": ` +
			`must be a name under a domain this cluster lets Applications serve: *.apps.example.com`))

		app.Spec.Host = "web.apps.example.com"
		Expect(k8sClient.Create(ctx, app)).To(Succeed())
	})

	It("rejects derived env prefixes that collide, and accepts them once one is set", func(ctx SpecContext) {
		ns := namespaceWithBucket(ctx)
		for _, name := range []string{"a-b", "a.b"} {
			Expect(k8sClient.Create(ctx, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: storagev1alpha1.BucketSpec{BucketName: "x" + name + "-" + ns, ContractName: "team"}})).To(Succeed())
		}
		app := &paasv1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1",
				Buckets: []paasv1alpha1.BucketLink{{Name: "a-b"}, {Name: "a.b"}}},
		}
		err := k8sClient.Create(ctx, app)
		Expect(kubectlMessage(err)).To(Equal(`The Application "web" is invalid: spec.buckets[1].envPrefix: Invalid value: "A_B_": ` +
			`is also the envPrefix of spec.buckets[0] (Bucket a-b): each link needs its own; set envPrefix on one of them`))
		app.Spec.Buckets[1].EnvPrefix = "A_DOT_B_"
		Expect(k8sClient.Create(ctx, app)).To(Succeed())
	})

	It("refuses a host an Application of another namespace serves", func(ctx SpecContext) {
		first, second := namespaceWithBucket(ctx), namespaceWithBucket(ctx)
		serving := func(ns string) *paasv1alpha1.Application {
			return &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
				Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/shop:1", Host: "shop.apps.example.com"}}
		}
		Expect(k8sClient.Create(ctx, serving(first))).To(Succeed())
		// The webhook reads the manager's cache, which sees the first a moment later.
		Eventually(func(g Gomega) {
			app := serving(second)
			err := k8sClient.Create(ctx, app)
			if err == nil {
				g.Expect(k8sClient.Delete(ctx, app)).To(Succeed())
			}
			g.Expect(err).To(HaveOccurred(), "admitted before the cache saw the first")
			g.Expect(kubectlMessage(err)).To(Equal(`The Application "shop" is invalid: spec.host: Invalid value: "shop.apps.example.com": ` +
				`is already served by an Application in another namespace: a host belongs to one Application`))
		}).Should(Succeed())
	})

	It("keeps each Application's backup prefix its own", func(ctx SpecContext) {
		ns := namespaceWithBucket(ctx)
		backingUp := func(name, prefix string) *paasv1alpha1.Application {
			return &paasv1alpha1.Application{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1",
					Buckets: []paasv1alpha1.BucketLink{{Name: "photos", Access: storagev1alpha1.AccessReadOnly}},
					Backup:  &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}, Prefix: prefix}},
			}
		}
		Expect(k8sClient.Create(ctx, backingUp("shop", ""))).To(Succeed()) // defaulted to shop/

		thief := backingUp("thief", "shop/")
		thief.Spec.Backup.Retention = "1d"
		err := k8sClient.Create(ctx, thief)
		Expect(kubectlMessage(err)).To(Equal(`The Application "thief" is invalid: ` +
			"\n* " + `spec.backup.retention: Forbidden: expires objects in Bucket photos, which this Application links ReadOnly (spec.buckets[0].access): link it ReadWrite or WriteOnly, or keep the backups without a retention` +
			"\n* " + `spec.backup.prefix: Invalid value: "shop/": overlaps "shop/", where Application shop backs up into Bucket photos: each Application backs up under a prefix of its own that no other one's starts with`))

		thief.Spec.Backup.Prefix = "$(PHOTOS_BUCKET)/shop/"
		thief.Spec.Backup.Retention = ""
		err = k8sClient.Create(ctx, thief)
		Expect(kubectlMessage(err)).To(HavePrefix(`The Application "thief" is invalid: ` +
			"\n* " + `spec.backup.prefix: Invalid value: "$(PHOTOS_BUCKET)/shop/": must not contain "$"`))

		thief.Spec.Backup.Prefix = "thief/"
		Expect(k8sClient.Create(ctx, thief)).To(Succeed())
	})

	It("checks only what an update changes", func(ctx SpecContext) {
		ns := namespaceWithBucket(ctx)
		app := &paasv1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec:       paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}}},
		}
		Expect(k8sClient.Create(ctx, app)).To(Succeed())

		By("adding a backup to a Bucket that is not linked")
		app.Spec.Backup = &paasv1alpha1.Backup{Bucket: "logs", Schedule: "@daily", Command: []string{"backup"}}
		err := k8sClient.Update(ctx, app)
		Expect(kubectlMessage(err)).To(Equal(`The Application "web" is invalid: spec.backup.bucket: Invalid value: "logs": ` +
			`must be one of the linked Buckets (spec.buckets[].name): "photos"`))

		By("linking a Bucket that does not exist")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
		app.Spec.Buckets = append(app.Spec.Buckets, paasv1alpha1.BucketLink{Name: "logs"})
		err = k8sClient.Update(ctx, app)
		Expect(kubectlMessage(err)).To(Equal(`The Application "web" is invalid: spec.buckets[1].name: Invalid value: "logs": ` +
			`no Bucket of this name in namespace "` + ns + `"`))

		By("changing metadata only, after the linked Bucket went")
		Expect(k8sClient.Delete(ctx, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "photos"}})).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
		app.Labels = map[string]string{"team": "a"}
		Expect(k8sClient.Update(ctx, app)).To(Succeed())
	})
})
