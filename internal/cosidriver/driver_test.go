package cosidriver_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

func TestDriverGetInfoNamesTheDriver(t *testing.T) {
	g := newG(t)
	info, err := env.identity.DriverGetInfo(testContext(t), &cosi.DriverGetInfoRequest{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Name).To(Equal(cosidriver.DefaultName))
}

// The sidecar retries every call that failed, also one that succeeded but whose answer was
// lost: a second call answers as the first, and the bucket is made once, tagged as the driver's.
func TestCreateBucketTwiceAnswersTheSame(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	req := &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()}
	first, err := env.provisioner.DriverCreateBucket(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(first.BucketId).To(Equal(env.contract.Namespace + "/" + env.contract.Name + "/" + name))
	g.Expect(first.BucketInfo.GetS3().GetRegion()).To(Equal(env.account.Region))
	second, err := env.provisioner.DriverCreateBucket(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.BucketId).To(Equal(first.BucketId))

	g.Expect(bucketExists(ctx, name)).To(BeTrue())
	tags, err := accountS3().GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(name)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tags.TagSet).To(ContainElement(s3types.Tag{Key: aws.String(cosidriver.OwnerTag), Value: aws.String(name)}))
}

// A bucket of the asked name that the driver did not make is not taken over: the account's own
// bucket is AlreadyExists, and the message says how to use it (a static Bucket).
func TestCreateBucketRefusesABucketItDidNotMake(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	_, err := accountS3().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(status.Code(err)).To(Equal(codes.AlreadyExists), "%v", err)
	g.Expect(status.Convert(err).Message()).To(ContainSubstring("existingBucketID"))

	// Nor deleted under deletionPolicy: Delete.
	_, err = env.provisioner.DriverDeleteBucket(ctx, &cosi.DriverDeleteBucketRequest{BucketId: env.contract.Namespace + "/" + env.contract.Name + "/" + name})
	g.Expect(status.Code(err)).To(Equal(codes.FailedPrecondition), "%v", err)
	g.Expect(bucketExists(ctx, name)).To(BeTrue())
}

// The same name asked of another Contract is the spec's "same name, other parameters":
// AlreadyExists, and the bucket stays its first account's.
func TestCreateBucketOfAnotherContractIsAlreadyExists(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	other, err := buyContract(ctx, env.stk.Client)
	g.Expect(err).NotTo(HaveOccurred())
	name := bucketName(t)
	_, err = env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name,
		Parameters: map[string]string{cosidriver.ParamContractNamespace: other.Namespace, cosidriver.ParamContractName: other.Name}})
	g.Expect(status.Code(err)).To(Equal(codes.AlreadyExists), "%v", err)
	g.Expect(bucketExists(ctx, name)).To(BeTrue())
}

// Parameters that cannot work are InvalidArgument with a message naming what is wrong; a
// Contract that does not exist is FailedPrecondition.
func TestBadParametersAreRefusedClearly(t *testing.T) {
	ctx := testContext(t)
	bucketOf := func() string { return env.contract.Namespace + "/" + env.contract.Name + "/" + bucketName(t) }
	for _, tc := range []struct {
		name    string
		call    func() error
		code    codes.Code
		message string
	}{
		{"no contract named", func() error {
			_, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: bucketName(t),
				Parameters: map[string]string{cosidriver.ParamContractNamespace: env.contract.Namespace}})
			return err
		}, codes.InvalidArgument, "contractName missing"},
		{"unknown parameter", func() error {
			params := classParams()
			params["contract"] = "x"
			_, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: bucketName(t), Parameters: params})
			return err
		}, codes.InvalidArgument, "unknown parameters contract"},
		{"name no bucket can have", func() error {
			_, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: "Photos_2024", Parameters: classParams()})
			return err
		}, codes.InvalidArgument, "lowercase"},
		{"contract that does not exist", func() error {
			_, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: bucketName(t),
				Parameters: map[string]string{cosidriver.ParamContractNamespace: env.contract.Namespace, cosidriver.ParamContractName: "nope"}})
			return err
		}, codes.FailedPrecondition, "does not exist"},
		{"access mode unknown", func() error {
			_, err := env.provisioner.DriverGrantBucketAccess(ctx, &cosi.DriverGrantBucketAccessRequest{BucketId: bucketOf(), Name: "ba-1",
				AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: "Admin"}})
			return err
		}, codes.InvalidArgument, `access is "Admin"`},
		{"IAM authentication", func() error {
			_, err := env.provisioner.DriverGrantBucketAccess(ctx, &cosi.DriverGrantBucketAccessRequest{BucketId: bucketOf(), Name: "ba-1",
				AuthenticationType: cosi.AuthenticationType_IAM, Parameters: map[string]string{cosidriver.ParamAccess: "ReadOnly"}})
			return err
		}, codes.InvalidArgument, "authenticationType: Key"},
		{"bucket id of another shape", func() error {
			_, err := env.provisioner.DriverDeleteBucket(ctx, &cosi.DriverDeleteBucketRequest{BucketId: "photos"})
			return err
		}, codes.InvalidArgument, "<contractNamespace>/<contractName>/<bucket>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newG(t)
			err := tc.call()
			g.Expect(status.Code(err)).To(Equal(tc.code), "%v", err)
			g.Expect(status.Convert(err).Message()).To(ContainSubstring(tc.message))
		})
	}
}

