package storage_test

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// The resync budget, on a small fleet with a small budget: one Contract's Buckets, calm, cost
// the provider no more than its share, and drift another client makes is still corrected
// within the bound docs/performance.md states: the longest wanted period plus N·c/(R·0.8), N
// Buckets at c calls a check within their Contract's R calls a second (no budget in all here),
// 0.8 being the part of the budget calm Buckets may book.
var _ = Describe("Drift detection within the resync budget", Ordered, func() {
	const (
		buckets   = 8
		maxPeriod = 4 * time.Second
		share     = 2.0 // calls a second for the Contract's Buckets
		// GetBucketAcl, GetBucketPolicy, and the Contract's usage read, which the suite's 1-second
		// resync period renews on nearly every check.
		perCheck = 3
	)
	// bound is the docs' latency: maxPeriod with its jitter (a tenth), the budget's stretch, and
	// a pass.
	bound := maxPeriod*11/10 + time.Duration(float64(buckets*perCheck)/(share*0.8)*float64(time.Second)) + time.Second

	var (
		ns string
		a  account
		bs []*storagev1alpha1.Bucket
	)
	BeforeAll(func(ctx SpecContext) {
		// Only the Contract's share: the budget in all would be shared with other specs' Buckets.
		restartManager(maxPeriod, 0, share)
		DeferCleanup(func() { restartManager(0, 0, 0) })
		ns = newNamespace(ctx)
		a = readyAccount(ctx, ns, "budget")
		for i := range buckets {
			b := newBucket(ns, "budget-"+string(rune('a'+i)), "budget")
			b.Spec.Policy = policyJSON(a.keyID, b.Spec.BucketName, "s3:GetObject")
			Expect(k8s.Create(ctx, b)).To(Succeed())
			bs = append(bs, b)
		}
		for _, b := range bs {
			bucketReady(ctx, b)
		}
	})

	It("keeps a calm Contract's checks within its share", func() {
		time.Sleep(2 * bound) // calm by now: their periods doubled up to the maximum
		before := callsOf(bs)
		const window = 10 * time.Second
		time.Sleep(window)
		made := callsOf(bs) - before
		GinkgoWriter.Printf("%d calm Buckets made %d S3 calls in %s\n", buckets, made, window)
		Expect(made).To(BeNumerically("<=", int(share*window.Seconds())+perCheck),
			"S3 calls of %d calm Buckets in %s; the Contract's share is %.0f a second", buckets, window, share)
		Expect(made).To(BeNumerically(">", 0), "no Bucket was checked in %s", window)
	})

	It("corrects drift another client makes within the stated bound", func(ctx SpecContext) {
		drifted := bs[:3]
		for _, b := range drifted {
			_, err := a.s3.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String(b.Spec.BucketName)})
			Expect(err).NotTo(HaveOccurred())
		}
		removed := time.Now()
		for _, b := range drifted {
			Eventually(func(g Gomega) {
				g.Expect(serverPolicy(ctx, a.s3, b.Spec.BucketName)).NotTo(BeEmpty())
			}).WithTimeout(bound-time.Since(removed)).WithPolling(100*time.Millisecond).Should(Succeed(),
				"the policy of %s was not restored within %s", b.Name, bound)
		}
		GinkgoWriter.Printf("all %d drifted policies restored %s after removal (bound %s)\n", len(drifted), time.Since(removed), bound)
	})

	It("applies a change of spec at once, whatever the budget", func(ctx SpecContext) {
		b := bs[len(bs)-1]
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		b.Spec.Policy = policyJSON(a.keyID, b.Spec.BucketName, "s3:GetObject", "s3:PutObject")
		Expect(k8s.Update(ctx, b)).To(Succeed())
		// Calm Buckets wait about N·c/(R·0.8) = 15 s between checks here; a change waits for none.
		Eventually(func() string { return serverPolicy(ctx, a.s3, b.Spec.BucketName) }).
			WithTimeout(3 * time.Second).Should(ContainSubstring("s3:PutObject"))
	})
})

// restartManager restarts the suite's manager with a resync budget (the maximum period, calls
// a second in all and per Contract); zeros restore the suite's manager.
func restartManager(maxPeriod time.Duration, all, perContract float64) {
	GinkgoHelper()
	Expect(stk.StopManager()).To(Succeed())
	stk.ManagerOptions.ResyncMaxPeriod = maxPeriod
	stk.ManagerOptions.ResyncBudget = all
	stk.ManagerOptions.ResyncBudgetPerContract = perContract
	Expect(stk.StartManager()).To(Succeed())
}

// callsOf is the S3 calls the manager made for bs so far.
func callsOf(bs []*storagev1alpha1.Bucket) int {
	n := 0
	for _, b := range bs {
		all, _ := calls.counts(b.Spec.BucketName)
		n += all
	}
	return n
}
