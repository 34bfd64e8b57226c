package storage_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

var _ = Describe("Bucket usage and quota on versitygw", func() {
	It("refuses a quota that limits nothing", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		for quota, message := range map[*storagev1alpha1.BucketQuota]string{
			{}: "a quota needs maxSize, maxObjects or both",
			{MaxSize: ptr.To(resource.MustParse("0"))}:             "maxSize must be more than 0",
			{MaxObjects: ptr.To[int64](0)}:                         "spec.quota.maxObjects in body should be greater than or equal to 1",
			{MaxObjects: ptr.To[int64](1), NearlyFullPercent: 101}: "spec.quota.nearlyFullPercent in body should be less than or equal to 100",
		} {
			b := newBucket(ns, "nothing", "any", func(s *storagev1alpha1.BucketSpec) { s.Quota = quota })
			Expect(k8s.Create(ctx, b)).To(MatchError(ContainSubstring(message)))
		}
	})

	It("reports that versitygw can tell no usage nor enforce a quota, and applies the rest", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		a := readyAccount(ctx, ns, "usage")
		b := newBucket(ns, "limited", "usage", func(s *storagev1alpha1.BucketSpec) {
			s.Quota = &storagev1alpha1.BucketQuota{MaxSize: ptr.To(resource.MustParse("1Mi")), MaxObjects: ptr.To[int64](3)}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Expect(b.Spec.Quota.NearlyFullPercent).To(Equal(int32(storagev1alpha1.DefaultNearlyFullPercent)), "defaulted")

		cond := bucketNotReady(ctx, b, storagev1alpha1.ReasonQuotaUnsupported)
		Expect(cond.Message).To(HavePrefix("The S3 endpoint " + stk.S3.Endpoint + " does not implement a bucket quota (spec.quota: "))
		Expect(b.Status.BucketName).To(Equal(b.Spec.BucketName), "the bucket is made without its quota")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			full := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.QuotaNearlyFullCondition)
			g.Expect(full).NotTo(BeNil())
			g.Expect(full.Status).To(Equal(metav1.ConditionUnknown))
			g.Expect(full.Reason).To(Equal(storagev1alpha1.ReasonUsageUnsupported))
			g.Expect(full.Message).To(Equal("How full bucket " + b.Spec.BucketName +
				" is cannot be known: the provider keeps no usage counters, so status.usage stays empty"))
		}).Should(Succeed())
		Expect(b.Status.Usage).To(BeNil())
		Expect(b.Status.Quota).To(BeNil())

		By("becoming Ready without the quota, with no usage and no QuotaNearlyFull")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Quota = nil })
		bucketReady(ctx, b)
		Expect(meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.QuotaNearlyFullCondition)).To(BeNil())
		Expect(b.Status.Usage).To(BeNil())

		By("asking the provider about the usage of three Buckets once a resync period, for all of them")
		for _, name := range []string{"second", "third"} {
			other := newBucket(ns, name, "usage")
			Expect(k8s.Create(ctx, other)).To(Succeed())
			bucketReady(ctx, other)
		}
		usageCalls := func() int {
			return len(stk.ContractAPI.Calls(func(c stack.Call) bool {
				return c.Method == http.MethodGet && c.Path == "/v1/contracts/"+a.contract.Status.ContractID+"/usage"
			}))
		}
		before := usageCalls()
		time.Sleep(4 * resyncPeriod)
		Expect(usageCalls()-before).To(And(BeNumerically(">=", 2), BeNumerically("<=", 5)),
			"usage calls in four resync periods of three Buckets")
	})
})
