package storage_test

import (
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// keysSecret is a Secret a user writes with keys made outside the operator.
func keysSecret(ns, name, accessKeyID, secretKey string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{
		storagev1alpha1.SecretKeyAccessKeyID:     []byte(accessKeyID),
		storagev1alpha1.SecretKeySecretAccessKey: []byte(secretKey),
		storagev1alpha1.SecretKeyEndpointURL:     []byte(stk.S3.Endpoint),
	}}
}

var _ = Describe("A Contract over an account the user has, on versitygw", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("refuses wrong keys with nothing created, then serves Buckets as a bought account does once the Secret is right", func(ctx SpecContext) {
		secret := keysSecret(ns, "root-keys", stk.S3.AdminAccessKey, "not-the-secret")
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		c := newContract(ns, "own", func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "root-keys", Region: stk.S3.Region}}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonInvalidCredentials)
		Expect(cond.Message).To(ContainSubstring("refused key " + stk.S3.AdminAccessKey))
		Expect(cond.Message).NotTo(ContainSubstring("not-the-secret"))
		b := newBucket(ns, "data", "own", func(s *storagev1alpha1.BucketSpec) {
			s.CannedACL = storagev1alpha1.CannedACLPublicRead
			s.CORS = appCORS.DeepCopy()
			s.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketNotReady(ctx, b, storagev1alpha1.ReasonContractNotReady)
		root := localenv.NewS3Client(stk.S3.Endpoint, stk.S3.Region, stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		_, err := root.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NotFound"), "a bucket was made with keys the server refused")

		By("picking up the right keys from the Secret, without a restart")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		Expect(secret.Labels).To(HaveKeyWithValue(storagev1alpha1.ContractLabel, "own"))
		secret.Data[storagev1alpha1.SecretKeySecretAccessKey] = []byte(stk.S3.AdminSecretKey)
		Expect(k8s.Update(ctx, secret)).To(Succeed())
		contractReady(ctx, c)
		Expect(c.Status.Endpoint).To(Equal(stk.S3.Endpoint))
		Expect(c.Status.SecretName).To(Equal("root-keys"))
		Expect(c.Status.ContractID).To(BeEmpty(), "nothing was bought")
		bucketReady(ctx, b)

		By("keeping the Bucket's settings as on a bought account, drift included")
		_, err = root.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(b.Spec.BucketName), CORSConfiguration: &types.CORSConfiguration{
			CORSRules: []types.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"DELETE"}}}}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []string { return eventReasons(ctx, b) }).Should(ContainElement("CORSDriftCorrected"))

		By("saying a BucketAccess needs a provider, and how to get one")
		ba := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "data", Access: storagev1alpha1.AccessReadOnly}}
		Expect(k8s.Create(ctx, ba)).To(Succeed())
		Eventually(func(g Gomega) {
			c := readyCondition(g, ctx, ba, func() []metav1.Condition { return ba.Status.Conditions })
			g.Expect(c.Reason).To(Equal(storagev1alpha1.ReasonPrincipalsUnsupported))
			g.Expect(c.Message).To(ContainSubstring("run the reference contract server in front of this S3 server"))
		}).Should(Succeed())
		Expect(k8s.Delete(ctx, ba)).To(Succeed())
		gone(ctx, ba)

		By("waiting again when the keys stop working")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		secret.Data[storagev1alpha1.SecretKeyAccessKeyID] = []byte("NOSUCHKEY")
		Expect(k8s.Update(ctx, secret)).To(Succeed())
		contractNotReady(ctx, c, storagev1alpha1.ReasonInvalidCredentials)
		secret.Data[storagev1alpha1.SecretKeyAccessKeyID] = []byte(stk.S3.AdminAccessKey)
		Expect(k8s.Update(ctx, secret)).To(Succeed())
		contractReady(ctx, c)

		By("deleting the bucket by its reclaim policy, and leaving the account and its Secret")
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
		_, err = root.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NotFound"))
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		gone(ctx, c)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		Expect(secret.Labels).NotTo(HaveKey(storagev1alpha1.ContractLabel), "the label the operator added stays behind")
		Expect(secret.Finalizers).To(BeEmpty(), "the finalizer the operator added stays behind")
		Expect(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]).To(Equal([]byte(stk.S3.AdminSecretKey)))
		_, err = root.ListBuckets(ctx, &s3.ListBucketsInput{})
		Expect(err).NotTo(HaveOccurred(), "the account still works")
	})

	It("holds its account's Secret and checks the account again while its Buckets are deleted, as a namespace's deletion does", func(ctx SpecContext) {
		secret := keysSecret(ns, "later-keys", stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		c := newContract(ns, "later", func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "later-keys", Region: stk.S3.Region}}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		b := newBucket(ns, "kept-until-checked", "later", func(s *storagev1alpha1.BucketSpec) {
			s.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		Expect(secret.Finalizers).To(ContainElement(storagev1alpha1.Finalizer))

		By("deleting all three while the account's check fails")
		secret.Data[storagev1alpha1.SecretKeySecretAccessKey] = []byte("not-the-secret")
		Expect(k8s.Update(ctx, secret)).To(Succeed())
		contractNotReady(ctx, c, storagev1alpha1.ReasonInvalidCredentials)
		Expect(k8s.Delete(ctx, secret)).To(Succeed())
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		bucketNotReady(ctx, b, storagev1alpha1.ReasonDeleting)
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret) }, "2s").Should(Succeed(),
			"the keys the Bucket needs went before it")

		By("finishing all three once the account works again")
		secret.Data[storagev1alpha1.SecretKeySecretAccessKey] = []byte(stk.S3.AdminSecretKey)
		Expect(k8s.Update(ctx, secret)).To(Succeed())
		gone(ctx, b)
		gone(ctx, c)
		gone(ctx, secret)
		root := localenv.NewS3Client(stk.S3.Endpoint, stk.S3.Region, stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		_, err := root.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(objectstore.ErrorCode(err)).To(Equal("NotFound"), "the bucket went by its reclaim policy")
	})

	It("says what is missing when the Secret is not there, and an endpoint that does not answer", func(ctx SpecContext) {
		c := newContract(ns, "missing", func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "nothing-here"}}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonCredentialsIncomplete)
		Expect(cond.Message).To(HavePrefix("Secret nothing-here does not exist in namespace " + ns))

		secret := keysSecret(ns, "nothing-here", stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		secret.Data[storagev1alpha1.SecretKeyEndpointURL] = []byte(deadEndpoint)
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		cond = contractNotReady(ctx, c, storagev1alpha1.ReasonEndpointUnreachable)
		Expect(cond.Message).To(ContainSubstring("The S3 endpoint " + deadEndpoint + " did not answer"))
	})

	It("never calls an endpoint of the Secret that the platform does not allow", func(ctx SpecContext) {
		// No admission sees the Secret's AWS_ENDPOINT_URL: the controller checks it, before
		// any connection.
		metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			defer GinkgoRecover()
			Fail("the manager called an endpoint the platform does not allow")
		}))
		DeferCleanup(metadata.Close)
		secret := keysSecret(ns, "elsewhere-keys", stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		secret.Data[storagev1alpha1.SecretKeyEndpointURL] = []byte(metadata.URL)
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		c := newContract(ns, "elsewhere", func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "elsewhere-keys"}}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonEndpointNotAllowed)
		Expect(cond.Message).To(Equal(metadata.URL + " is not on the platform's list of allowed endpoints: the platform decides which S3 " +
			"endpoints tenants may name (the manager's --allowed-endpoints); ask your platform team to list it, or name an endpoint it allows; nothing was called"))
	})

	It("refuses a region of the Secret that is not a region, before calling the endpoint", func(ctx SpecContext) {
		secret := keysSecret(ns, "newline-keys", stk.S3.AdminAccessKey, stk.S3.AdminSecretKey)
		secret.Data[storagev1alpha1.SecretKeyRegion] = []byte("us-east-1\n[default]")
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		c := newContract(ns, "newline", func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "newline-keys"}}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonInvalidConfiguration)
		Expect(cond.Message).To(HavePrefix(`The region "us-east-1\n[default]" is not a region`))
	})
})
