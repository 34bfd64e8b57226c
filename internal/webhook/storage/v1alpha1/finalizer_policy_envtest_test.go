package v1alpha1

import (
	"context"
	"fmt"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

const finalizerPolicy = "storage-osm-dev-finalizer" // config/webhook/finalizer-policy.yaml

// mutateCalls is how many admission requests the mutating webhook at path has answered, from
// controller-runtime's own metric of this process's webhook server.
func mutateCalls(path string) float64 {
	GinkgoHelper()
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	calls := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "webhook" && l.GetValue() == path {
					calls += m.GetCounter().GetValue()
				}
			}
		}
	}
	return calls
}

const (
	mutateBucket       = "/mutate-storage-osm-dev-v1alpha1-bucket"
	mutateContract     = "/mutate-storage-osm-dev-v1alpha1-contract"
	mutateBucketAccess = "/mutate-storage-osm-dev-v1alpha1-bucketaccess"
)

// The finalizer policy and the webhooks' match conditions run in the API server; these specs
// change the binding the whole suite shares, so they run one at a time.
var _ = Describe("The finalizer at creation", Serial, func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	// createdWithoutAWebhookCall creates obj and says whether it went through without a call to
	// the mutating webhook at path.
	createdWithoutAWebhookCall := func(ctx context.Context, obj client.Object, path string) bool {
		GinkgoHelper()
		before := mutateCalls(path)
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		return mutateCalls(path) == before
	}

	It("is put on by the API server's policy, and a create with nothing else to default never calls the mutating webhook", func(ctx SpecContext) {
		contract := newContract(ns, "team-a")
		contract.Spec.SecretName, contract.Spec.ReclaimPolicy = "team-a-keys", storagev1alpha1.ReclaimPolicyRetain
		Expect(createdWithoutAWebhookCall(ctx, contract, mutateContract)).To(BeTrue(), "a Contract with its secretName and reclaimPolicy given")

		// The API server takes a moment to load a policy installed with it: wait until a create
		// of a Bucket no longer reaches the webhook, then hold every create to it.
		i := 0
		Eventually(func() bool {
			i++
			return createdWithoutAWebhookCall(ctx, newBucket(ns, fmt.Sprintf("probe-%d", i), fmt.Sprintf("team-a-probe-%d", i), "team-a"), mutateBucket)
		}).Should(BeTrue(), "a Bucket created without the mutating webhook once the policy is loaded")

		for _, b := range []*storagev1alpha1.Bucket{newBucket(ns, "data", "team-a-data", "team-a"), newBucket(ns, "logs", "team-a-logs", "team-a")} {
			Expect(createdWithoutAWebhookCall(ctx, b, mutateBucket)).To(BeTrue(), "Bucket %s", b.Name)
		}
		access := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		access.Spec.SecretName = "reader-keys"
		Expect(createdWithoutAWebhookCall(ctx, access, mutateBucketAccess)).To(BeTrue(), "a BucketAccess with its secretName given")

		for _, obj := range []client.Object{&storagev1alpha1.Contract{}, &storagev1alpha1.Bucket{}, &storagev1alpha1.BucketAccess{}} {
			key := map[string]client.ObjectKey{"*v1alpha1.Contract": {Namespace: ns, Name: "team-a"},
				"*v1alpha1.Bucket": {Namespace: ns, Name: "data"}, "*v1alpha1.BucketAccess": {Namespace: ns, Name: "reader"}}[fmt.Sprintf("%T", obj)]
			Expect(k8sClient.Get(ctx, key, obj)).To(Succeed())
			Expect(obj.GetFinalizers()).To(ConsistOf(storagev1alpha1.Finalizer), "%T %s", obj, key.Name)
		}

		By("a create that still has a default to fill in calls the webhook, which fills it in")
		defaulted := newContract(ns, "team-b")
		Expect(createdWithoutAWebhookCall(ctx, defaulted, mutateContract)).To(BeFalse())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(defaulted), defaulted)).To(Succeed())
		Expect(defaulted.Spec.SecretName).To(Equal("team-b-credentials"))
		Expect(defaulted.Finalizers).To(ConsistOf(storagev1alpha1.Finalizer))

		By("an update of a Bucket's spec does not call the mutating webhook")
		b := &storagev1alpha1.Bucket{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "logs"}, b)).To(Succeed())
		before := mutateCalls(mutateBucket)
		b.Spec.Versioning = storagev1alpha1.VersioningEnabled
		Expect(k8sClient.Update(ctx, b)).To(Succeed())
		Expect(mutateCalls(mutateBucket)).To(Equal(before))
	})

	It("is put on by the mutating webhook where no policy is bound, as on an API server before 1.36", func(ctx SpecContext) {
		binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: finalizerPolicy}}
		Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			root, err := localenv.ModuleRoot()
			Expect(err).NotTo(HaveOccurred())
			_, err = localenv.ApplyAdmissionPolicies(ctx, k8sClient, []string{filepath.Join(root, "config", "webhook")})
			Expect(err).NotTo(HaveOccurred())
		})
		Expect(k8sClient.Create(ctx, newContract(ns, "team-a"))).To(Succeed())

		// The API server takes a moment to see the binding gone.
		i := 0
		Eventually(func() bool {
			i++
			return createdWithoutAWebhookCall(ctx, newBucket(ns, fmt.Sprintf("probe-%d", i), fmt.Sprintf("team-a-probe-%d", i), "team-a"), mutateBucket)
		}).Should(BeFalse(), "a Bucket created through the mutating webhook once the binding is gone")

		b := newBucket(ns, "data", "team-a-data", "team-a")
		Expect(createdWithoutAWebhookCall(ctx, b, mutateBucket)).To(BeFalse())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(b.Finalizers).To(ConsistOf(storagev1alpha1.Finalizer), "the webhook put the finalizer on")
	})
})
