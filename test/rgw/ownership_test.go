package rgw_test

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Ceph RGW 16.2 has no ownership controls: it answers PutBucketOwnershipControls with 400
// InvalidArgument, GetBucketOwnershipControls with the bucket's listing, and takes
// DeleteBucketOwnershipControls for a DeleteBucket (which is why the operator never sends it).
// ACLs always apply, and an object belongs to whoever uploads it, as under ObjectWriter.
var _ = Describe("Bucket ownership controls on Ceph RGW", func() {
	It("reports BucketOwnerEnforced unsupported with the rest applied; an upload stays its writer's; DELETE removes the bucket", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := boughtAccount(ctx, ns, "team")
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enforced"},
			Spec: storagev1alpha1.BucketSpec{BucketName: "enforced-" + ns, ContractName: "team",
				OwnershipControls: storagev1alpha1.ObjectOwnershipBucketOwnerEnforced, Versioning: storagev1alpha1.VersioningEnabled}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(storagev1alpha1.ReasonOwnershipControlsUnsupported), c.Message)
			g.Expect(c.Message).To(And(ContainSubstring("ownership controls (spec.ownershipControls: InvalidArgument"),
				ContainSubstring("the rest of the spec is applied")))
		}).Should(Succeed())
		Expect(b.Status.Versioning).To(Equal("Enabled"))
		Expect(b.Status.OwnershipControls).To(BeEmpty())
		name := b.Spec.BucketName

		By("RGW answering the GET of ownership controls with the bucket's listing, and ACLs still applying")
		out, err := owner.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.OwnershipControls.Rules).To(BeEmpty())
		_, err = owner.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(name), ACL: "public-read"})
		Expect(err).NotTo(HaveOccurred(), "RGW takes an ACL whatever the spec's ownership")
		_, err = owner.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(name), ACL: "private"})
		Expect(err).NotTo(HaveOccurred())

		By("a key of another principal uploads, and RGW makes it the object's owner")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			b.Spec.OwnershipControls = ""
			return k8s.Update(ctx, b)
		}).Should(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "writer"},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "enforced", Access: storagev1alpha1.AccessReadWrite}}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		ready(ctx, a, func() []metav1.Condition { return a.Status.Conditions })
		writer := s3OfSecret(ctx, ns, a.Status.SecretName)
		Expect(putObject(ctx, writer, name, "upload.txt")).To(Succeed())
		l, err := owner.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(name), FetchOwner: aws.Bool(true)})
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Contents).To(HaveLen(1))
		Expect(aws.ToString(l.Contents[0].Owner.ID)).To(HavePrefix(b.Status.ACL.Owner+"-"), "the principal, a user of the account's tenant, owns it")

		By("the account cannot read it: what BucketOwnerEnforced would prevent, and RGW 16.2 cannot")
		// This pins the gap docs/s3-servers.md records; a release that gains ownership
		// controls, or gives the bucket owner the object, turns it red.
		Expect(code(getObject(ctx, owner, name, "upload.txt"))).To(Equal("AccessDenied"))
		_, err = owner.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(name), Key: aws.String("upload.txt")})
		Expect(code(err)).To(Equal("AccessDenied"))
		Expect(getObject(ctx, writer, name, "upload.txt")).To(Succeed())

		By("RGW taking DeleteBucketOwnershipControls for a DeleteBucket, which is why the operator never sends it")
		empty := "empty-" + ns
		_, err = owner.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(empty)})
		Expect(err).NotTo(HaveOccurred())
		_, err = owner.DeleteBucketOwnershipControls(ctx, &s3.DeleteBucketOwnershipControlsInput{Bucket: aws.String(empty)})
		Expect(err).NotTo(HaveOccurred())
		_, err = owner.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(empty)})
		Expect(code(err)).To(Equal("NotFound"), "the bucket is gone")
	})
})
