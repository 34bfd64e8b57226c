package operator_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// A team that wants the operator to see only some namespaces runs it with --watch-namespaces and
// binds its role there with RoleBindings, with no ClusterRoleBinding: it serves those namespaces
// fully and leaves every other alone.
func TestWatchNamespacesServesOnlyThoseWithRoleBindings(t *testing.T) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	stk, err := stack.Start(ctx, stack.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer stk.Stop()
	k8s := stk.Client
	served, other := namespace(ctx, g, k8s), namespace(ctx, g, k8s)
	g.Expect(stk.LimitManagerTo(ctx, served)).To(Succeed())
	stk.ManagerOptions.WatchNamespaces = []string{served}
	g.Expect(stk.StartManager()).To(Succeed())

	ignored := contract(other)
	g.Expect(k8s.Create(ctx, ignored)).To(Succeed())
	c := contract(served)
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: served, Name: "photos"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "photos-" + served, ContractName: c.Name}}
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	g.Eventually(ready(ctx, k8s, b, func() []metav1.Condition { return b.Status.Conditions })).Should(BeTrue())
	g.Expect(ready(ctx, k8s, c, func() []metav1.Condition { return c.Status.Conditions })()).To(BeTrue())

	// The Secret's deletion asks whether its namespace is going, with get on that namespace
	// alone: a RoleBinding there grants it.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: served, Name: c.Status.SecretName}}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	oldUID := secret.UID
	g.Expect(k8s.Delete(ctx, secret)).To(Succeed())
	g.Eventually(func() (string, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)
		return string(secret.UID), client.IgnoreNotFound(err)
	}).ShouldNot(Or(BeEmpty(), Equal(string(oldUID))), "the Contract's Secret was not written again")

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ignored), ignored)).To(Succeed())
	g.Expect(ignored.Finalizers).To(BeEmpty(), "the manager touched a Contract outside its namespaces")
	g.Expect(ignored.Status.Conditions).To(BeEmpty())

	// Hosts are looked up across the namespaces the manager serves, which its cache holds
	// namespace by namespace: the first Application serves its host, a second one is refused it.
	web := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: served, Name: "web"},
		Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Host: "web.example.com"}}
	g.Expect(k8s.Create(ctx, web)).To(Succeed())
	g.Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(web), &networkingv1.Ingress{}) }).Should(Succeed())
	time.Sleep(time.Second) // created a second later at least: web comes first
	shop := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: served, Name: "shop"},
		Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Host: "web.example.com"}}
	g.Expect(k8s.Create(ctx, shop)).To(Succeed())
	g.Eventually(func() string {
		_ = k8s.Get(ctx, client.ObjectKeyFromObject(shop), shop)
		if c := meta.FindStatusCondition(shop.Status.Conditions, paasv1alpha1.ReadyCondition); c != nil {
			return c.Reason
		}
		return ""
	}).Should(Equal(paasv1alpha1.ReasonHostConflict))
}

func namespace(ctx context.Context, g Gomega, k8s client.Client) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func contract(ns string) *storagev1alpha1.Contract {
	return &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acc"},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
}

// ready reports whether obj's Ready condition is True on the API server.
func ready(ctx context.Context, k8s client.Client, obj client.Object, conds func() []metav1.Condition) func() bool {
	return func() bool {
		return k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj) == nil &&
			meta.IsStatusConditionTrue(conds(), storagev1alpha1.ReadyCondition)
	}
}
