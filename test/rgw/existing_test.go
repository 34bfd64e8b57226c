package rgw_test

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// existingAccount is a Ready Contract named name over the RGW user the harness made with
// radosgw-admin, with no contract API involved.
func existingAccount(ctx SpecContext, ns, name string) *storagev1alpha1.Contract {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-keys"},
		StringData: map[string]string{
			storagev1alpha1.SecretKeyAccessKeyID:     stk.S3.AdminAccessKey,
			storagev1alpha1.SecretKeySecretAccessKey: stk.S3.AdminSecretKey,
		}})).To(Succeed())
	c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{
			SecretName: name + "-keys", Endpoint: stk.S3.Endpoint, Region: stk.S3.Region}}}
	Expect(k8s.Create(ctx, c)).To(Succeed())
	ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
	return c
}

// An account that another team runs on a Ceph cluster: here, the RGW user the harness made with
// radosgw-admin, with no contract API involved.
var _ = Describe("A Contract over an existing Ceph RGW account", func() {
	It("serves Buckets with their settings on it, and deletes them by their reclaim policy", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		c := existingAccount(ctx, ns, "ceph")
		Expect(c.Status.VirtualHostedStyle).To(BeFalse(), "path style off AWS")

		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Spec: storagev1alpha1.BucketSpec{
			BucketName: "existing-" + ns, ContractName: "ceph", BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
			Versioning: storagev1alpha1.VersioningEnabled}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })

		account := localenv.NewS3Client(stk.S3.Endpoint, stk.S3.Region, stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		v, err := account.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Status).To(Equal(s3types.BucketVersioningStatusEnabled), "the bucket is the account's, with the spec's settings")

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(b), b) }).Should(Satisfy(func(err error) bool {
			return client.IgnoreNotFound(err) == nil && err != nil
		}))
		_, err = account.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NotFound"))
		Expect(k8s.Delete(ctx, c)).To(Succeed())
	})
})
