package v1alpha1

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// A tenant who may edit Contracts, Buckets and BucketAccesses in its namespace, as platforms
// grant it, can neither abandon nor retain what it bought, nor remove the operator's finalizer;
// binding the install's cost-admin ClusterRole lets it. Every request goes through the API
// server, so the webhook configurations' matchConditions are in front of the guard as in a
// cluster.
var _ = Describe("Powers with a cost", func() {
	var (
		ns     string
		tenant client.Client
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		tenant = newTenant(ctx, ns, "alice")
	})

	It("refuses a tenant the abandon annotation, until the platform binds cost-admin", func(ctx SpecContext) {
		c := newContract(ns, "team")
		Expect(tenant.Create(ctx, c)).To(Succeed())

		abandon := client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"`+storagev1alpha1.AbandonAnnotation+`":"true"}}}`))
		err := tenant.Patch(ctx, c, abandon)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Contract "team" is invalid: metadata.annotations[storage.osm.dev/abandon]: Forbidden: ` +
			`abandon lets the Contract go without releasing what it holds at the provider, which keeps costing; it takes verb abandon on ` +
			`contracts.storage.osm.dev in namespace "` + ns + `", which the ClusterRole object-storage-manager-cost-admin grants`))

		marked := newContract(ns, "marked")
		marked.Annotations = map[string]string{storagev1alpha1.AbandonAnnotation: "true"}
		Expect(tenant.Create(ctx, marked)).To(MatchError(ContainSubstring("it takes verb abandon")), "nor at creation")

		bindCostAdmin(ctx, ns, "alice")
		Eventually(func() error { return tenant.Patch(ctx, c, abandon) }).Should(Succeed())
	})

	It("refuses a tenant the removal of the finalizer of a Bucket being deleted, until the platform binds cost-admin", func(ctx SpecContext) {
		Expect(tenant.Create(ctx, newContract(ns, "team"))).To(Succeed())
		b := newBucket(ns, "data", ns+"-data", "team")
		Eventually(func() error { return tenant.Create(ctx, b) }).Should(Succeed()) // once the webhook's cache has the Contract
		Expect(b.Finalizers).To(ContainElement(storagev1alpha1.Finalizer))
		Expect(tenant.Delete(ctx, b)).To(Succeed())

		release := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))
		err := tenant.Patch(ctx, b, release)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: metadata.finalizers: Forbidden: ` +
			`removing storage.osm.dev/finalizer lets the Bucket go without releasing what it holds at the provider (delete the Bucket, ` +
			`and the operator removes it once done); it takes verb abandon on buckets.storage.osm.dev in namespace "` + ns + `", ` +
			`which the ClusterRole object-storage-manager-cost-admin grants`))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed(), "the Bucket waits for its controller")

		bindCostAdmin(ctx, ns, "alice")
		Eventually(func() error { return tenant.Patch(ctx, b, release) }).Should(Succeed())
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(b), b) }).Should(MatchError(ContainSubstring("not found")))
	})

	It("buys with Delete by default, and refuses a tenant Retain, at creation or later, until the platform binds cost-admin", func(ctx SpecContext) {
		retained := newContract(ns, "kept")
		retained.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		err := tenant.Create(ctx, retained)
		Expect(err).To(HaveOccurred())
		const refusal = `spec.reclaimPolicy: Forbidden: Retain keeps the contract running, and paid for, after the Contract is deleted; ` +
			`leave reclaimPolicy out for Delete; it takes verb retain on contracts.storage.osm.dev in namespace "%s", ` +
			`which the ClusterRole object-storage-manager-cost-admin grants`
		Expect(kubectlMessage(err)).To(Equal(`The Contract "kept" is invalid: ` + fmt.Sprintf(refusal, ns)))

		c := newContract(ns, "team")
		Expect(tenant.Create(ctx, c)).To(Succeed())
		Expect(c.Spec.ReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyDelete))
		c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		err = tenant.Update(ctx, c)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Contract "team" is invalid: ` + fmt.Sprintf(refusal, ns)))

		err = tenant.Patch(ctx, c, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"reclaimPolicy":null}}`)))
		Expect(err).To(HaveOccurred(), "an empty policy keeps the contract too")
		Expect(kubectlMessage(err)).To(Equal(`The Contract "team" is invalid: spec.reclaimPolicy: Forbidden: without reclaimPolicy the contract ` +
			`keeps running, and paid for, after the Contract is deleted, as with Retain; keep Delete; it takes verb retain on ` +
			`contracts.storage.osm.dev in namespace "` + ns + `", which the ClusterRole object-storage-manager-cost-admin grants`))

		By("an account the tenant has: nothing is bought, and nothing is cancelled")
		own := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own"},
			Spec: storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "own-keys"}}}
		Expect(tenant.Create(ctx, own)).To(Succeed())
		Expect(own.Spec.ReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyRetain))

		bindCostAdmin(ctx, ns, "alice")
		Eventually(func() error { return tenant.Create(ctx, retained) }).Should(Succeed())
		Expect(tenant.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		Expect(tenant.Update(ctx, c)).To(Succeed())
	})

	It("refuses a tenant emptyOnDelete, at creation or later, until the platform binds cost-admin", func(ctx SpecContext) {
		Expect(tenant.Create(ctx, newContract(ns, "team"))).To(Succeed())
		emptied := func(name string) *storagev1alpha1.Bucket {
			b := newBucket(ns, name, ns+"-"+name, "team")
			b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			b.Spec.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true}
			return b
		}
		const refusal = `spec.deletion.emptyOnDelete: Forbidden: emptyOnDelete lets deleting the Bucket delete every object in its bucket, ` +
			`which cannot be undone; it takes verb empty on buckets.storage.osm.dev in namespace "%s", ` +
			`which the ClusterRole object-storage-manager-cost-admin grants`
		var err error
		Eventually(func() error { err = tenant.Create(ctx, emptied("logs")); return err }).Should(MatchError(ContainSubstring("verb empty")))
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "logs" is invalid: ` + fmt.Sprintf(refusal, ns)))

		b := newBucket(ns, "data", ns+"-data", "team")
		b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		Expect(tenant.Create(ctx, b)).To(Succeed(), "without emptyOnDelete a tenant needs no verb")
		turnOn := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"deletion":{"emptyOnDelete":true}}}`))
		err = tenant.Patch(ctx, b, turnOn)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: ` + fmt.Sprintf(refusal, ns)))

		bindCostAdmin(ctx, ns, "alice")
		Eventually(func() error { return tenant.Patch(ctx, b, turnOn) }).Should(Succeed())
		Expect(b.Spec.Deletion.EmptyOnDelete).To(BeTrue())
		b.Spec.Deletion.MaxObjects = 50
		Expect(tenant.Update(ctx, b)).To(Succeed(), "once on, changing the cap takes no verb of its own")
	})

	// The guard asks for a verb, not for the install's role: a platform that lets a team tear
	// down its own test buckets grants empty alone, in that namespace, and nothing else follows.
	It("lets a Role with the verb empty alone turn emptyOnDelete on, and still refuses abandon", func(ctx SpecContext) {
		Expect(tenant.Create(ctx, newContract(ns, "team"))).To(Succeed())
		b := newBucket(ns, "scratch", ns+"-scratch", "team")
		b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		Expect(tenant.Create(ctx, b)).To(Succeed())
		turnOn := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"deletion":{"emptyOnDelete":true}}}`))
		Eventually(func() error { return tenant.Patch(ctx, b, turnOn) }).Should(MatchError(ContainSubstring("verb empty")))

		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "teardown"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{storagev1alpha1.GroupVersion.Group},
				Resources: []string{"buckets"}, Verbs: []string{"empty"}}},
		})).To(Succeed())
		bind(ctx, ns, "Role", "teardown", "alice")
		Eventually(func() error { return tenant.Patch(ctx, b, turnOn) }).Should(Succeed())
		Expect(b.Spec.Deletion.EmptyOnDelete).To(BeTrue())

		abandon := client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"`+storagev1alpha1.AbandonAnnotation+`":"true"}}}`))
		Expect(tenant.Patch(ctx, b, abandon)).To(MatchError(ContainSubstring("verb abandon")), "empty grants nothing else")
	})

	It("refuses emptyOnDelete on a Bucket that keeps its bucket, and warns what deletion will remove", func(ctx SpecContext) {
		admin, warnings := warningClient()
		Expect(admin.Create(ctx, newContract(ns, "team"))).To(Succeed())
		kept := newBucket(ns, "kept", ns+"-kept", "team")
		kept.Spec.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true}
		var err error
		Eventually(func() error { err = admin.Create(ctx, kept); return err }).Should(MatchError(ContainSubstring("emptyOnDelete")))
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "kept" is invalid: spec.deletion.emptyOnDelete: Invalid value: true: ` +
			`empties the bucket only when its deletion deletes it: set spec.bucketReclaimPolicy to Delete, or leave emptyOnDelete out`))
		warnings.take()

		kept.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		kept.Spec.Deletion.MaxObjects = 2000000
		Expect(admin.Create(ctx, kept)).To(MatchError(ContainSubstring(
			"spec.deletion.maxObjects: Invalid value: 2000000: spec.deletion.maxObjects in body should be less than or equal to 1000000")))
		kept.Spec.Deletion.MaxObjects = 5000
		Expect(admin.Create(ctx, kept)).To(Succeed())
		Expect(warnings.take()).To(ContainElement("spec.deletion.emptyOnDelete: deleting this Bucket deletes up to 5000 object versions " +
			"and delete markers in bucket " + ns + "-kept, which cannot be undone (objects under object lock are left)"))

		kept.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
		err = admin.Update(ctx, kept)
		Expect(err).To(MatchError(ContainSubstring("spec.deletion.emptyOnDelete: Invalid value: true")), "nor later")
	})

	// The matchConditions call the guard only for a change that costs, by a user without the
	// verb: a tenant's everyday writes and a cluster admin's costly ones cost no call.
	It("is called only for a costly change by a user without the verb", Serial, func(ctx SpecContext) {
		c := newContract(ns, "team")
		Expect(tenant.Create(ctx, c)).To(Succeed())
		before := guardCalls()

		c.Labels = map[string]string{"team": "a"}
		c.Spec.Formats = append(c.Spec.Formats, storagev1alpha1.FormatS3cfg)
		c.Finalizers = append(c.Finalizers, "example.com/mine")
		Expect(tenant.Update(ctx, c)).To(Succeed())
		c.Finalizers = []string{storagev1alpha1.Finalizer}
		Expect(tenant.Update(ctx, c)).To(Succeed(), "a finalizer of the tenant's own is the tenant's")
		Expect(tenant.Delete(ctx, c)).To(Succeed())
		Expect(tenant.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		c.Labels["team"] = "b"
		Expect(tenant.Update(ctx, c)).To(Succeed(), "a Contract being deleted can still be labelled")
		Expect(k8sClient.Patch(ctx, c, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Expect(guardCalls()).To(Equal(before), "no call for these")

		bought := newContract(ns, "again")
		Expect(tenant.Create(ctx, bought)).To(Succeed())
		Expect(tenant.Patch(ctx, bought, client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"reclaimPolicy":"Retain"}}`)))).To(MatchError(ContainSubstring("verb retain")))
		Expect(guardCalls()).To(Equal(before+1), "one call for the tenant's Retain")
	})

	// The manager removes its finalizer in every deletion, without the verb abandon: the guard
	// knows its user (a SelfSubjectReview at start) and lets it through without asking the API
	// server. Here the manager is the suite's administrator; without its system:masters group
	// the matchConditions find no verb and call the guard, as they do for the installed
	// manager's ServiceAccount.
	It("lets the manager's own user remove the finalizer", Serial, func(ctx SpecContext) {
		self := &authenticationv1.SelfSubjectReview{}
		Expect(k8sClient.Create(ctx, self)).To(Succeed())
		manager := newTenant(ctx, ns, self.Status.UserInfo.Username)
		c := newContract(ns, "team")
		Expect(manager.Create(ctx, c)).To(Succeed())
		Expect(manager.Delete(ctx, c)).To(Succeed())
		before := guardCalls()
		Expect(manager.Patch(ctx, c, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Expect(guardCalls()).To(Equal(before+1), "the guard was asked, and let it through")
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(c), c) }).Should(MatchError(ContainSubstring("not found")))
	})
})

