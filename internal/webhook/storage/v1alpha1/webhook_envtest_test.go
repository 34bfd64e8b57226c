package v1alpha1

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
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
		Expect(got.Spec.ReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyDelete), "deleting a bought Contract stops what it costs")
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
		Expect(c.Spec.ReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyDelete))

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

	It("refuses a region that is not one, and an endpoint the platform does not allow, with their field paths", func(ctx SpecContext) {
		c := newContract(ns, "own")
		c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "own-keys",
			Endpoint: "http://metadata.google.internal/computeMetadata/v1/", Region: "eu-west-1\n[evil]"}}
		err := k8sClient.Create(ctx, c)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(kubectlMessage(err)).To(Equal(`The Contract "own" is invalid: spec.credentials.region: Invalid value: "eu-west-1\n[evil]": ` +
			`a region is letters, digits, '.', '_' and '-', starting with a letter or digit: us-east-1`))
		c.Spec.Credentials.Region = "eu-west-1"
		err = k8sClient.Create(ctx, c)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(kubectlMessage(err)).To(Equal(`The Contract "own" is invalid: spec.credentials.endpoint: Forbidden: ` +
			`http://metadata.google.internal/computeMetadata/v1/ is not on the platform's list of allowed endpoints; ` +
			`the platform allows https://*.amazonaws.com, https://minio.example.com:9000`))
		c.Spec.Credentials.Endpoint = "https://s3.eu-west-1.amazonaws.com"
		Expect(k8sClient.Create(ctx, c)).To(Succeed())
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

	It("admits a good Bucket and stores the default reclaim policy and the finalizer", func(ctx SpecContext) {
		b := newBucket(ns, "data", "team-a-data", "team-a")
		b.Spec.GrantRead = []storagev1alpha1.Grantee{{Type: storagev1alpha1.GranteeTypeURL, Value: "http://acs.amazonaws.com/groups/global/AllUsers"}}
		b.Spec.Policy = policy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/*"}]}`)
		Expect(k8sClient.Create(ctx, b)).To(Succeed())

		var got storagev1alpha1.Bucket
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(b), &got)).To(Succeed())
		Expect(got.Spec.BucketReclaimPolicy).To(Equal(storagev1alpha1.ReclaimPolicyRetain))
		Expect(got.Finalizers).To(ConsistOf(storagev1alpha1.Finalizer), "the finalizer is there from creation, at no write of the controller's")
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
		first := newBucket(ns, "data", "team-a-data", "team-a")
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		// The webhook lists its cache: one created within the cache's lag would pass (accepted;
		// the controller gives the bucket to the first).
		Eventually(func(ctx context.Context) error {
			return server.Cache.Get(ctx, client.ObjectKeyFromObject(first), &storagev1alpha1.Bucket{})
		}).WithContext(ctx).Should(Succeed())
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

	It("refuses ACLs under BucketOwnerEnforced as kubectl prints it, and an ownership S3 does not know in the schema", func(ctx SpecContext) {
		b := newBucket(ns, "enforced", "team-a-enforced", "team-a")
		b.Spec.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
		b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
		err := k8sClient.Create(ctx, b)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "enforced" is invalid: spec.cannedAcl: Invalid value: "public-read": ` +
			`spec.ownershipControls BucketOwnerEnforced turns ACLs off, and S3 refuses every ACL but private (AccessControlListNotSupported): ` +
			`use private and grant access with the policy, or choose ObjectWriter or BucketOwnerPreferred`))

		b.Spec.CannedACL = storagev1alpha1.CannedACLPrivate
		Expect(k8sClient.Create(ctx, b)).To(Succeed())

		odd := newBucket(ns, "odd", "team-a-odd", "team-a")
		odd.Spec.OwnershipControls = "BucketOwnerFullControl"
		err = k8sClient.Create(ctx, odd)
		Expect(kubectlMessage(err)).To(ContainSubstring(`spec.ownershipControls: Unsupported value: "BucketOwnerFullControl": supported values: "BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"`))
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

	It("refuses a KMS key or a bucket key without SSE-KMS, and a management policy it does not know, in the schema", func(ctx SpecContext) {
		b := newBucket(ns, "enc", "team-a-enc", "team-a")
		b.Spec.Encryption = &storagev1alpha1.BucketEncryption{Algorithm: storagev1alpha1.EncryptionSSES3, KMSKeyID: "k1", BucketKeyEnabled: true}
		err := k8sClient.Create(ctx, b)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "enc" is invalid: ` +
			"\n* " + `spec.encryption: Invalid value: kmsKeyId is for SSE-KMS only: SSE-S3 uses keys the S3 service manages` +
			"\n* " + `spec.encryption: Invalid value: bucketKeyEnabled is for SSE-KMS only: a bucket key saves calls to KMS`))

		b.Spec.Encryption = &storagev1alpha1.BucketEncryption{Algorithm: storagev1alpha1.EncryptionSSEKMS, KMSKeyID: "k1", BucketKeyEnabled: true}
		b.Spec.ManagementPolicy = "ReadOnly"
		err = k8sClient.Create(ctx, b)
		Expect(kubectlMessage(err)).To(ContainSubstring(`spec.managementPolicy: Unsupported value: "ReadOnly": supported values: "Manage", "Observe"`))

		b.Spec.ManagementPolicy = ""
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		Expect(b.Spec.ManagementPolicy).To(Equal(storagev1alpha1.ManagementManage), "the default")
	})

	It("refuses a malformed website and notifications with their field paths", func(ctx SpecContext) {
		b := newBucket(ns, "web", "team-a-web", "team-a")
		b.Spec.Website = &storagev1alpha1.BucketWebsite{IndexDocument: "index.html",
			RedirectAllRequestsTo: &storagev1alpha1.WebsiteRedirectAll{HostName: "https://www.example.com"},
			RoutingRules: []storagev1alpha1.WebsiteRoutingRule{{Condition: &storagev1alpha1.WebsiteRoutingCondition{},
				Redirect: storagev1alpha1.WebsiteRoutingRedirect{}}}}
		b.Spec.Notifications = []storagev1alpha1.BucketNotification{{Name: "uploads", Endpoint: "ftp://hooks.example.com/",
			Events: []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:*"}}}
		err := k8sClient.Create(ctx, b)
		// The API server lists the schema's findings in no fixed order.
		Expect(strings.Split(kubectlMessage(err), "\n* ")).To(ConsistOf(`The Bucket "web" is invalid: `,
			`spec.notifications[0].endpoint: Invalid value: "ftp://hooks.example.com/": must be an http:// or https:// URL: http://receiver.example:8080/events`,
			`spec.website: Invalid value: set indexDocument to serve the bucket's objects, or redirectAllRequestsTo to send every request to another host, not both`,
			`spec.website: Invalid value: a website that redirects every request has no errorDocument and no routingRules`,
			`spec.website.redirectAllRequestsTo.hostName: Invalid value: "https://www.example.com": hostName is a host name alone, without a scheme, port or path: www.example.com`,
			`spec.website.routingRules[0].condition: Invalid value: a condition needs keyPrefixEquals, httpErrorCodeReturnedEquals, or both; leave condition out to match every request`,
			`spec.website.routingRules[0].redirect: Invalid value: a redirect needs at least one of hostName, protocol, replaceKeyPrefixWith, replaceKeyWith and httpRedirectCode`))

		By("and values the schema does not know")
		b.Spec.Website = &storagev1alpha1.BucketWebsite{IndexDocument: "index.html", RoutingRules: []storagev1alpha1.WebsiteRoutingRule{{
			Redirect: storagev1alpha1.WebsiteRoutingRedirect{HTTPRedirectCode: "200"}}}}
		b.Spec.Notifications[0].Endpoint, b.Spec.Notifications[0].Events = "http://hooks.example.com/", []storagev1alpha1.NotificationEvent{"s3:ObjectTouched:*"}
		err = k8sClient.Create(ctx, b)
		Expect(strings.Split(kubectlMessage(err), "\n* ")).To(ContainElements(
			`spec.notifications[0].events[0]: Unsupported value: "s3:ObjectTouched:*": supported values: "s3:ObjectCreated:*", "s3:ObjectCreated:Put", `+
				`"s3:ObjectCreated:Post", "s3:ObjectCreated:Copy", "s3:ObjectCreated:CompleteMultipartUpload", "s3:ObjectRemoved:*", "s3:ObjectRemoved:Delete", `+
				`"s3:ObjectRemoved:DeleteMarkerCreated"`,
			`spec.website.routingRules[0].redirect.httpRedirectCode: Invalid value: "200": spec.website.routingRules[0].redirect.httpRedirectCode in body should match '^3[0-9][0-9]$'`))

		By("and, past the schema, notifications S3 would refuse side by side")
		b.Spec.Website = &storagev1alpha1.BucketWebsite{RedirectAllRequestsTo: &storagev1alpha1.WebsiteRedirectAll{HostName: "www.example.com"}}
		b.Spec.Notifications = []storagev1alpha1.BucketNotification{
			{Name: "all", Endpoint: "http://hooks.example.com/", Events: []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:*"}},
			{Name: "jpg", Endpoint: "http://hooks.example.com/", Events: []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:Put"},
				Filter: &storagev1alpha1.NotificationFilter{Suffix: ".jpg"}}}
		err = k8sClient.Create(ctx, b)
		Expect(kubectlMessage(err)).To(Equal(`The Bucket "web" is invalid: spec.notifications[1]: Invalid value: "jpg": ` +
			`shares an event type with spec.notifications[0] and their filters overlap, which S3 refuses (an object would be sent twice): ` +
			`give them different events, or prefixes or suffixes that do not overlap`))
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

func newBucketAccess(ns, name, bucket string, access storagev1alpha1.AccessMode) *storagev1alpha1.BucketAccess {
	return &storagev1alpha1.BucketAccess{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(bucket), Access: access},
	}
}

// warningRecorder keeps the warnings the API server sends, which kubectl prints as
// "Warning: ...".
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (r *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, code int, _, text string) {
	if code != 299 || text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}

func (r *warningRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.warnings
	r.warnings = nil
	return got
}

// warningClient is a client whose requests' warnings land in the returned recorder.
func warningClient() (client.Client, *warningRecorder) {
	GinkgoHelper()
	rec := &warningRecorder{}
	cfg := rest.CopyConfig(server.Config)
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, rec
	c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c, rec
}

var _ = Describe("BucketAccess admission", func() {
	var ns string
	var bucket *storagev1alpha1.Bucket
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newContract(ns, "team-a"))).To(Succeed())
		bucket = newBucket(ns, "data", "team-a-data", "team-a")
		Expect(k8sClient.Create(ctx, bucket)).To(Succeed())
	})

	// setReady writes the Bucket's Ready condition, as its controller would.
	setReady := func(ctx SpecContext) {
		GinkgoHelper()
		meta.SetStatusCondition(&bucket.Status.Conditions, metav1.Condition{
			Type: storagev1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", Message: "The bucket exists"})
		Expect(k8sClient.Status().Update(ctx, bucket)).To(Succeed())
	}

	It("stores the default secretName, and warns while the Bucket is not Ready", func(ctx SpecContext) {
		c, warnings := warningClient()
		Expect(c.Create(ctx, newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly))).To(Succeed())
		Expect(warnings.take()).To(Equal([]string{
			"spec.bucket: Bucket data is not Ready yet: the BucketAccess waits for it (Ready=False, reason BucketNotReady)"}))

		var got storagev1alpha1.BucketAccess
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reader"}, &got)).To(Succeed())
		Expect(got.Spec.SecretName).To(Equal("reader-credentials"))

		setReady(ctx)
		Expect(c.Create(ctx, newBucketAccess(ns, "writer", "data", storagev1alpha1.AccessWriteOnly))).To(Succeed())
		Expect(warnings.take()).To(BeEmpty(), "a Ready Bucket is no reason to warn")
	})

	It("refuses a name too long to label its Secret", func(ctx SpecContext) {
		name := strings.Repeat("a", 64)
		err := k8sClient.Create(ctx, newBucketAccess(ns, name, "data", storagev1alpha1.AccessReadOnly))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "` + name + `" is invalid: metadata.name: Invalid value: "` + name + `": ` +
			`a BucketAccess's name is at most 63 characters: it is the value of the storage.osm.dev/bucket-access label on its Secret`))
	})

	It("refuses a Bucket that is not there, or is being deleted", func(ctx SpecContext) {
		err := k8sClient.Create(ctx, newBucketAccess(ns, "reader", "photos", storagev1alpha1.AccessReadOnly))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.bucket: Invalid value: "photos": no Bucket of this name in namespace "` + ns + `"`))

		bucket.Finalizers = []string{"test.osm.dev/hold"}
		Expect(k8sClient.Update(ctx, bucket)).To(Succeed())
		Expect(k8sClient.Delete(ctx, bucket)).To(Succeed())
		err = k8sClient.Create(ctx, newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly))
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.bucket: Invalid value: "data": the Bucket is being deleted`))
	})

	It("refuses the Secret of the Contract, and of another BucketAccess", func(ctx SpecContext) {
		a := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		a.Spec.SecretName = "team-a-credentials"
		err := k8sClient.Create(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.secretName: Invalid value: "team-a-credentials": ` +
			`is the Secret of Contract team-a, which holds the account's own keys: credentials written there would overwrite them; choose another secretName`))

		Expect(k8sClient.Create(ctx, newBucketAccess(ns, "writer", "data", storagev1alpha1.AccessReadWrite))).To(Succeed())
		a.Spec.SecretName = "writer-credentials"
		err = k8sClient.Create(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.secretName: Invalid value: "writer-credentials": ` +
			`BucketAccess writer in this namespace already writes its credentials to this Secret, and exactly one may; choose another secretName`))
	})

	It("refuses a secretName no Secret can have", func(ctx SpecContext) {
		a := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		a.Spec.SecretName = "Reader_Keys"
		err := k8sClient.Create(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.secretName: Invalid value: "Reader_Keys": must be a valid Secret name: ` +
			`a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character ` +
			`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`))
	})

	It("refuses a rotation that is too short or revokes keys too early or too late, every problem at once", func(ctx SpecContext) {
		a := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 30 * time.Second}, Overlap: &metav1.Duration{}}
		err := k8sClient.Create(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: ` +
			"\n* " + `spec.rotation.period: Invalid value: "30s": must be at least 1m0s: a new key needs time to reach its consumers before the next one replaces it` +
			"\n* " + `spec.rotation.overlap: Invalid value: "0s": must be more than 0: without an overlap the previous key is revoked the moment the new one is written, ` +
			`and consumers still using it are refused until they read the Secret again; leave overlap out for the default, a tenth of period and at most 1h`))

		a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour}, Overlap: &metav1.Duration{Duration: time.Hour}}
		err = k8sClient.Create(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.rotation.overlap: Invalid value: "1h0m0s": ` +
			`must be shorter than period (1h0m0s): the previous key must be revoked before the next rotation replaces the current one`))

		a.Spec.Rotation.Overlap.Duration = 5 * time.Minute
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		a.Spec.Rotation.Period.Duration = time.Minute
		err = k8sClient.Update(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.rotation.overlap: Invalid value: "5m0s": ` +
			`must be shorter than period (1m0s): the previous key must be revoked before the next rotation replaces the current one`))
	})

	// In a bucket policy "$" starts a variable and "*", "?" are wildcards: a prefix holding one
	// would widen the key, so the schema refuses them, with ".." and a leading "/".
	It("refuses a prefix that would not mean what it says, every problem at once, and stores the default format", func(ctx SpecContext) {
		a := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		a.Spec.Prefix = "/web/../${aws:username}*"
		err := k8sClient.Create(ctx, a)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: ` +
			"\n* " + `spec.prefix: Invalid value: "/web/../${aws:username}*": prefix may not contain '..'` +
			"\n* " + `spec.prefix: Invalid value: "/web/../${aws:username}*": prefix may not start with '/'` +
			"\n* " + `spec.prefix: Invalid value: "/web/../${aws:username}*": prefix may not contain '$', '*' or '?': in a bucket policy they are variables and wildcards`))

		a.Spec.Prefix = "web/2026..11/"
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(ContainSubstring(`spec.prefix: Invalid value: "web/2026..11/": prefix may not contain '..'`))
		a.Spec.Prefix = "web/\n[default]"
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(ContainSubstring(`spec.prefix: Invalid value: "web/\n[default]": may not contain control characters (a newline, a tab, ...)`))
		a.Spec.Prefix = "web/"
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		Expect(a.Spec.Formats).To(Equal([]storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv}))
		a.Spec.Formats = []storagev1alpha1.SecretFormat{"env", "ini"}
		Expect(kubectlMessage(k8sClient.Update(ctx, a))).To(ContainSubstring(`spec.formats[1]: Unsupported value: "ini": supported values: "env", "aws-files", "cosi", "obc", "rclone", "s3cfg"`))
	})

	// The CRD's CEL rules run before validating webhooks: theirs is the message for a change
	// between two values. The webhook catches setting a secretName where the default was meant,
	// which the CEL rule cannot see (it compares two set values only).
	It("refuses a change of bucket or secretName", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, newBucket(ns, "other", "team-a-other", "team-a"))).To(Succeed())
		a := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		a.Spec.Bucket = "other"
		err := k8sClient.Update(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.bucket: Invalid value: "other": bucket cannot change (was data)`))

		a.Spec.Bucket = "data"
		a.Spec.SecretName = "reader-keys"
		err = k8sClient.Update(ctx, a)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "reader" is invalid: spec.secretName: Invalid value: "reader-keys": secretName cannot change (was reader-credentials)`))

		// Made with generateName, it has no secretName until its first update.
		gen := newBucketAccess(ns, "", "data", storagev1alpha1.AccessReadOnly)
		gen.GenerateName = "gen-"
		Expect(k8sClient.Create(ctx, gen)).To(Succeed())
		Expect(gen.Spec.SecretName).To(BeEmpty())
		gen.Spec.SecretName = "elsewhere"
		err = k8sClient.Update(ctx, gen)
		Expect(kubectlMessage(err)).To(Equal(`The BucketAccess "` + gen.Name + `" is invalid: spec.secretName: Invalid value: "elsewhere": ` +
			`cannot change (was unset, which is "` + gen.Name + `-credentials")`))
	})

	It("defaults secretName of a generated name on the first update", func(ctx SpecContext) {
		a := newBucketAccess(ns, "", "data", storagev1alpha1.AccessReadOnly)
		a.GenerateName = "gen-"
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		Expect(a.Spec.SecretName).To(BeEmpty())
		a.Labels = map[string]string{"touched": "yes"}
		Expect(k8sClient.Update(ctx, a)).To(Succeed())
		Expect(a.Spec.SecretName).To(Equal(a.Name + "-credentials"))
	})

	// The CRD keeps the two forms apart before the webhooks run: exactly one of spec.bucket and
	// spec.buckets, access and prefix only with the first, and no switch between them.
	It("takes several Buckets in spec.buckets, each named once, and keeps the two forms apart", func(ctx SpecContext) {
		setReady(ctx)
		Expect(k8sClient.Create(ctx, newBucket(ns, "logs", "team-a-logs", "team-a"))).To(Succeed())
		item := func(name string, access storagev1alpha1.AccessMode, prefix storagev1alpha1.ObjectPrefix) storagev1alpha1.AccessBucket {
			return storagev1alpha1.AccessBucket{Name: storagev1alpha1.BucketName(name), Access: access, Prefix: prefix}
		}
		a := newBucketAccess(ns, "app", "", "")
		a.Spec.Buckets = []storagev1alpha1.AccessBucket{item("data", storagev1alpha1.AccessReadOnly, "")}
		a.Spec.Bucket, a.Spec.Access = "data", storagev1alpha1.AccessReadOnly
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(Equal(`The BucketAccess "app" is invalid: ` +
			`spec: Invalid value: name either spec.bucket (one Bucket) or spec.buckets (several), not both`))
		a.Spec.Bucket = ""
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(Equal(`The BucketAccess "app" is invalid: ` +
			`spec: Invalid value: spec.access goes with spec.bucket; with spec.buckets each item says its access`))

		a.Spec.Bucket, a.Spec.Access = "", ""
		a.Spec.Buckets = []storagev1alpha1.AccessBucket{item("data", storagev1alpha1.AccessReadOnly, ""), item("data", storagev1alpha1.AccessReadWrite, "/a*")}
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(Equal(`The BucketAccess "app" is invalid: ` +
			"\n* " + `spec.buckets[1]: Duplicate value: {"name":"data"}` +
			"\n* " + `spec.buckets[1].prefix: Invalid value: "/a*": prefix may not start with '/'` +
			"\n* " + `spec.buckets[1].prefix: Invalid value: "/a*": prefix may not contain '$', '*' or '?': in a bucket policy they are variables and wildcards`))

		a.Spec.Buckets = []storagev1alpha1.AccessBucket{item("data", storagev1alpha1.AccessReadOnly, ""), item("logs", storagev1alpha1.AccessWriteOnly, "web/")}
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		Expect(a.Spec.SecretName).To(Equal("app-credentials"))

		// Items come and go; the form stays.
		a.Spec.Buckets = a.Spec.Buckets[1:]
		Expect(k8sClient.Update(ctx, a)).To(Succeed())
		a.Spec.Buckets = append(a.Spec.Buckets, item("missing", storagev1alpha1.AccessReadOnly, ""))
		Expect(kubectlMessage(k8sClient.Update(ctx, a))).To(Equal(`The BucketAccess "app" is invalid: ` +
			`spec.buckets[1].name: Invalid value: "missing": no Bucket of this name in namespace "` + ns + `"`))
		a.Spec.Buckets, a.Spec.Bucket, a.Spec.Access = nil, "logs", storagev1alpha1.AccessWriteOnly
		Expect(kubectlMessage(k8sClient.Update(ctx, a))).To(Equal(`The BucketAccess "app" is invalid: ` +
			`spec: Invalid value: a BucketAccess keeps its form: spec.bucket cannot become spec.buckets or the reverse (make a new BucketAccess)`))
	})

	// The CRD's rules keep ServiceAccount authentication to what a role can be: a ServiceAccount
	// of the namespace, the env format only, no rotation, and no switch from a key.
	It("takes ServiceAccount authentication with a ServiceAccount of the namespace, and keeps it", func(ctx SpecContext) {
		a := newBucketAccess(ns, "keyless", "data", storagev1alpha1.AccessReadOnly)
		a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(Equal(`The BucketAccess "keyless" is invalid: ` +
			`spec: Invalid value: spec.authentication ServiceAccount needs spec.serviceAccountName: the ServiceAccount, in this namespace, whose tokens assume the role`))
		a.Spec.ServiceAccountName = "other-ns:app"
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(Equal(`The BucketAccess "keyless" is invalid: ` +
			`spec.serviceAccountName: Invalid value: "other-ns:app": must be the name of a ServiceAccount in this namespace: ` +
			`a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)`))
		a.Spec.ServiceAccountName = "app"
		a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, "s3cfg"}
		a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 720 * time.Hour}}
		Expect(kubectlMessage(k8sClient.Create(ctx, a))).To(Equal(`The BucketAccess "keyless" is invalid: ` +
			"\n* " + `spec: Invalid value: with spec.authentication ServiceAccount the Secret holds only the env format: ` +
			`the other formats (aws-files, cosi, obc, rclone, s3cfg) are files of a key pair, and there is no key` +
			"\n* " + `spec: Invalid value: spec.rotation goes with spec.authentication Key: with ServiceAccount there is no key to rotate, the credentials STS returns expire by themselves`))
		a.Spec.Formats, a.Spec.Rotation = nil, nil
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		Expect(a.Spec.Formats).To(Equal([]storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv}))

		a.Spec.ServiceAccountName = "worker"
		Expect(k8sClient.Update(ctx, a)).To(Succeed())
		a.Spec.Authentication = storagev1alpha1.AuthenticationKey
		Expect(kubectlMessage(k8sClient.Update(ctx, a))).To(ContainSubstring(
			`spec: Invalid value: spec.authentication cannot change: a key and a role are different credentials (make a new BucketAccess)`))

		key := newBucketAccess(ns, "keyed", "data", storagev1alpha1.AccessReadOnly)
		key.Spec.ServiceAccountName = "app"
		Expect(kubectlMessage(k8sClient.Create(ctx, key))).To(Equal(`The BucketAccess "keyed" is invalid: ` +
			`spec: Invalid value: spec.serviceAccountName goes with spec.authentication: ServiceAccount`))
		key.Spec.ServiceAccountName = ""
		Expect(k8sClient.Create(ctx, key)).To(Succeed())
		Expect(key.Spec.Authentication).To(Equal(storagev1alpha1.AuthenticationKey))
	})

	It("lets a BucketAccess whose Bucket is gone be updated", func(ctx SpecContext) {
		a := newBucketAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		Expect(k8sClient.Delete(ctx, bucket)).To(Succeed())
		// No controller runs here to let the Bucket go: take its finalizer off as it would.
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bucket), bucket)).To(Succeed())
		bucket.Finalizers = nil
		Expect(k8sClient.Update(ctx, bucket)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(bucket), bucket))
		}).Should(BeTrue())
		a.Annotations = map[string]string{storagev1alpha1.RotateKeyAnnotation: "now"}
		a.Spec.Access = storagev1alpha1.AccessReadWrite
		Expect(k8sClient.Update(ctx, a)).To(Succeed())
	})
})

// The BucketAccess sample, applied with what it needs as `kubectl apply -f config/samples/`
// would (file by file, in name order), passes the CRD schema and the webhooks, with the warning
// a user sees while its Bucket is not Ready.
var _ = Describe("The BucketAccess sample", func() {
	It("is admitted after the Contract and Bucket it needs", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})).To(Succeed())
		c, warnings := warningClient()
		root, err := localenv.ModuleRoot()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range []string{"00-contract.yaml", "10-bucket-private.yaml", "20-bucketaccess-readonly.yaml"} {
			raw, err := os.ReadFile(filepath.Join(root, "config", "samples", f))
			Expect(err).NotTo(HaveOccurred())
			obj := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(raw, &obj.Object)).To(Succeed(), f)
			Expect(c.Create(ctx, obj)).To(Succeed(), f)
		}
		Expect(warnings.take()).To(Equal([]string{
			"spec.bucket: Bucket private is not Ready yet: the BucketAccess waits for it (Ready=False, reason BucketNotReady)"}))

		var got storagev1alpha1.BucketAccess
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "private-reader"}, &got)).To(Succeed())
		Expect(got.Spec).To(Equal(storagev1alpha1.BucketAccessSpec{
			Bucket: "private", Access: storagev1alpha1.AccessReadOnly, SecretName: "private-reader-credentials",
			Formats: []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv}, Authentication: storagev1alpha1.AuthenticationKey}))
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
