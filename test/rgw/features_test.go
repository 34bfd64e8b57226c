package rgw_test

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

var _ = Describe("Bucket features on Ceph RGW", func() {
	var (
		ns    string
		owner *s3.Client
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		owner = boughtAccount(ctx, ns, "team")
	})

	create := func(ctx SpecContext, name string, spec storagev1alpha1.BucketSpec) *storagev1alpha1.Bucket {
		GinkgoHelper()
		spec.BucketName, spec.ContractName = name+"-"+ns, "team"
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		return b
	}
	// quiet checks that the Bucket is not written for a few resyncs, whatever RGW does to the
	// form of what it stores.
	quiet := func(ctx SpecContext, b *storagev1alpha1.Bucket) {
		GinkgoHelper()
		time.Sleep(2 * time.Second)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		version := b.ResourceVersion
		Consistently(func() string {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			return b.ResourceVersion
		}, 4*time.Second).Should(Equal(version))
	}
	body := func(ctx SpecContext, bucket, key string, version *string) string {
		GinkgoHelper()
		out, err := owner.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: version})
		Expect(err).NotTo(HaveOccurred())
		defer func() { Expect(out.Body.Close()).To(Succeed()) }()
		data, err := io.ReadAll(out.Body)
		Expect(err).NotTo(HaveOccurred())
		return string(data)
	}

	It("keeps an overwritten object's old version once versioning is Enabled", func(ctx SpecContext) {
		b := create(ctx, "versioned", storagev1alpha1.BucketSpec{Versioning: storagev1alpha1.VersioningEnabled})
		Expect(b.Status.Versioning).To(Equal("Enabled"))
		name := b.Spec.BucketName
		first, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("db.dump"), Body: strings.NewReader("monday")})
		Expect(err).NotTo(HaveOccurred())
		_, err = owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("db.dump"), Body: strings.NewReader("tuesday")})
		Expect(err).NotTo(HaveOccurred())

		versions, err := owner.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(versions.Versions).To(HaveLen(2))
		Expect(body(ctx, name, "db.dump", nil)).To(Equal("tuesday"))
		Expect(body(ctx, name, "db.dump", first.VersionId)).To(Equal("monday"), "the overwritten version is gone")
		quiet(ctx, b)
	})

	It("applies lifecycle rules and reads them back equal, without rewriting them", func(ctx SpecContext) {
		rules := []storagev1alpha1.LifecycleRule{
			{ID: "backups", Prefix: "backups/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)},
				NoncurrentVersionExpirationDays: ptr.To[int32](7)},
			{ID: "project-end", Prefix: "project/", Tags: []storagev1alpha1.Tag{{Key: "project", Value: "apollo"}},
				Expiration: &storagev1alpha1.LifecycleExpiration{Date: "2030-01-01"}},
			{ID: "uploads", AbortIncompleteMultipartUploadDays: ptr.To[int32](2)},
		}
		b := create(ctx, "lifecycle", storagev1alpha1.BucketSpec{Versioning: storagev1alpha1.VersioningEnabled,
			Lifecycle: &storagev1alpha1.BucketLifecycle{Rules: rules}})
		Expect(b.Status.Lifecycle).To(Equal(b.Spec.Lifecycle), "status shows the rules as RGW answers them")

		out, err := owner.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(err).NotTo(HaveOccurred())
		got := map[string]types.LifecycleRule{}
		for _, r := range out.Rules {
			got[aws.ToString(r.ID)] = r
		}
		Expect(got).To(HaveLen(3))
		Expect(got["backups"].Status).To(Equal(types.ExpirationStatusEnabled))
		Expect(aws.ToString(got["backups"].Filter.Prefix)).To(Equal("backups/"))
		Expect(aws.ToInt32(got["backups"].Expiration.Days)).To(Equal(int32(14)))
		Expect(aws.ToInt32(got["backups"].NoncurrentVersionExpiration.NoncurrentDays)).To(Equal(int32(7)))
		prefix, tags := filterOf(got["project-end"].Filter)
		Expect(prefix).To(Equal("project/"))
		Expect(tags).To(Equal(map[string]string{"project": "apollo"}))
		Expect(got["project-end"].Expiration.Date.UTC()).To(Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
		Expect(aws.ToInt32(got["uploads"].AbortIncompleteMultipartUpload.DaysAfterInitiation)).To(Equal(int32(2)))
		quiet(ctx, b)

		By("deleting the rules when the spec drops them")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			b.Spec.Lifecycle = nil
			return k8s.Update(ctx, b)
		}).Should(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		_, err = owner.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NoSuchLifecycleConfiguration"))
	})

	It("keeps an Application's backups for its retention, as a lifecycle rule on the backup prefix", func(ctx SpecContext) {
		b := create(ctx, "backups", storagev1alpha1.BucketSpec{Versioning: storagev1alpha1.VersioningEnabled,
			Lifecycle: &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
				{ID: "tmp", Prefix: "tmp/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](1)}}}}})
		app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Buckets: []paasv1alpha1.BucketLink{{Name: "backups"}},
				Backup: &paasv1alpha1.Backup{Bucket: "backups", Schedule: "@daily", Command: []string{"backup"}, Retention: "14d",
					RequireVersionedBucket: true}}}
		Expect(k8s.Create(ctx, app)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, paasv1alpha1.BackupScheduledCondition)).To(BeTrue(),
				"a versioned bucket lets the backup run: %v", app.Status.Conditions)
		}).Should(Succeed())
		rules := func() map[string]types.LifecycleRule {
			out, err := owner.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b.Spec.BucketName)})
			got := map[string]types.LifecycleRule{}
			if err == nil {
				for _, r := range out.Rules {
					got[aws.ToString(r.ID)] = r
				}
			}
			return got
		}
		Eventually(func(g Gomega) {
			got := rules()
			g.Expect(got).To(HaveKey("osm-backup-web"))
			g.Expect(aws.ToString(got["osm-backup-web"].Filter.Prefix)).To(Equal("web/"))
			g.Expect(aws.ToInt32(got["osm-backup-web"].Expiration.Days)).To(Equal(int32(14)))
			g.Expect(got).To(HaveKey("tmp"), "the Bucket's own rule stays")
		}).Should(Succeed())

		By("dropping the rule when the retention goes")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
				return err
			}
			app.Spec.Backup.Retention = ""
			return k8s.Update(ctx, app)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := rules()
			g.Expect(got).NotTo(HaveKey("osm-backup-web"))
			g.Expect(got).To(HaveKey("tmp"))
		}).Should(Succeed())
	})

	It("creates a bucket with object lock, which refuses the deletion of a locked version", func(ctx SpecContext) {
		b := create(ctx, "locked", storagev1alpha1.BucketSpec{ObjectLock: &storagev1alpha1.ObjectLock{
			DefaultRetention: &storagev1alpha1.DefaultRetention{Mode: storagev1alpha1.RetentionCompliance, Days: 1}}})
		Expect(b.Status.ObjectLock).To(Equal(b.Spec.ObjectLock))
		name := b.Spec.BucketName
		put, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("ledger"), Body: strings.NewReader("kept")})
		Expect(err).NotTo(HaveOccurred())
		Expect(put.VersionId).NotTo(BeNil(), "a bucket with object lock is versioned")

		_, err = owner.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String("ledger"), VersionId: put.VersionId})
		Expect(objectstore.ErrorCode(err)).To(Equal("AccessDenied"), "deleting a locked version: %v", err)
		Expect(body(ctx, name, "ledger", put.VersionId)).To(Equal("kept"))
		quiet(ctx, b)
	})

	It("answers a browser's preflight request from an allowed origin", func(ctx SpecContext) {
		b := create(ctx, "browser", storagev1alpha1.BucketSpec{CORS: &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{{
			AllowedOrigins: []string{"https://app.example.com"},
			AllowedMethods: []storagev1alpha1.CORSMethod{"GET", "PUT"},
			AllowedHeaders: []string{"Content-Type"},
			ExposeHeaders:  []string{"ETag"},
			MaxAgeSeconds:  ptr.To[int32](600),
		}}}})
		// A preflight carries no signature: it names the bucket with the contract's RGW tenant,
		// as every anonymous request must (a presigned URL's signature says whose it is).
		contract := &storagev1alpha1.Contract{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "team"}, contract)).To(Succeed())
		url := stk.S3.Endpoint + "/" + contract.Status.ContractID + ":" + b.Spec.BucketName + "/photo.jpg"
		preflight := func(origin string) *http.Response {
			GinkgoHelper()
			req, err := http.NewRequestWithContext(ctx, http.MethodOptions, url, nil)
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "PUT")
			req.Header.Set("Access-Control-Request-Headers", "content-type")
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Body.Close()).To(Succeed())
			return resp
		}
		resp := preflight("https://app.example.com")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(Equal("https://app.example.com"))
		Expect(resp.Header.Get("Access-Control-Allow-Methods")).To(ContainSubstring("PUT"))
		Expect(resp.Header.Get("Access-Control-Max-Age")).To(Equal("600"))
		Expect(preflight("https://elsewhere.example.net").Header.Get("Access-Control-Allow-Origin")).To(BeEmpty())
		quiet(ctx, b)
	})
})

// filterOf reads a lifecycle filter's prefix and tags from whichever shape the server answers
// with: S3 writes a prefix and a tag as an And, RGW may echo them side by side.
func filterOf(f *types.LifecycleRuleFilter) (prefix string, tags map[string]string) {
	GinkgoHelper()
	Expect(f).NotTo(BeNil())
	tags = map[string]string{}
	add := func(ts ...types.Tag) {
		for _, t := range ts {
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	prefix = aws.ToString(f.Prefix)
	if f.Tag != nil {
		add(*f.Tag)
	}
	if f.And != nil {
		prefix += aws.ToString(f.And.Prefix)
		add(f.And.Tags...)
	}
	GinkgoWriter.Printf("RGW answered the filter as prefix %q, tag %v, and %v\n", aws.ToString(f.Prefix), f.Tag != nil, f.And != nil)
	return prefix, tags
}