// newTenant gives user, impersonated, what a platform grants a team in its namespace: every
// verb but the costly ones on Contracts, Buckets and BucketAccesses.
func newTenant(ctx context.Context, ns, user string) client.Client {
	GinkgoHelper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "edit-"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"storage.osm.dev"}, Resources: []string{"contracts", "buckets", "bucketaccesses"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}}}}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	bind(ctx, ns, "Role", role.Name, user)
	cfg := rest.CopyConfig(server.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	// RBAC is read from the API server's informers: wait until the grant is seen.
	Eventually(func() error {
		return c.List(ctx, &storagev1alpha1.ContractList{}, client.InNamespace(ns))
	}).Should(Succeed())
	return c
}

// bindCostAdmin installs the ClusterRole config/rbac/cost_admin_role.yaml ships, under the name
// config/default gives it, and binds it to user in ns, as a platform team would.
func bindCostAdmin(ctx context.Context, ns, user string) {
	GinkgoHelper()
	root, err := localenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", "cost_admin_role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict(raw, role)).To(Succeed())
	role.ObjectMeta = metav1.ObjectMeta{Name: DefaultCostAdminRole}
	if err := k8sClient.Create(ctx, role); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	bind(ctx, ns, "ClusterRole", DefaultCostAdminRole, user)
}

func bind(ctx context.Context, ns, kind, role, user string) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bind-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
}

// guardCalls counts the admission requests the guard's webhooks have served, from the
// controller-runtime metrics of this process's webhook server.
func guardCalls() float64 {
	GinkgoHelper()
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "webhook" && (l.GetValue() == abandonPath || l.GetValue() == retainPath || l.GetValue() == emptyPath) {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}
