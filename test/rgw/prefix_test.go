package rgw_test

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// RGW evaluates the s3:prefix condition of the listing statement as AWS does: a key limited to
// a prefix lists and writes under it and is refused outside it, and AccessVerified saw both.
var _ = Describe("A BucketAccess limited to a prefix on Ceph RGW", func() {
	It("lists and writes under its prefix and is refused outside it", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
		Expect(k8s.Create(ctx, c)).To(Succeed())
		ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		owner := s3OfSecret(ctx, ns, c.Status.SecretName)
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backups"},
			Spec: storagev1alpha1.BucketSpec{BucketName: "backups-" + ns, ContractName: "team"}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		bucket := b.Spec.BucketName
		Expect(putObject(ctx, owner, bucket, "other/old.tar")).To(Succeed())

		a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "backups", Access: storagev1alpha1.AccessReadWrite, Prefix: "web/"}}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			for _, typ := range []string{storagev1alpha1.ReadyCondition, storagev1alpha1.AccessVerifiedCondition} {
				cond := meta.FindStatusCondition(a.Status.Conditions, typ)
				g.Expect(cond).NotTo(BeNil(), "no %s condition yet", typ)
				g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%s: %s: %s", typ, cond.Reason, cond.Message)
			}
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition).Message).To(
			ContainSubstring(`under prefix "web/" list allowed, read allowed, write allowed; outside it list refused, read refused, write refused`))
		key := s3OfSecret(ctx, ns, a.Status.SecretName)

		By("under the prefix it writes, reads, lists and deletes")
		Expect(putObject(ctx, key, bucket, "web/db.tar")).To(Succeed())
		Expect(getObject(ctx, key, bucket, "web/db.tar")).To(Succeed())
		_, err := key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("web/")})
		Expect(err).NotTo(HaveOccurred())
		Expect(deleteObject(ctx, key, bucket, "web/db.tar")).To(Succeed())

		By("outside it every request is refused")
		_, err = key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		Expect(code(err)).To(Equal("AccessDenied"))
		_, err = key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("other/")})
		Expect(code(err)).To(Equal("AccessDenied"))
		Expect(code(getObject(ctx, key, bucket, "other/old.tar"))).To(Equal("AccessDenied"))
		Expect(code(putObject(ctx, key, bucket, "other/new.tar"))).To(Equal("AccessDenied"))
		Expect(code(deleteObject(ctx, key, bucket, "other/old.tar"))).To(Equal("AccessDenied"))
	})
})
