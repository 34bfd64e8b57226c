package operator_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// The cache keeps a Bucket without the annotations no pass reads (kubectl's
// last-applied-configuration, a copy of the whole object), but the operator's writes (its
// finalizer, its status, again after a change of spec, and the finalizer's removal) leave
// them on the server as they were.
func TestWritesFromTheTrimmedCacheKeepTheServersAnnotations(t *testing.T) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	stk, err := stack.Start(ctx, stack.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer stk.Stop()
	g.Expect(stk.StartManager()).To(Succeed())
	k8s := stk.Client
	ns := namespace(ctx, g, k8s)
	c := contract(ns)
	g.Expect(k8s.Create(ctx, c)).To(Succeed())

	theirs := map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"storage.osm.dev/v1alpha1","kind":"Bucket"}`,
		"example.com/owner": "team-a",
	}
	ours := map[string]string{storagev1alpha1.AbandonAnnotation: "false"}
	all := map[string]string{}
	for k, v := range theirs {
		all[k] = v
	}
	for k, v := range ours {
		all[k] = v
	}
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "photos", Annotations: all},
		Spec: storagev1alpha1.BucketSpec{BucketName: "photos-" + ns, ContractName: c.Name,
			BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}}
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	g.Eventually(ready(ctx, k8s, b, func() []metav1.Condition { return b.Status.Conditions })).Should(BeTrue())
	g.Expect(b.Finalizers).NotTo(BeEmpty(), "the operator's finalizer")
	g.Expect(b.Annotations).To(Equal(all), "annotations on the server after the first pass")

	cached := &storagev1alpha1.Bucket{}
	g.Expect(stk.ManagerClient.Get(ctx, client.ObjectKeyFromObject(b), cached)).To(Succeed())
	g.Expect(cached.Annotations).To(Equal(ours), "the manager's cache keeps the operator's annotations only")
	g.Expect(cached.ManagedFields).To(BeNil())
	g.Expect(cached.Finalizers).To(Equal(b.Finalizers))

	// A change of spec: another pass, another status write, from the trimmed copy.
	b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
	g.Expect(k8s.Update(ctx, b)).To(Succeed())
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
		return b.Status.ObservedGeneration == b.Generation && c != nil && c.ObservedGeneration == b.Generation
	}).Should(BeTrue())
	g.Expect(b.Annotations).To(Equal(all), "annotations on the server after a pass over a changed spec")
	g.Expect(b.ManagedFields).NotTo(BeEmpty(), "the server's managedFields")

	// Deleting: the finalizer comes off with a patch of the trimmed copy's finalizers.
	g.Expect(k8s.Delete(ctx, b)).To(Succeed())
	g.Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(b), b) }).ShouldNot(Succeed())
}