// Each access mode's key does what the mode allows and nothing more; granting twice answers the
// same principal and key pair; revoking one access (twice) stops its key and leaves the others.
func TestGrantAndRevokeAccess(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	created, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(put(ctx, accountS3(), name, "existing.txt", "there before")).To(Succeed())

	grant := func(access, accessName string) *cosi.DriverGrantBucketAccessResponse {
		req := &cosi.DriverGrantBucketAccessRequest{BucketId: created.BucketId, Name: accessName,
			AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: access}}
		first, err := env.provisioner.DriverGrantBucketAccess(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(first.AccountId).NotTo(BeEmpty())
		g.Expect(first.Credentials).To(HaveKey("s3"))
		second, err := env.provisioner.DriverGrantBucketAccess(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(second.AccountId).To(Equal(first.AccountId))
		g.Expect(second.Credentials["s3"].Secrets).To(Equal(first.Credentials["s3"].Secrets))
		g.Expect(first.Credentials["s3"].Secrets).To(HaveKeyWithValue("endpoint", env.account.Endpoint))
		return first
	}
	keyOf := func(r *cosi.DriverGrantBucketAccessResponse) *s3.Client {
		s := r.Credentials["s3"].Secrets
		return s3With(s["accessKeyID"], s["accessSecretKey"])
	}
	ro, rw, wo := grant("ReadOnly", "ba-ro"), grant("ReadWrite", "ba-rw"), grant("WriteOnly", "ba-wo")
	reader, writer, backup := keyOf(ro), keyOf(rw), keyOf(wo)

	g.Expect(get(ctx, reader, name, "existing.txt")).To(Equal("there before"))
	g.Expect(list(ctx, reader, name)).To(Succeed())
	err = put(ctx, reader, name, "by-reader.txt", "x")
	g.Expect(refused(err)).To(BeTrue(), "a ReadOnly key wrote: %v", err)

	g.Expect(put(ctx, writer, name, "by-writer.txt", "y")).To(Succeed())
	g.Expect(get(ctx, writer, name, "by-writer.txt")).To(Equal("y"))

	g.Expect(put(ctx, backup, name, "by-backup.txt", "z")).To(Succeed())
	_, err = get(ctx, backup, name, "existing.txt")
	g.Expect(refused(err)).To(BeTrue(), "a WriteOnly key read: %v", err)

	revoke := &cosi.DriverRevokeBucketAccessRequest{BucketId: created.BucketId, AccountId: ro.AccountId}
	_, err = env.provisioner.DriverRevokeBucketAccess(ctx, revoke)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = env.provisioner.DriverRevokeBucketAccess(ctx, revoke)
	g.Expect(err).NotTo(HaveOccurred(), "a second revoke of the same access")
	g.Eventually(func() bool {
		_, err := get(ctx, reader, name, "existing.txt")
		return refused(err)
	}).Should(BeTrue(), "the revoked ReadOnly key still reads")
	g.Expect(get(ctx, writer, name, "by-backup.txt")).To(Equal("z"), "revoking one access took another's")
	g.Expect(put(ctx, backup, name, "by-backup-2.txt", "z")).To(Succeed())

	for _, r := range []*cosi.DriverGrantBucketAccessResponse{rw, wo} {
		_, err = env.provisioner.DriverRevokeBucketAccess(ctx, &cosi.DriverRevokeBucketAccessRequest{BucketId: created.BucketId, AccountId: r.AccountId})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Eventually(func() bool { return refused(put(ctx, writer, name, "late.txt", "w")) }).Should(BeTrue())
	policy, err := accountS3().GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(name)})
	g.Expect(err).To(HaveOccurred(), "the bucket kept a policy after every access was revoked: %v", policy)

	// Each principal call names the Contract's namespace, the tenant the provider budgets.
	calls := env.stk.ContractAPI.Calls(func(c stack.Call) bool { return strings.Contains(c.Path, "/principals") })
	g.Expect(calls).NotTo(BeEmpty())
	for _, c := range calls {
		g.Expect(c.Tenant).To(Equal(env.contract.Namespace), "%s %s", c.Method, c.Path)
	}
}

