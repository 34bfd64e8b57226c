package storage_test

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// serverOwnership reads a bucket's object ownership with c, as a user would check it.
func serverOwnership(ctx SpecContext, c *s3.Client, bucket string) types.ObjectOwnership {
	GinkgoHelper()
	out, err := c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(bucket)})
	Expect(err).NotTo(HaveOccurred())
	Expect(out.OwnershipControls.Rules).To(HaveLen(1))
	return out.OwnershipControls.Rules[0].ObjectOwnership
}

// objectOwner is the owner a listing names for key in bucket, read with c.
func objectOwner(ctx SpecContext, c *s3.Client, bucket, key string) string {
	GinkgoHelper()
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key), FetchOwner: aws.Bool(true)})
	Expect(err).NotTo(HaveOccurred())
	Expect(out.Contents).To(HaveLen(1))
	Expect(out.Contents[0].Owner).NotTo(BeNil())
	return aws.ToString(out.Contents[0].Owner.ID)
}

// versitygw implements ownership controls (GetBucketOwnershipControls, Put, Delete) and, under
// BucketOwnerEnforced, refuses every PutBucketAcl, private too, with AccessControlListNotSupported.
// It keeps no owner per object, so the account owns what other principals upload under any setting.
var _ = Describe("Bucket ownership controls on versitygw", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("creates a bucket with ACLs off, whose account owns what another principal's key writes, and keeps it so", func(ctx SpecContext) {
		a := readyAccount(ctx, ns, "own")
		b := newBucket(ns, "enforced", "own", func(s *storagev1alpha1.BucketSpec) {
			s.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		name := b.Spec.BucketName

		By("made with BucketOwnerEnforced, read back, and shown in status")
		Expect(serverOwnership(ctx, a.s3, name)).To(Equal(types.ObjectOwnershipBucketOwnerEnforced))
		Expect(b.Status.OwnershipControls).To(Equal("BucketOwnerEnforced"))
		made, _ := serverWrites(name, 0)
		Expect(made).To(ContainElement("CreateBucket"))
		Expect(made).NotTo(ContainElement("PutBucketOwnershipControls"), "the bucket is created with its ownership, never a moment with ACLs on")

		By("the server refusing ACLs, as AWS does")
		_, err := a.s3.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(name), ACL: types.BucketCannedACLPublicRead})
		Expect(s3Code(err)).To(Equal("AccessControlListNotSupported"))

		By("a key of another principal writes an object that the account owns and reads")
		writer := newAccess(ns, "writer", "enforced", storagev1alpha1.AccessWriteOnly)
		Expect(k8s.Create(ctx, writer)).To(Succeed())
		w := accessReady(ctx, writer)
		Expect(writer.Status.AccessKeyID).NotTo(Equal(a.keyID))
		Expect(put(ctx, w, name, "upload.txt")).To(Succeed())
		Expect(get(ctx, a.s3, name, "upload.txt")).To(Succeed())
		Expect(objectOwner(ctx, a.s3, name, "upload.txt")).To(Equal(b.Status.ACL.Owner), "the bucket's account owns the object")

		By("and so it does under ObjectWriter: versitygw keeps no object owner, so ownership changes nothing there")
		// GetObjectAcl is 501 on versitygw, and a listing names the bucket's owner for every
		// object: what BucketOwnerEnforced promises holds on this server whatever the setting.
		ow := newBucket(ns, "writer-owned", "own", func(s *storagev1alpha1.BucketSpec) {
			s.OwnershipControls = storagev1alpha1.ObjectOwnershipObjectWriter
		})
		Expect(k8s.Create(ctx, ow)).To(Succeed())
		bucketReady(ctx, ow)
		Expect(serverOwnership(ctx, a.s3, ow.Spec.BucketName)).To(Equal(types.ObjectOwnershipObjectWriter))
		other := newAccess(ns, "other-writer", "writer-owned", storagev1alpha1.AccessWriteOnly)
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Expect(put(ctx, accessReady(ctx, other), ow.Spec.BucketName, "upload.txt")).To(Succeed())
		Expect(get(ctx, a.s3, ow.Spec.BucketName, "upload.txt")).To(Succeed())
		Expect(objectOwner(ctx, a.s3, ow.Spec.BucketName, "upload.txt")).To(Equal(b.Status.ACL.Owner))
		_, err = a.s3.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(ow.Spec.BucketName), Key: aws.String("upload.txt")})
		Expect(s3Code(err)).To(Equal("NotImplemented"))

		By("restoring BucketOwnerEnforced changed behind its back")
		_, err = a.s3.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String(name),
			OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipObjectWriter}}}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() types.ObjectOwnership { return serverOwnership(ctx, a.s3, name) }).Should(Equal(types.ObjectOwnershipBucketOwnerEnforced))
		Eventually(func() []string { return eventReasons(ctx, b) }).Should(ContainElement("OwnershipControlsDriftCorrected"))

		By("turning ACLs back on for a public-read ACL in one change: ownership is written first")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) {
			s.OwnershipControls = storagev1alpha1.ObjectOwnershipObjectWriter
			s.CannedACL = storagev1alpha1.CannedACLPublicRead
		})
		bucketReady(ctx, b)
		Expect(serverOwnership(ctx, a.s3, name)).To(Equal(types.ObjectOwnershipObjectWriter))
		Expect(serverACL(ctx, a.s3, name)).To(ContainElement("Group:all-users:READ"))

		By("turning them off again over that public ACL: the ACL is made private first, which versitygw would refuse after")
		update(ctx, b, func(s *storagev1alpha1.BucketSpec) {
			s.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
			s.CannedACL = storagev1alpha1.CannedACLPrivate
		})
		bucketReady(ctx, b)
		Expect(serverOwnership(ctx, a.s3, name)).To(Equal(types.ObjectOwnershipBucketOwnerEnforced))
		Expect(serverACL(ctx, a.s3, name)).NotTo(ContainElement(ContainSubstring("all-users")))
	})
})
