package storage_test

import (
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// upload puts an HTML page into a bucket with the account's keys.
func upload(ctx SpecContext, a account, bucket, key, body string) {
	GinkgoHelper()
	_, err := a.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader(body), ContentType: aws.String("text/html")})
	Expect(err).NotTo(HaveOccurred())
}

// served waits until the website at endpoint answers path with code and body.
func served(ctx SpecContext, endpoint, path string, code int, body string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		got, text, err := localenv.GetWebsite(ctx, endpoint, path)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(code), "GET %s%s: %s", endpoint, path, text)
		g.Expect(text).To(Equal(body))
	}).Should(Succeed())
}

var _ = Describe("Bucket website and notifications, on versitygw", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("serves the index document at status.websiteEndpoint, restores the website, and otherwise writes nothing", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "web")
		b := newBucket(ns, "site", "web", func(s *storagev1alpha1.BucketSpec) {
			s.Website = &storagev1alpha1.BucketWebsite{IndexDocument: "index.html", ErrorDocument: "404.html"}
		})
		name := b.Spec.BucketName
		// A website serves only what everyone may read.
		b.Spec.Policy = policyJSON(a.keyID, name, "s3:GetObject")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		Expect(b.Status.Website).To(Equal(b.Spec.Website))
		endpoint := strings.ReplaceAll(stk.S3.WebsiteEndpoint, "{bucket}", name)
		Expect(b.Status.WebsiteEndpoint).To(Equal(endpoint))
		Expect(eventReasons(ctx, b)).To(ContainElement("WebsiteUpdated"))

		upload(ctx, a, name, "index.html", "<h1>hello</h1>")
		upload(ctx, a, name, "docs/index.html", "<h1>docs</h1>")
		served(ctx, endpoint, "/", http.StatusOK, "<h1>hello</h1>")
		served(ctx, endpoint, "/docs/", http.StatusOK, "<h1>docs</h1>")

		By("costing no S3 write and no API write while nothing changes")
		time.Sleep(2 * resyncPeriod)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		version := b.ResourceVersion
		_, writesBefore := calls.counts(name)
		time.Sleep(3 * resyncPeriod)
		_, writesAfter := calls.counts(name)
		Expect(writesAfter).To(Equal(writesBefore), "S3 writes during resyncs")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(b.ResourceVersion).To(Equal(version), "the Bucket was written during resyncs")

		By("restoring a website deleted behind its back, with one warning")
		_, err := a.s3.DeleteBucketWebsite(ctx, &s3.DeleteBucketWebsiteInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			saidOnce(g, list.Items, b, "WebsiteDriftCorrected")
		}).Should(Succeed())
		served(ctx, endpoint, "/", http.StatusOK, "<h1>hello</h1>")

		By("deleting the website configuration when the spec drops it")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Website = nil })
		bucketReady(ctx, b)
		Expect(b.Status.Website).To(BeNil())
		Expect(b.Status.WebsiteEndpoint).To(BeEmpty())
		_, err = a.s3.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String(name)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NoSuchWebsiteConfiguration"), "the website is still configured: %v", err)
	})

	It("reports the notifications versitygw lacks, with the website applied, and makes no topic", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "notes")
		b := newBucket(ns, "noted", "notes", func(s *storagev1alpha1.BucketSpec) {
			s.Website = &storagev1alpha1.BucketWebsite{RedirectAllRequestsTo: &storagev1alpha1.WebsiteRedirectAll{
				HostName: "www.example.com", Protocol: storagev1alpha1.WebsiteProtocol("https")}}
			s.Notifications = []storagev1alpha1.BucketNotification{{Name: "uploads", Endpoint: "http://127.0.0.1:9/events",
				Events: []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:*"}}}
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		cond := bucketNotReady(ctx, b, storagev1alpha1.ReasonNotificationsUnsupported)
		Expect(cond.Message).To(And(ContainSubstring("event notifications (spec.notifications: NotImplemented"),
			ContainSubstring("the rest of the spec is applied")))
		Expect(b.Status.Website).To(Equal(b.Spec.Website), "the website, which versitygw has, is applied")
		code, _, err := localenv.GetWebsite(ctx, b.Status.WebsiteEndpoint, "/photo.jpg")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusMovedPermanently))
		topics, err := api.ListTopicsWithResponse(ctx, a.contract.Status.ContractID)
		Expect(err).NotTo(HaveOccurred())
		Expect(topics.StatusCode()).To(Equal(http.StatusNotImplemented), "versitygw makes no topics")

		By("becoming Ready once the spec asks only for what the server has, and forgetting the topic")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Notifications = nil })
		bucketReady(ctx, b)
		Expect(b.Status.Topics).To(BeEmpty())
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
	})
})
