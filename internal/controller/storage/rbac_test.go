package storage_test

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The manager runs as its ServiceAccount under the ClusterRole config/rbac ships, and the API
// server enforces owner-reference permissions. Taking a verb away stops the manager, so the
// other specs, which pass, prove the role is enough.
var _ = Describe("The manager's shipped RBAC", Serial, func() {
	It("needs update on contracts/finalizers to give a Contract its Secret", func(ctx SpecContext) {
		DeferCleanup(func(ctx SpecContext) { Expect(stk.SetManagerRole(ctx, nil)).To(Succeed()) })
		Expect(stk.SetManagerRole(ctx, func(role *rbacv1.ClusterRole) {
			role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
				return slices.Contains(r.Resources, "contracts/finalizers")
			})
		})).To(Succeed())

		ns := newNamespace(ctx)
		c := newContract(ns, "acc")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		secret := client.ObjectKey{Namespace: ns, Name: c.SecretNameOrDefault()}
		Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, secret, &corev1.Secret{}))
		}, 3*time.Second).Should(BeTrue(), "the Secret was written without update on contracts/finalizers")

		By("giving the verb back")
		Expect(stk.SetManagerRole(ctx, nil)).To(Succeed())
		contractReady(ctx, c)
	})
})
