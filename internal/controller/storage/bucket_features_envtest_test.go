package storage_test

import (
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// preflight sends the OPTIONS request a browser on origin sends before a PUT, and returns the
// status and the origin the server allows.
func preflight(ctx SpecContext, endpoint, bucket, origin string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, endpoint+"/"+bucket+"/upload.txt", nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "PUT")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.Body.Close()).To(Succeed())
	return resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin")
}

var appCORS = &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{{
	AllowedOrigins: []string{"https://app.example.com"},
	AllowedMethods: []storagev1alpha1.CORSMethod{"GET", "PUT"},
	AllowedHeaders: []string{"*"},
	MaxAgeSeconds:  ptr.To[int32](300),
}}}

var _ = Describe("Bucket features on versitygw", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("applies CORS and object lock, and reports the versioning and lifecycle versitygw lacks", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "feat")
		b := newBucket(ns, "browser", "feat", func(s *storagev1alpha1.BucketSpec) {
			s.CORS = appCORS.DeepCopy()
			s.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{
				Mode: storagev1alpha1.RetentionGovernance, Days: 1}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName

		By("answering a browser's preflight from the allowed origin only")
		status, allowed := preflight(ctx, stk.S3.Endpoint, name, "https://app.example.com")
		Expect(status).To(Equal(http.StatusOK))
		Expect(allowed).To(Equal("https://app.example.com"))
		_, allowed = preflight(ctx, stk.S3.Endpoint, name, "https://evil.example.net")
		Expect(allowed).To(BeEmpty())
		Expect(b.Status.CORS).To(Equal(&storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{{
			AllowedOrigins: []string{"https://app.example.com"}, AllowedMethods: []storagev1alpha1.CORSMethod{"GET", "PUT"},
			AllowedHeaders: []string{"*"}, MaxAgeSeconds: ptr.To[int32](300)}}}))

		By("locking what is written, by default, for the retention the spec gives")
		lock, err := a.s3.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(lock.ObjectLockConfiguration.ObjectLockEnabled).To(Equal(types.ObjectLockEnabledEnabled))
		Expect(lock.ObjectLockConfiguration.Rule.DefaultRetention.Mode).To(Equal(types.ObjectLockRetentionModeGovernance))
		Expect(aws.ToInt32(lock.ObjectLockConfiguration.Rule.DefaultRetention.Days)).To(Equal(int32(1)))
		Expect(b.Status.ObjectLock).To(Equal(b.Spec.ObjectLock))
		put, err := a.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("backup.tar"), Body: strings.NewReader("data")})
		Expect(err).NotTo(HaveOccurred())
		_, err = a.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String("backup.tar"), VersionId: put.VersionId})
		Expect(objectstore.ErrorCode(err)).To(Equal("AccessDenied"), "deleting a locked object: %v", err)

		By("asking for versioning and lifecycle rules, which this versitygw does not implement")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) {
			s.Versioning = storagev1alpha1.VersioningEnabled
			s.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{{
				ID: "old-backups", Prefix: "backups/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)}}}}
		})
		cond := bucketNotReady(ctx, b, storagev1alpha1.ReasonVersioningUnsupported)
		Expect(cond.Message).To(Equal("The S3 endpoint " + stk.S3.Endpoint + " does not implement " +
			"bucket versioning (spec.versioning: VersioningNotConfigured: Versioning has not been configured for the gateway.), " +
			"nor lifecycle rules (spec.lifecycle: NotImplemented: A header you provided implies functionality that is not implemented.); " +
			"the rest of the spec is applied: remove those fields, or use a provider that implements them (asked again every resync period)"))
		Expect(b.Status.Lifecycle).To(BeNil())
		Expect(b.Status.CORS).NotTo(BeNil(), "the rest of the spec is still observed")

		By("asking again only once a resync period, not with backoff")
		// A look reads ACL, policy, versioning, object lock, lifecycle and CORS and tries one
		// versioning write: 9 calls. Backoff would look about ten times in three seconds; once a
		// resync period (1 s here) at most four.
		before, _ := calls.counts(name)
		Consistently(func() int { n, _ := calls.counts(name); return n }, 3*time.Second).Should(BeNumerically("<=", before+4*9))

		By("becoming Ready again once the spec asks only for what the server has")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Versioning, s.Lifecycle = "", nil })
		bucketReady(ctx, b)
		Eventually(func() []string { return eventReasons(ctx, b) }).Should(ContainElements("VersioningUnsupported", "Available"))
	})

	It("restores CORS rules and a default retention changed behind its back, and otherwise writes nothing", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "cors-drift")
		b := newBucket(ns, "cors-drift", "cors-drift", func(s *storagev1alpha1.BucketSpec) {
			s.CORS = appCORS.DeepCopy()
			s.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{
				Mode: storagev1alpha1.RetentionGovernance, Days: 2}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName

		By("costing no S3 write and no API write while nothing changes")
		time.Sleep(2 * resyncPeriod)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		version := b.ResourceVersion
		allBefore, writesBefore := calls.counts(name)
		Eventually(func() int { all, _ := calls.counts(name); return all }, 10*time.Second).
			Should(BeNumerically(">=", allBefore+3*4), "expected at least three resyncs, each reading ACL, policy, object lock and CORS")
		_, writesAfter := calls.counts(name)
		Expect(writesAfter).To(Equal(writesBefore), "S3 writes during resyncs")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(b.ResourceVersion).To(Equal(version), "the Bucket was written during resyncs")

		By("restoring what someone changed")
		_, err := a.s3.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(name), CORSConfiguration: &types.CORSConfiguration{
			CORSRules: []types.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"DELETE"}}}}})
		Expect(err).NotTo(HaveOccurred())
		_, err = a.s3.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(name),
			ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			status, allowed := preflight(ctx, stk.S3.Endpoint, name, "https://app.example.com")
			g.Expect(status).To(Equal(http.StatusOK))
			g.Expect(allowed).To(Equal("https://app.example.com"))
			lock, err := a.s3.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(name)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(lock.ObjectLockConfiguration.Rule).NotTo(BeNil())
			g.Expect(aws.ToInt32(lock.ObjectLockConfiguration.Rule.DefaultRetention.Days)).To(Equal(int32(2)))
		}, 15*time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(ctx, b) }).Should(ContainElements("CORSDriftCorrected", "ObjectLockDriftCorrected"))

		By("deleting the CORS rules the spec drops")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.CORS = nil })
		bucketReady(ctx, b)
		Expect(b.Status.CORS).To(BeNil())
		_, err = a.s3.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(name)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NoSuchCORSConfiguration"))
	})
})