// The contract API made the principal but its answer was lost: the driver says Unavailable, and
// the sidecar's retry gets that same principal, not a second one.
func TestGrantAfterTheContractAPIsAnswerWasLost(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	created, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())

	var lost atomic.Int32
	env.stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodPost && lost.CompareAndSwap(0, 1) {
			// The server makes the principal; what reaches the driver is an outage, not its
			// answer. (Aborting the connection instead would be retried by net/http itself,
			// which retries requests that carry an Idempotency-Key.)
			next.ServeHTTP(&discard{header: http.Header{}}, r)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
	t.Cleanup(func() { env.stk.ContractAPI.SetHook(nil) })

	req := &cosi.DriverGrantBucketAccessRequest{BucketId: created.BucketId, Name: "ba-lost",
		AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: "ReadWrite"}}
	_, err = env.provisioner.DriverGrantBucketAccess(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.Unavailable), "%v", err)
	g.Expect(lost.Load()).To(Equal(int32(1)))
	got, err := env.provisioner.DriverGrantBucketAccess(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())

	principals, err := env.stk.ContractAPI.Principals()
	g.Expect(err).NotTo(HaveOccurred())
	key := principalKeyOf(principals, got.AccountId)
	g.Expect(key).NotTo(BeEmpty())
	var ids []string
	for _, p := range principals {
		if p.IdempotencyKey == key {
			ids = append(ids, p.ID)
		}
	}
	g.Expect(ids).To(ConsistOf(got.AccountId), "one principal for one access")
	s := got.Credentials["s3"].Secrets
	g.Expect(put(ctx, s3With(s["accessKeyID"], s["accessSecretKey"]), name, "after-lost.txt", "ok")).To(Succeed())
}

func principalKeyOf(principals []contractserver.PrincipalSummary, id string) string {
	for _, p := range principals {
		if p.ID == id {
			return p.IdempotencyKey
		}
	}
	return ""
}

// discard is a ResponseWriter whose answer goes nowhere: the server did the work, the client
// hears nothing.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// When the contract API is down the driver says Unavailable, which the sidecar retries.
func TestGrantWhileTheContractAPIIsDownIsUnavailable(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	created, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	env.stk.ContractAPI.Stop()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.stk.ContractAPI.Start()
		}
	})
	req := &cosi.DriverGrantBucketAccessRequest{BucketId: created.BucketId, Name: "ba-down",
		AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: "ReadOnly"}}
	_, err = env.provisioner.DriverGrantBucketAccess(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.Unavailable), "%v", err)
	g.Expect(env.stk.ContractAPI.Start()).To(Succeed())
	restarted = true
	_, err = env.provisioner.DriverGrantBucketAccess(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
}

// Deleting twice succeeds twice; a bucket that still holds objects is never emptied.
func TestDeleteBucket(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	created, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(put(ctx, accountS3(), name, "keep.txt", "data")).To(Succeed())

	req := &cosi.DriverDeleteBucketRequest{BucketId: created.BucketId}
	_, err = env.provisioner.DriverDeleteBucket(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.FailedPrecondition), "%v", err)
	g.Expect(status.Convert(err).Message()).To(ContainSubstring("not empty"))
	g.Expect(get(ctx, accountS3(), name, "keep.txt")).To(Equal("data"))

	_, err = accountS3().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String("keep.txt")})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = env.provisioner.DriverDeleteBucket(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bucketExists(ctx, name)).To(BeFalse())
	_, err = env.provisioner.DriverDeleteBucket(ctx, req)
	g.Expect(err).NotTo(HaveOccurred(), "deleting a bucket already gone")
}
