package rgw_test

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Force delete (spec.deletion.emptyOnDelete) over RGW, which lists versions as AWS does: one
// key's versions newest first with its delete markers among them, NextVersionIdMarker a real
// version id, and every version of a bucket with object lock a version of its own.
var _ = Describe("Force delete (spec.deletion.emptyOnDelete) on Ceph RGW", func() {
	var (
		ns    string
		owner *s3.Client
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		owner = boughtAccount(ctx, ns, "team")
	})

	emptied := func(ctx SpecContext, name string, maxObjects int64, mutate func(*storagev1alpha1.BucketSpec)) *storagev1alpha1.Bucket {
		GinkgoHelper()
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: storagev1alpha1.BucketSpec{BucketName: name + "-" + ns, ContractName: "team",
				BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
				Deletion:            &storagev1alpha1.BucketDeletion{EmptyOnDelete: true, MaxObjects: maxObjects}}}
		mutate(&b.Spec)
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		return b
	}
	// put writes keys obj-<from> to obj-<to-1>, four at a time.
	put := func(ctx SpecContext, bucket string, from, to int) {
		GinkgoHelper()
		var wg sync.WaitGroup
		errs := make(chan error, to-from)
		keys := make(chan string)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range keys {
					if err := putObject(ctx, owner, bucket, k); err != nil {
						errs <- fmt.Errorf("%s: %w", k, err)
					}
				}
			}()
		}
		for i := from; i < to; i++ {
			keys <- fmt.Sprintf("obj-%03d", i)
		}
		close(keys)
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	remove := func(ctx SpecContext, bucket string, from, to int) {
		GinkgoHelper()
		for i := from; i < to; i++ {
			Expect(deleteObject(ctx, owner, bucket, fmt.Sprintf("obj-%03d", i))).To(Succeed())
		}
	}
	// versions counts what ListObjectVersions shows, pages and all: versions and delete markers.
	versions := func(ctx SpecContext, bucket string) (objects, markers int) {
		GinkgoHelper()
		p := s3.NewListObjectVersionsPaginator(owner, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			Expect(err).NotTo(HaveOccurred())
			objects += len(page.Versions)
			markers += len(page.DeleteMarkers)
		}
		return objects, markers
	}
	eventNotes := func(ctx SpecContext, b *storagev1alpha1.Bucket, reason string) []string {
		GinkgoHelper()
		var list eventsv1.EventList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.UID == b.UID && e.Reason == reason {
				out = append(out, e.Note)
			}
		}
		return out
	}
	gone := func(ctx SpecContext, b *storagev1alpha1.Bucket) {
		GinkgoHelper()
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }).
			Should(BeTrue(), "still there: %v", b.Status.Conditions)
	}
	blocked := func(ctx SpecContext, b *storagev1alpha1.Bucket, reason string) (blocked, ready metav1.Condition) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition)
			g.Expect(c).NotTo(BeNil(), "conditions %v", b.Status.Conditions)
			g.Expect(c.Reason).To(Equal(reason), c.Message)
			r := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(r).NotTo(BeNil())
			blocked, ready = *c, *r
		}).Should(Succeed())
		return blocked, ready
	}

	It("empties a versioned bucket of 500 objects, old versions and delete markers, across pages, and deletes it", func(ctx SpecContext) {
		b := emptied(ctx, "versions", 2000, func(s *storagev1alpha1.BucketSpec) { s.Versioning = storagev1alpha1.VersioningEnabled })
		name := b.Spec.BucketName
		put(ctx, name, 0, 500)
		put(ctx, name, 0, 400) // an old version of obj-000 to obj-399
		put(ctx, name, 0, 100) // and a second of obj-000 to obj-099
		remove(ctx, name, 0, 1)
		remove(ctx, name, 400, 450)
		objects, markers := versions(ctx, name)
		Expect([]int{objects, markers}).To(Equal([]int{1000, 51}))
		first, err := owner.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect([]any{aws.ToBool(first.IsTruncated), aws.ToString(first.NextKeyMarker), len(first.Versions) + len(first.DeleteMarkers)}).
			To(Equal([]any{true, "obj-449", 1000}), "two pages, the first ending between obj-449's delete marker and its version")

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
		_, err = owner.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
		Expect(code(err)).To(Equal("NotFound"), "the bucket is deleted")
		Expect(eventNotes(ctx, b, "BucketEmptied")).To(Equal([]string{
			"Removed 1000 object versions and 51 delete markers from bucket " + name}))
	})

	It("removes no version from a versioned bucket holding more than maxObjects", func(ctx SpecContext) {
		b := emptied(ctx, "capped", 100, func(s *storagev1alpha1.BucketSpec) { s.Versioning = storagev1alpha1.VersioningEnabled })
		name := b.Spec.BucketName
		put(ctx, name, 0, 80)
		put(ctx, name, 0, 30)
		remove(ctx, name, 70, 80)
		objects, markers := versions(ctx, name)
		Expect([]int{objects, markers}).To(Equal([]int{110, 10}), "80 objects: over the cap only by versions and markers")

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		cond, _ := blocked(ctx, b, storagev1alpha1.ReasonTooManyObjects)
		Expect(cond.Message).To(HavePrefix("Bucket " + name + " holds more than 100 object versions and delete markers"))
		Consistently(func() []int {
			objects, markers := versions(ctx, name)
			return []int{objects, markers}
		}, 3*time.Second, 500*time.Millisecond).Should(Equal([]int{110, 10}), "nothing deleted")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(eventNotes(ctx, b, "BucketEmptied")).To(BeEmpty())
	})

	It("leaves a version under governance retention, removes the rest, and says which version holds the bucket", func(ctx SpecContext) {
		b := emptied(ctx, "locked", 0, func(s *storagev1alpha1.BucketSpec) { s.ObjectLock = &storagev1alpha1.ObjectLock{} })
		name := b.Spec.BucketName
		put(ctx, name, 0, 20)
		put(ctx, name, 0, 5)
		remove(ctx, name, 10, 15)
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		kept, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("kept.tar"), Body: strings.NewReader("data"),
			ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(until)})
		Expect(err).NotTo(HaveOccurred())
		Expect(kept.VersionId).NotTo(BeNil())
		// and a newer version of the same key, which nothing keeps
		newer, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("kept.tar"), Body: strings.NewReader("data")})
		Expect(err).NotTo(HaveOccurred())

		By("RGW answering the hold a version lacks with ObjectLockConfigurationNotFoundError, which the operator reads as none")
		_, err = owner.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String(name), Key: aws.String("kept.tar"), VersionId: kept.VersionId})
		Expect(code(err)).To(Equal("ObjectLockConfigurationNotFoundError"), "AWS says NoSuchObjectLockConfiguration")
		_, err = owner.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String(name), Key: aws.String("kept.tar"), VersionId: newer.VersionId})
		Expect(code(err)).To(Equal("ObjectLockConfigurationNotFoundError"))
		objects, markers := versions(ctx, name)
		Expect([]int{objects, markers}).To(Equal([]int{27, 5}))

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		cond, readyCond := blocked(ctx, b, storagev1alpha1.ReasonObjectsLocked)
		held := "kept.tar version " + aws.ToString(kept.VersionId) + " (retained in GOVERNANCE mode until " + until.Format("2006-01-02T15:04:05Z") + ")"
		Expect(cond.Message).To(HavePrefix("Bucket " + name + " still holds 1 object version that object lock keeps, such as " + held + ";"))
		Expect([]string{string(readyCond.Status), readyCond.Reason, readyCond.Message}).To(Equal([]string{
			"False", storagev1alpha1.ReasonDeleting, "Deletion is blocked (see DeletionBlocked)"}))
		left, err := owner.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(left.DeleteMarkers).To(BeEmpty())
		Expect(left.Versions).To(HaveLen(1), "the rest is removed")
		Expect(aws.ToString(left.Versions[0].VersionId)).To(Equal(aws.ToString(kept.VersionId)))
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(b), b) }, 2*time.Second).Should(Succeed())

		By("keeping the bucket, with the retained version in it, once the team says so")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			b.Spec.Deletion, b.Spec.BucketReclaimPolicy = nil, storagev1alpha1.ReclaimPolicyRetain
			return k8s.Update(ctx, b)
		}).Should(Succeed())
		gone(ctx, b)
		Expect(eventNotes(ctx, b, "BucketEmptied")).To(BeEmpty())
		objects, markers = versions(ctx, name)
		Expect([]int{objects, markers}).To(Equal([]int{1, 0}))

		By("the test, not the operator, bypassing the retention to clean up")
		del := &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String("kept.tar"), VersionId: kept.VersionId}
		_, err = owner.DeleteObject(ctx, del)
		Expect(code(err)).To(Equal("AccessDenied"), "RGW keeps the version from a deletion that does not bypass")
		del.BypassGovernanceRetention = aws.Bool(true)
		_, err = owner.DeleteObject(ctx, del)
		Expect(err).NotTo(HaveOccurred())
		_, err = owner.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
	})
})
