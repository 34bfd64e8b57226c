package storage_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// putObjects writes n small objects, obj-000 upwards.
func putObjects(ctx SpecContext, a account, bucket string, n int) {
	GinkgoHelper()
	for i := range n {
		_, err := a.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("obj-%03d", i)),
			Body: strings.NewReader("data")})
		Expect(err).NotTo(HaveOccurred())
	}
}

// objectCount counts the versions and delete markers the bucket holds, listed with the
// account's own client. versitygw lists a page's marker again at the top of the next page, so
// each is counted once.
func objectCount(ctx SpecContext, a account, bucket string) int {
	GinkgoHelper()
	seen := map[string]bool{}
	p := s3.NewListObjectVersionsPaginator(a.s3, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		Expect(err).NotTo(HaveOccurred())
		for _, v := range page.Versions {
			seen[aws.ToString(v.Key)+"\x00"+aws.ToString(v.VersionId)] = true
		}
		for _, m := range page.DeleteMarkers {
			seen[aws.ToString(m.Key)+"\x00"+aws.ToString(m.VersionId)] = true
		}
	}
	return len(seen)
}

// eventMessages are the messages of obj's events of reason. Events are sent apart from the
// pass that records them, so a test reads them with Eventually.
func eventMessages(ctx SpecContext, obj client.Object, reason string) []string {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(obj.GetNamespace()))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// versionedAccount is a Ready Contract over the root account of the versioned versitygw (an
// account the tenant has: spec.credentials), with an S3 client of its own.
func versionedAccount(ctx SpecContext, ns, name string) account {
	GinkgoHelper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-keys"}, Data: map[string][]byte{
		storagev1alpha1.SecretKeyAccessKeyID:     []byte(versioned.RootAccessKey),
		storagev1alpha1.SecretKeySecretAccessKey: []byte(versioned.RootSecretKey),
		storagev1alpha1.SecretKeyEndpointURL:     []byte(versioned.Endpoint),
	}}
	Expect(k8s.Create(ctx, secret)).To(Succeed())
	c := newContract(ns, name, func(c *storagev1alpha1.Contract) {
		c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: secret.Name, Region: versioned.Region}}
	})
	Expect(k8s.Create(ctx, c)).To(Succeed())
	contractReady(ctx, c)
	return account{contract: c, keyID: versioned.RootAccessKey,
		s3: localenv.NewS3Client(versioned.Endpoint, versioned.Region, versioned.RootAccessKey, versioned.RootSecretKey)}
}

// deletionBlocked waits for the Bucket's DeletionBlocked condition of reason.
func deletionBlocked(ctx SpecContext, b *storagev1alpha1.Bucket, reason string) metav1.Condition {
	GinkgoHelper()
	var cond metav1.Condition
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		for _, c := range b.Status.Conditions {
			if c.Type == storagev1alpha1.DeletionBlockedCondition {
				cond = c
			}
		}
		g.Expect(cond.Reason).To(Equal(reason))
	}).Should(Succeed())
	return cond
}

