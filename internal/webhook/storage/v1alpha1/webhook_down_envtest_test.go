package v1alpha1

import (
	"context"
	"net"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// With the manager down its webhooks answer nothing, and failurePolicy Fail refuses every change
// they cover. A resource being deleted is not covered (the configurations' matchConditions), so
// a namespace deletion can finish, and a user with the verb abandon (a cluster admin) can still
// remove a finalizer, or set the abandon annotation: the cost guard's matchConditions let such a
// user through without calling it. A tenant without the verb stays refused.
var _ = Describe("Admission while the manager is down", Serial, func() {
	It("refuses changes, but lets a cluster admin let a resource being deleted go", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		tenant := newTenant(ctx, ns, "alice")
		live, going := newContract(ns, "live"), newContract(ns, "going")
		for _, c := range []*storagev1alpha1.Contract{live, going} {
			controllerutil.AddFinalizer(c, "storage.osm.dev/finalizer")
			Expect(k8sClient.Create(ctx, c)).To(Succeed())
		}
		Expect(k8sClient.Delete(ctx, going)).To(Succeed())

		By("the webhooks answering nowhere, as when the manager is down")
		DeferCleanup(webhooksDown(ctx))

		// The API server takes up new configurations a moment later, and calls the live guard
		// beside the dead copy, reporting whichever refusal comes first: each request is tried
		// until the dead webhook's refusal is the one seen.
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"displayName":"changed"}}`))
		Eventually(func() error { return k8sClient.Patch(ctx, live, patch) }).Should(MatchError(ContainSubstring("failed calling webhook")),
			"a live resource's change must still be refused while the webhooks cannot answer")
		Eventually(func() error {
			err := tenant.Patch(ctx, going, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
			if err == nil {
				StopTrying("a tenant removed the finalizer").Now()
			}
			return err
		}).Should(MatchError(ContainSubstring("failed calling webhook")), "the guard fails closed for a tenant")

		Expect(k8sClient.Patch(ctx, going, client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"`+storagev1alpha1.AbandonAnnotation+`":"true"}}}`)))).To(Succeed())
		Expect(k8sClient.Patch(ctx, going, client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(going), &storagev1alpha1.Contract{})
		}).Should(MatchError(ContainSubstring("not found")))
	})
})

// webhooksDown installs copies of the operator's webhook configurations, as generated, pointing
// at a port where nothing listens; the returned func removes them.
func webhooksDown(ctx context.Context) func(context.Context) {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	dead := "https://" + l.Addr().String() + "/"
	Expect(l.Close()).To(Succeed())

	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	Expect(k8sClient.List(ctx, &mutating)).To(Succeed())
	Expect(k8sClient.List(ctx, &validating)).To(Succeed())
	var made []client.Object
	for _, c := range mutating.Items {
		down := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-down"}, Webhooks: c.Webhooks}
		for i := range down.Webhooks {
			down.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(dead + down.Webhooks[i].Name)}
		}
		made = append(made, down)
	}
	for _, c := range validating.Items {
		down := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-down"}, Webhooks: c.Webhooks}
		for i := range down.Webhooks {
			down.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(dead + down.Webhooks[i].Name)}
		}
		made = append(made, down)
	}
	Expect(made).NotTo(BeEmpty())
	for _, obj := range made {
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	}
	return func(ctx context.Context) {
		for _, obj := range made {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
		}
	}
}
