package rgw_test

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

var _ = Describe("Buckets on Ceph RGW", func() {
	var (
		ns    string
		owner *s3.Client
		// ownerID is the canonical id RGW gives the contract's account, a user of the
		// contract's own tenant; tenant is that tenant, which anonymous requests name.
		ownerID, tenant string
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		c := &storagev1alpha1.Contract{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
			Spec:       storagev1alpha1.ContractSpec{Plan: "standard"},
		}
		Expect(k8s.Create(ctx, c)).To(Succeed())
		ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		Expect(c.Status.Endpoint).To(Equal(stk.S3.Endpoint))
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, secret)).To(Succeed())
		tenant = c.Status.ContractID
		ownerID = tenant + "$contract-" + c.Status.ContractID
		owner = localenv.NewS3Client(c.Status.Endpoint, c.Status.Region,
			string(secret.Data["AWS_ACCESS_KEY_ID"]), string(secret.Data["AWS_SECRET_ACCESS_KEY"]))
	})

	bucket := func(name string, spec storagev1alpha1.BucketSpec) *storagev1alpha1.Bucket {
		spec.BucketName, spec.ContractName = name+"-"+ns, "team"
		return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	}
	bucketReady := func(ctx SpecContext, b *storagev1alpha1.Bucket) {
		GinkgoHelper()
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
	}
	// serverACL reads the ACL with an independent client, as "grantee:PERMISSION".
	serverACL := func(ctx SpecContext, name string) []string {
		GinkgoHelper()
		out, err := owner.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		var grants []string
		for _, g := range out.Grants {
			who := aws.ToString(g.Grantee.ID)
			if g.Grantee.URI != nil {
				who = aws.ToString(g.Grantee.URI)
			}
			grants = append(grants, who+":"+string(g.Permission))
		}
		return grants
	}

	It("grants predefined groups by URI, next to canned ACLs and canonical ids", func(ctx SpecContext) {
		b := bucket("groups", storagev1alpha1.BucketSpec{
			CannedACL: storagev1alpha1.CannedACLAuthenticatedRead,
			GrantRead: []storagev1alpha1.Grantee{{Type: storagev1alpha1.GranteeTypeURL, Value: objectstore.GroupAllUsers}},
			GrantReadACP: []storagev1alpha1.Grantee{
				{Type: storagev1alpha1.GranteeTypeURL, Value: objectstore.GroupAuthenticatedUsers},
			},
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		Expect(serverACL(ctx, b.Spec.BucketName)).To(ConsistOf(
			ownerID+":FULL_CONTROL",
			objectstore.GroupAuthenticatedUsers+":READ",
			objectstore.GroupAllUsers+":READ",
			objectstore.GroupAuthenticatedUsers+":READ_ACP",
		))

		By("letting anyone list the bucket, as the AllUsers READ grant says")
		resp, err := http.Get(stk.S3.Endpoint + "/" + tenant + ":" + b.Spec.BucketName)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(http.StatusOK))

		By("removing the group grants when the spec drops them")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			b.Spec.CannedACL, b.Spec.GrantRead, b.Spec.GrantReadACP = storagev1alpha1.CannedACLPrivate, nil, nil
			return k8s.Update(ctx, b)
		}).Should(Succeed())
		bucketReady(ctx, b)
		Expect(serverACL(ctx, b.Spec.BucketName)).To(ConsistOf(ownerID + ":FULL_CONTROL"))
		resp, err = http.Get(stk.S3.Endpoint + "/" + tenant + ":" + b.Spec.BucketName)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
	})

	It("applies a public-read policy that does not name the owner, and keeps managing the bucket", func(ctx SpecContext) {
		b := bucket("public", storagev1alpha1.BucketSpec{BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete})
		b.Spec.Policy = &runtime.RawExtension{Raw: []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",` +
			`"Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + b.Spec.BucketName + `/*"}]}`)}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		out, err := owner.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(err).NotTo(HaveOccurred())
		Expect(bucketpolicy.PoliciesEqual(aws.ToString(out.Policy), string(b.Spec.Policy.Raw))).To(BeTrue(), aws.ToString(out.Policy))

		By("costing no write while nothing changes, whatever RGW does to the policy's formatting")
		time.Sleep(2 * time.Second)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		version := b.ResourceVersion
		Consistently(func() string {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			return b.ResourceVersion
		}, 4*time.Second).Should(Equal(version))

		By("deleting it, policy and all")
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }).Should(BeTrue())
		_, err = owner.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(err).To(HaveOccurred(), "the bucket is still there")
	})
})