// The suite's versitygw has no versioning directory: every object there has one version (null),
// which ListObjectVersions lists. A second one, with versioning, serves the versioned buckets.
var _ = Describe("Force delete (spec.deletion.emptyOnDelete) on versitygw", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	emptied := func(name, contract string, maxObjects int64, mutate ...func(*storagev1alpha1.BucketSpec)) *storagev1alpha1.Bucket {
		return newBucket(ns, name, contract, append([]func(*storagev1alpha1.BucketSpec){func(s *storagev1alpha1.BucketSpec) {
			s.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			s.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true, MaxObjects: maxObjects}
		}}, mutate...)...)
	}

	It("empties a versioned bucket, old versions and delete markers too, across batches, and says how many it removed", func(ctx SpecContext) {
		a := versionedAccount(ctx, ns, "ver")
		b := emptied("versions", "ver", 2000, func(s *storagev1alpha1.BucketSpec) { s.Versioning = storagev1alpha1.VersioningEnabled })
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName
		putObjects(ctx, a, name, 1100)
		putObjects(ctx, a, name, 100) // old versions of obj-000 to obj-099
		for i := range 50 {
			_, err := a.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(fmt.Sprintf("obj-%03d", 500+i))})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(objectCount(ctx, a, name)).To(Equal(1250), "1,200 versions and 50 delete markers: two batches")

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
		_, err := a.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
		Expect(err).To(HaveOccurred(), "the bucket is deleted")
		Eventually(func() []string { return eventMessages(ctx, b, "BucketEmptied") }).Should(Equal([]string{
			"Removed 1200 object versions and 50 delete markers from bucket " + name}))
	})

	It("removes no version from a versioned bucket holding more than maxObjects", func(ctx SpecContext) {
		a := versionedAccount(ctx, ns, "ver-capped")
		b := emptied("ver-capped", "ver-capped", 100, func(s *storagev1alpha1.BucketSpec) { s.Versioning = storagev1alpha1.VersioningEnabled })
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName
		putObjects(ctx, a, name, 60)
		putObjects(ctx, a, name, 60) // 120 versions of 60 objects: over the cap only by version
		Expect(objectCount(ctx, a, name)).To(Equal(120))

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		deletionBlocked(ctx, b, storagev1alpha1.ReasonTooManyObjects)
		Consistently(func() int { return objectCount(ctx, a, name) }, 2*time.Second).Should(Equal(120), "nothing deleted")
	})

	It("empties a bucket of 500 objects, deletes it, and says how many it removed", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "force")
		b := emptied("full", "force", 0)
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName
		putObjects(ctx, a, name, 500)
		putObjects(ctx, a, name, 20) // overwritten: still one version each
		for i := range 30 {
			_, err := a.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(fmt.Sprintf("obj-%03d", 100+i))})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(objectCount(ctx, a, name)).To(Equal(470))

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
		_, err := a.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
		Expect(err).To(HaveOccurred(), "the bucket is deleted")
		Eventually(func() []string { return eventMessages(ctx, b, "BucketEmptied") }).Should(Equal([]string{
			"Removed 470 object versions and 0 delete markers from bucket " + name}))
	})

	It("removes nothing from a bucket holding more than maxObjects, and says so", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "capped")
		b := emptied("capped", "capped", 100)
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName
		putObjects(ctx, a, name, 150)

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		cond := deletionBlocked(ctx, b, storagev1alpha1.ReasonTooManyObjects)
		Expect(cond.Message).To(Equal("Bucket " + name + " holds more than 100 object versions and delete markers, the most " +
			"spec.deletion.maxObjects lets its deletion remove; nothing was removed: delete objects yourself, raise " +
			"spec.deletion.maxObjects (at most 1000000), or set spec.bucketReclaimPolicy to Retain to keep the bucket"))
		Consistently(func() int { return objectCount(ctx, a, name) }, 2*time.Second).Should(Equal(150), "nothing deleted")

		By("emptying it once the cap is raised")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) { s.Deletion.MaxObjects = 1000 })
		gone(ctx, b)
		Eventually(func() []string { return eventMessages(ctx, b, "BucketEmptied") }).Should(Equal([]string{
			"Removed 150 object versions and 0 delete markers from bucket " + name}))
	})

	It("leaves an object under retention, removes the rest, and says what holds the bucket", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "locked")
		b := emptied("locked", "locked", 0, func(s *storagev1alpha1.BucketSpec) { s.ObjectLock = &storagev1alpha1.ObjectLock{} })
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName
		putObjects(ctx, a, name, 3)
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		_, err := a.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("kept.tar"), Body: strings.NewReader("data"),
			ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(until)})
		Expect(err).NotTo(HaveOccurred())

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		cond := deletionBlocked(ctx, b, storagev1alpha1.ReasonObjectsLocked)
		Expect(cond.Message).To(Equal("Bucket " + name + " still holds 1 object version that object lock keeps, such as kept.tar " +
			"(retained in GOVERNANCE mode until " + until.Format("2006-01-02T15:04:05Z") + "); the emptying never bypasses retention " +
			"or legal hold, and tries again every resync period: wait for the retention to end, remove the legal hold, " +
			"or set spec.bucketReclaimPolicy to Retain to keep the bucket"))
		Expect(objectCount(ctx, a, name)).To(Equal(1), "the rest is removed")
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(b), b) }, 2*time.Second).Should(Succeed())

		By("keeping the bucket, with what is left in it, once the team says so")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) {
			s.Deletion, s.BucketReclaimPolicy = nil, storagev1alpha1.ReclaimPolicyRetain
		})
		gone(ctx, b)
		Expect(objectCount(ctx, a, name)).To(Equal(1))
	})
})
