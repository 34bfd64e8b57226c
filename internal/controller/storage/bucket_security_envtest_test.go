package storage_test

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/storage"
)

// madeOutside makes a bucket with the account's keys, as someone with the AWS CLI would, with
// CORS rules of its own.
func madeOutside(ctx SpecContext, a account, name string) {
	GinkgoHelper()
	_, err := a.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	Expect(err).NotTo(HaveOccurred())
	_, err = a.s3.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(name), CORSConfiguration: &types.CORSConfiguration{
		CORSRules: []types.CORSRule{{AllowedOrigins: []string{"https://theirs.example.com"}, AllowedMethods: []string{"GET"}}}}})
	Expect(err).NotTo(HaveOccurred())
}

func condition(ctx SpecContext, b *storagev1alpha1.Bucket, typ string) *metav1.Condition {
	GinkgoHelper()
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	return meta.FindStatusCondition(b.Status.Conditions, typ)
}

var _ = Describe("Bucket security settings, observing and adopting, on versitygw", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("reports the encryption, public access block and logging versitygw lacks, with the rest applied", func(ctx SpecContext) {
		readyAccount(ctx, ns, "sec")
		logs := newBucket(ns, "logs", "sec")
		Expect(k8s.Create(ctx, logs)).To(Succeed())
		b := newBucket(ns, "secure", "sec", func(s *storagev1alpha1.BucketSpec) {
			s.CORS = appCORS.DeepCopy()
			s.Encryption = &storagev1alpha1.BucketEncryption{Algorithm: storagev1alpha1.EncryptionSSES3}
			s.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicPolicy: true, IgnorePublicAcls: true}
			s.Logging = &storagev1alpha1.BucketLogging{TargetBucket: logs.Spec.BucketName, TargetPrefix: "secure/"}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cond := bucketNotReady(ctx, b, storagev1alpha1.ReasonPublicAccessBlockUnsupported)
		Expect(cond.Message).To(And(
			ContainSubstring("public access blocks (spec.publicAccessBlock: NotImplemented"),
			ContainSubstring("nor default encryption (spec.encryption: NotImplemented"),
			ContainSubstring("nor server access logging (spec.logging: NotImplemented"),
			ContainSubstring("the rest of the spec is applied")))
		Expect(b.Status.CORS).NotTo(BeNil(), "CORS, which versitygw has, is applied and observed")
		Expect(b.Status.Encryption).To(BeNil())

		By("becoming Ready once the spec asks only for what the server has")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Encryption, s.PublicAccessBlock, s.Logging = nil, nil, nil })
		bucketReady(ctx, b)
	})

	It("observes a bucket made outside the operator, writes nothing, and leaves it when deleted", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "obs")
		name := "observed-" + ns
		madeOutside(ctx, a, name)
		made, logged := serverWrites(name, 0)
		Expect(made).To(ContainElement("CreateBucket"), "the access log shows the bucket's making: the check at the end reads it right")
		b := newBucket(ns, "observed", "obs", func(s *storagev1alpha1.BucketSpec) {
			s.BucketName = name
			s.ManagementPolicy = storagev1alpha1.ManagementObserve
			s.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete // and still never deleted
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		Expect(condition(ctx, b, storagev1alpha1.ReadyCondition).Reason).To(Equal(storagev1alpha1.ReasonObserved))
		Expect(b.Status.CORS).NotTo(BeNil(), "every setting is reported, asked for or not")
		Expect(b.Status.CORS.Rules[0].AllowedOrigins).To(Equal([]string{"https://theirs.example.com"}))
		Expect(b.Status.ACL).NotTo(BeNil())
		Expect(b.Status.OwnershipControls).To(Equal("BucketOwnerEnforced"), "versitygw, as AWS, makes a bucket with ACLs off when CreateBucket does not say")
		Expect(b.Status.BucketName).To(BeEmpty(), "an observed bucket is never recorded as the resource's own")
		Eventually(func() string { return condition(ctx, b, storagev1alpha1.InSyncCondition).Reason }).Should(Equal(storagev1alpha1.ReasonMatchesSpec))

		By("saying what Manage would change, and changing nothing")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.CORS = appCORS.DeepCopy() })
		Eventually(func(g Gomega) {
			c := condition(ctx, b, storagev1alpha1.InSyncCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(storagev1alpha1.ReasonDiffersFromSpec))
			g.Expect(c.Message).To(ContainSubstring("CORS rules (spec.cors)"))
		}).Should(Succeed())
		time.Sleep(3 * resyncPeriod)
		_, writes := calls.counts(name)
		Expect(writes).To(BeZero(), "S3 writes to an observed bucket")
		Eventually(func() []string { return eventReasons(ctx, b) }).Should(ContainElement(storagev1alpha1.ReasonDiffersFromSpec))

		By("leaving the bucket when the resource is deleted, whatever its reclaim policy")
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
		_, err := a.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred(), "the observed bucket was deleted")
		_, writes = calls.counts(name)
		Expect(writes).To(BeZero())
		atServer, _ := serverWrites(name, logged)
		Expect(atServer).To(BeEmpty(), "writes to the observed bucket in versitygw's access log")
	})

	It("takes over a bucket made outside the operator only when told to, and keeps what it had", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "adopt")
		name := "adopted-" + ns
		madeOutside(ctx, a, name)
		b := newBucket(ns, "adopted", "adopt", func(s *storagev1alpha1.BucketSpec) {
			s.BucketName = name
			s.ManagementPolicy = storagev1alpha1.ManagementObserve
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)

		By("refusing it under Manage without spec.adopt, and saying how to take it")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.ManagementPolicy = storagev1alpha1.ManagementManage })
		cond := bucketNotReady(ctx, b, storagev1alpha1.ReasonBucketAlreadyExists)
		Expect(cond.Message).To(ContainSubstring("set spec.adopt to true"))
		tags, err := a.s3.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
		if err == nil {
			Expect(tags.TagSet).To(BeEmpty(), "the bucket was tagged without spec.adopt")
		}

		By("adopting it with spec.adopt, without removing the CORS rules it had and the spec does not name")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Adopt = true })
		bucketReady(ctx, b)
		Expect(b.Status.BucketName).To(Equal(name))
		tags, err = a.s3.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(tags.TagSet).To(ContainElement(types.Tag{Key: aws.String(storage.OwnerTag), Value: aws.String(ns + "/adopted")}))
		cors, err := a.s3.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred(), "the bucket's own CORS rules were removed")
		Expect(cors.CORSRules).To(HaveLen(1))
		Expect(eventReasons(ctx, b)).To(ContainElement("BucketAdopted"))
		Expect(condition(ctx, b, storagev1alpha1.InSyncCondition)).To(BeNil(), "InSync is for Observe Buckets")
	})

	It("never adopts or observes a bucket the COSI driver made, whatever spec.adopt says", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "cosi")
		name := "cosi-" + ns
		// As the COSI driver makes a bucket, in this account: its grants to other namespaces'
		// keys are in its policy.
		_, err := a.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		cosiTag := types.Tag{Key: aws.String(storagev1alpha1.COSIBucketTag), Value: aws.String("bc-1234")}
		_, err = a.s3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(name), Tagging: &types.Tagging{TagSet: []types.Tag{cosiTag}}})
		Expect(err).NotTo(HaveOccurred())
		_, logged := serverWrites(name, 0)

		b := newBucket(ns, "taker", "cosi", func(s *storagev1alpha1.BucketSpec) {
			s.BucketName, s.Adopt = name, true
			s.Policy = &runtime.RawExtension{Raw: []byte(`{"Version":"2012-10-17","Statement":[]}`)}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cond := bucketNotReady(ctx, b, storagev1alpha1.ReasonBucketAlreadyExists)
		Expect(cond.Message).To(ContainSubstring("carries the operator's tag storage.osm.dev/cosi-bucket=bc-1234: it is someone else's"))
		Expect(b.Status.BucketName).To(BeEmpty())

		By("refusing to observe it either")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) {
			s.ManagementPolicy, s.Adopt, s.Policy = storagev1alpha1.ManagementObserve, false, nil
		})
		Eventually(func(g Gomega) {
			c := condition(ctx, b, storagev1alpha1.ReadyCondition)
			g.Expect(c.ObservedGeneration).To(Equal(b.Generation))
			g.Expect(c.Message).To(HavePrefix("Bucket " + name + " carries the operator's tag storage.osm.dev/cosi-bucket=bc-1234"))
		}).Should(Succeed())
		Expect(b.Status.ACL).To(BeNil(), "an observed COSI bucket's settings reached status")

		tags, err := a.s3.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(tags.TagSet).To(Equal([]types.Tag{cosiTag}), "the COSI bucket's tags were changed")
		atServer, _ := serverWrites(name, logged)
		Expect(atServer).To(BeEmpty(), "writes to the COSI bucket in versitygw's access log")
	})
})
