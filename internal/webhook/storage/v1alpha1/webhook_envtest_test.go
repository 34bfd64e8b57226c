package v1alpha1

import (
	"context"
	"crypto/tls"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// newNamespace gives a spec a namespace of its own.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "webhook-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func newContract(ns, name string) *storagev1alpha1.Contract {
	return &storagev1alpha1.Contract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       storagev1alpha1.ContractSpec{Plan: "standard"},
	}
}

func newBucket(ns, name, bucketName, contract string) *storagev1alpha1.Bucket {
	return &storagev1alpha1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       storagev1alpha1.BucketSpec{BucketName: bucketName, ContractName: contract},
	}
}

var _ = Describe("Contract admission", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("stores the defaults", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, newContract(ns, "team-a"))).To(Succeed())

		var got storagev1alpha1.Contract
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "team-a"}, &got)).To(Succeed())
		Expect(got.Spec.SecretName).To(Equal("team-a-credentials"))
		Expect(got.Spec.ReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyRetain))
	})

	// The API server generates the name after mutating admission, so the webhook cannot default
	// secretName on create; it does on the next update, and until then the controller uses the
	// same default (Contract.SecretNameOrDefault).
	It("defaults secretName of a generated name on the first update", func(ctx SpecContext) {
		c := newContract(ns, "")
		c.GenerateName = "team-"
		Expect(k8sClient.Create(ctx, c)).To(Succeed())
		Expect(c.Name).To(HavePrefix("team-"))
		Expect(c.Spec.SecretName).To(BeEmpty())
		Expect(c.Spec.ReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyRetain))

		c.Labels = map[string]string{"touched": "yes"}
		Expect(k8sClient.Update(ctx, c)).To(Succeed())
		var got storagev1alpha1.Contract
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(c), &got)).To(Succeed())
		Expect(got.Spec.SecretName).To(Equal(got.Name + "-credentials"))
	})

	It("refuses a name too long to label its Secret, before anything is bought", func(ctx SpecContext) {
		err := k8sClient.Create(ctx, newContract(ns, strings.Repeat("a", 64)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("a Contract's name is at most 63 characters: it is the value of the storage.osm.dev/contract label on its Secret"))
	})

	It("refuses a secretName no Secret can have", func(ctx SpecContext) {
		c := newContract(ns, "bad-secret")
		c.Spec.SecretName = "Team_A"
		err := k8sClient.Create(ctx, c)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Contract "bad-secret" is invalid: spec.secretName: Invalid value: "Team_A": must be a valid Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`))
	})

	// The CRD's CEL rules run in the API server's own validation, before validating webhooks, so
	// for plan, region, bucketName and contractName the user sees the CEL message; the webhook's
	// "cannot change (was ...)" stands behind it (unit tests cover it).
	It("refuses a plan change", func(ctx SpecContext) {
		c := newContract(ns, "team-a")
		Expect(k8sClient.Create(ctx, c)).To(Succeed())
		c.Spec.Plan = "premium"
		err := k8sClient.Update(ctx, c)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Contract "team-a" is invalid: spec.plan: Invalid value: "premium": plan cannot change (was standard)`))
	})

	It("refuses adding a region", func(ctx SpecContext) {
		c := newContract(ns, "team-a")
		Expect(k8sClient.Create(ctx, c)).To(Succeed())
		c.Spec.Region = "eu-central-1"
		err := k8sClient.Update(ctx, c)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Contract "team-a" is invalid: spec: Invalid value: region cannot be added or removed after creation`))
	})
})

var _ = Describe("Bucket admission", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newContract(ns, "team-a"))).To(Succeed())
	})

	It("admits a good Bucket and stores the default reclaim policy", func(ctx SpecContext) {
		b := newBucket(ns, "data", "team-a-data", "team-a")
		b.Spec.GrantRead = []storagev1alpha1.Grantee{{Type: storagev1alpha1.GranteeTypeURL, Value: "http://acs.amazonaws.com/groups/global/AllUsers"}}
		b.Spec.Policy = policy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/*"}]}`)
		Expect(k8sClient.Create(ctx, b)).To(Succeed())

		var got storagev1alpha1.Bucket
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(b), &got)).To(Succeed())
		Expect(got.Spec.BucketReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyRetain))
	})

	It("refuses a bad bucket name with the reasons", func(ctx SpecContext) {
		err := k8sClient.Create(ctx, newBucket(ns, "x", "Bad_Name", "team-a"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(Equal(`admission webhook "vbucket-v1alpha1.osm.dev" denied the request: Bucket.storage.osm.dev "x" is invalid: spec.bucketName: Invalid value: "Bad_Name": must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'B', '_', 'N'; must start and end with a lowercase letter or digit`))
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "x" is invalid: spec.bucketName: Invalid value: "Bad_Name": must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'B', '_', 'N'; must start and end with a lowercase letter or digit`))
	})

	It("refuses a contractName that is no object name with a 422 and the field path, before any lookup", func(ctx SpecContext) {
		err := k8sClient.Create(ctx, newBucket(ns, "data", "team-a-data", "other/acc"))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: spec.contractName: Invalid value: "other/acc": ` +
			`must be the name of a Contract in this namespace: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`))
	})

	It("refuses a second Bucket for a bucket another Bucket manages", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, newBucket(ns, "data", "team-a-data", "team-a"))).To(Succeed())
		err := k8sClient.Create(ctx, newBucket(ns, "copy", "team-a-data", "team-a"))
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "copy" is invalid: spec.bucketName: Invalid value: "team-a-data": ` +
			`Bucket data in this namespace already manages this bucket of Contract team-a, and exactly one may`))
	})

	It("refuses a Bucket naming a missing Contract", func(ctx SpecContext) {
		err := k8sClient.Create(ctx, newBucket(ns, "data", "team-a-data", "team-b"))
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: spec.contractName: Invalid value: "team-b": no Contract of this name in namespace "` + ns + `"`))
	})

	It("reports every problem at once", func(ctx SpecContext) {
		b := newBucket(ns, "data", "team-a-data", "team-a")
		b.Spec.FullControl = []storagev1alpha1.Grantee{
			{Type: storagev1alpha1.GranteeTypeEmailAddress, Value: "ops@example.com"},
			{Type: storagev1alpha1.GranteeTypeEmailAddress, Value: "ops@example.com"},
		}
		b.Spec.Policy = policy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other-bucket/*"}]}`)
		err := k8sClient.Create(ctx, b)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: ` +
			"\n* " + `spec.fullControl[1]: Duplicate value: {"value":"ops@example.com","type":"emailAddress"}` +
			"\n* " + `spec.policy.Statement[0].Resource: Invalid value: "arn:aws:s3:::other-bucket/*": must refer to this bucket or its objects: "arn:aws:s3:::team-a-data" or "arn:aws:s3:::team-a-data/..."`))
	})

	It("refuses a bucketName change", func(ctx SpecContext) {
		b := newBucket(ns, "data", "team-a-data", "team-a")
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		b.Spec.BucketName = "team-a-other"
		err := k8sClient.Update(ctx, b)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: spec.bucketName: Invalid value: "team-a-other": bucketName cannot change (was team-a-data)`))
	})

	It("refuses a contractName change", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, newContract(ns, "team-b"))).To(Succeed())
		b := newBucket(ns, "data", "team-a-data", "team-a")
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		b.Spec.ContractName = "team-b"
		err := k8sClient.Update(ctx, b)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: spec.contractName: Invalid value: "team-b": contractName cannot change (was team-a)`))
	})

	It("admits object lock at creation only, and never a change to it", func(ctx SpecContext) {
		plain := newBucket(ns, "plain", "team-a-plain", "team-a")
		Expect(k8sClient.Create(ctx, plain)).To(Succeed())
		plain.Spec.ObjectLock = &storagev1alpha1.ObjectLock{}
		err := k8sClient.Update(ctx, plain)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "plain" is invalid: spec: Invalid value: ` +
			`objectLock can be set only when the Bucket is created and cannot be removed: S3 sets object lock only when the bucket is created`))

		locked := newBucket(ns, "locked", "team-a-locked", "team-a")
		locked.Spec.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{
			Mode: storagev1alpha1.RetentionGovernance, Days: 7}}
		Expect(k8sClient.Create(ctx, locked)).To(Succeed())
		locked.Spec.ObjectLock.DefaultRetention.Days = 1
		err = k8sClient.Update(ctx, locked)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "locked" is invalid: spec.objectLock: Invalid value: ` +
			`objectLock cannot change: S3 sets object lock only when the bucket is created`))
	})

	It("refuses an expiration with both days and a date, and a date that is not midnight UTC, in the schema", func(ctx SpecContext) {
		b := newBucket(ns, "dated", "team-a-dated", "team-a")
		b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
			{ID: "both", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](1), Date: "2027-01-01"}},
			{ID: "noon", Expiration: &storagev1alpha1.LifecycleExpiration{Date: "2027-01-01T12:00:00Z"}},
		}}
		err := k8sClient.Create(ctx, b)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "dated" is invalid: ` +
			"\n* " + `spec.lifecycle.rules[0].expiration: Invalid value: set exactly one of days and date` +
			"\n* " + `spec.lifecycle.rules[1].expiration.date: Invalid value: "2027-01-01T12:00:00Z": must be a date (2027-01-01) or midnight UTC (2027-01-01T00:00:00Z), as S3 requires`))
	})

	It("validates changed fields on update", func(ctx SpecContext) {
		b := newBucket(ns, "data", "team-a-data", "team-a")
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		b.Spec.GrantWrite = []storagev1alpha1.Grantee{{Type: storagev1alpha1.GranteeTypeEmailAddress, Value: "ops"}}
		err := k8sClient.Update(ctx, b)
		Expect(err).To(HaveOccurred())
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "data" is invalid: spec.grantWrite[0].value: Invalid value: "ops": must be an e-mail address such as user@example.com`))
	})
})

var _ = Describe("Webhook server", func() {
	It("speaks HTTP/1.1 only", func() {
		conn, err := tls.Dial("tcp", webhookAddr, &tls.Config{
			InsecureSkipVerify: true, //nolint:gosec // the protocol is under test, not the certificate
			NextProtos:         []string{"h2", "http/1.1"},
		})
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close() }()
		Expect(conn.ConnectionState().NegotiatedProtocol).To(Equal("http/1.1"))
	})
})
