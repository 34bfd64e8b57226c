package rgw_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

var _ = Describe("Contract key rotation on Ceph RGW", func() {
	It("replaces the key, keeps the old one working through the overlap, then revokes it, with Buckets Ready throughout", func(ctx SpecContext) {
		const overlap = 8 * time.Second
		ns := newNamespace(ctx)
		c := &storagev1alpha1.Contract{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
			Spec: storagev1alpha1.ContractSpec{Plan: "standard", KeyRotation: &storagev1alpha1.KeyRotation{
				Period: metav1.Duration{Duration: 720 * time.Hour}, Overlap: &metav1.Duration{Duration: overlap}}},
		}
		Expect(k8s.Create(ctx, c)).To(Succeed())
		ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		secretCreds := func() (string, string) {
			GinkgoHelper()
			s := &corev1.Secret{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, s)).To(Succeed())
			return string(s.Data["AWS_ACCESS_KEY_ID"]), string(s.Data["AWS_SECRET_ACCESS_KEY"])
		}
		oldID, oldSecret := secretCreds()
		oldKey := localenv.NewS3Client(c.Status.Endpoint, c.Status.Region, oldID, oldSecret)
		keyRotation := func(g Gomega) *metav1.Condition {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			cond := meta.FindStatusCondition(c.Status.Conditions, storagev1alpha1.KeyRotationCondition)
			g.Expect(cond).NotTo(BeNil(), "no KeyRotation condition")
			return cond
		}
		Eventually(func(g Gomega) {
			g.Expect(keyRotation(g).Reason).To(Equal(storagev1alpha1.ReasonKeyRotationScheduled))
		}).Should(Succeed())

		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
			Spec: storagev1alpha1.BucketSpec{BucketName: "data-" + ns, ContractName: "team", BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })

		By("losing the provider's first answer to the new key, so the rotation must ask again with the same idempotency key")
		addKeyPath := "/v1/contracts/" + c.Status.ContractID + "/keys"
		var lost atomic.Bool
		stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			if r.Method == http.MethodPost && r.URL.Path == addKeyPath && lost.CompareAndSwap(false, true) {
				next.ServeHTTP(discard{}, r)
				panic(http.ErrAbortHandler)
			}
			next.ServeHTTP(w, r)
		})
		DeferCleanup(func() { stk.ContractAPI.SetHook(nil) })

		By("asking for a new key with the annotation")
		patch := client.MergeFrom(c.DeepCopy())
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.RotateKeyAnnotation, "leaked-1")
		Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
		var newID, newSecret string
		Eventually(func(g Gomega) {
			g.Expect(keyRotation(g).Reason).To(Equal(storagev1alpha1.ReasonKeyRotated))
			newID, newSecret = secretCreds()
			g.Expect(newID).NotTo(Equal(oldID))
		}).Should(Succeed())
		rotatedAt := time.Now()
		Expect(lost.Load()).To(BeTrue(), "the hook never saw the new key asked for")
		Expect(c.Status.AccessKeyID).To(Equal(newID))
		Expect(c.Status.RotatedFor).To(Equal("leaked-1"))
		Expect(c.Status.PendingKey).To(BeNil())
		Expect(c.Status.RetiringKeys).To(HaveLen(1))
		Expect(c.Status.RetiringKeys[0].AccessKeyID).To(Equal(oldID))
		asked := stk.ContractAPI.Calls(func(call stack.Call) bool { return call.Method == http.MethodPost && call.Path == addKeyPath })
		Expect(len(asked)).To(BeNumerically(">=", 2), "the lost answer was asked for again")
		for _, call := range asked {
			Expect(call.IdempotencyKey).To(Equal(string(c.UID)+"-key-1"), "every attempt of one rotation asks with one key")
		}

		By("having made exactly one new key at the provider, and both keys working during the overlap")
		api, err := contractapi.NewClientWithResponses(stk.ContractAPI.URL, contractapi.WithBearerToken(stk.ContractAPI.Token))
		Expect(err).NotTo(HaveOccurred())
		providerKeys := func(g Gomega) []string {
			resp, err := api.GetContractWithResponse(ctx, c.Status.ContractID)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(resp.JSON200).NotTo(BeNil())
			var ids []string
			for _, k := range resp.JSON200.AccessKeys {
				ids = append(ids, k.AccessKeyId)
			}
			return ids
		}
		Expect(providerKeys(Default)).To(Equal([]string{oldID, newID}))
		newKey := localenv.NewS3Client(c.Status.Endpoint, c.Status.Region, newID, newSecret)
		_, err = newKey.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.Spec.BucketName), Key: aws.String("with-the-new-key"),
			Body: strings.NewReader("new")})
		Expect(err).NotTo(HaveOccurred())
		_, err = oldKey.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.Spec.BucketName), Key: aws.String("with-the-old-key"),
			Body: strings.NewReader("old")})
		Expect(err).NotTo(HaveOccurred(), "the replaced key must work until its overlap has passed")

		By("keeping the Bucket Ready through the overlap")
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			cond := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", cond.Reason, cond.Message)
		}, time.Until(rotatedAt.Add(overlap))).Should(Succeed())

		By("revoking the replaced key once the overlap has passed")
		Eventually(func(g Gomega) {
			_, err := oldKey.ListBuckets(ctx, &s3.ListBucketsInput{})
			g.Expect(err).To(HaveOccurred(), "the replaced key still works")
			g.Expect(objectstore.ErrorCode(err)).To(Equal("InvalidAccessKeyId"))
		}).Should(Succeed())
		Expect(time.Now()).To(BeTemporally(">=", rotatedAt.Add(overlap-time.Second)), "revoked before the overlap had passed")
		Eventually(func(g Gomega) {
			g.Expect(keyRotation(g).Reason).To(Equal(storagev1alpha1.ReasonKeyRotated))
			g.Expect(c.Status.RetiringKeys).To(BeEmpty())
			g.Expect(providerKeys(g)).To(Equal([]string{newID}))
		}).Should(Succeed())
		_, err = newKey.ListBuckets(ctx, &s3.ListBucketsInput{})
		Expect(err).NotTo(HaveOccurred())

		By("keeping the Bucket managed with the new key: a spec change after the revocation is applied")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
			return k8s.Update(ctx, b)
		}).Should(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		acl, err := newKey.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String(b.Spec.BucketName)})
		Expect(err).NotTo(HaveOccurred())
		Expect(acl.Grants).To(ContainElement(HaveField("Grantee.URI", HaveValue(Equal(objectstore.GroupAllUsers)))))

		By("saying each step in an event, and never the secret")
		var list eventsv1.EventList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		reasons := map[string]string{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "Contract" {
				reasons[e.Reason] = e.Note
			}
			Expect(e.Note).NotTo(ContainSubstring(newSecret))
			Expect(e.Note).NotTo(ContainSubstring(oldSecret))
		}
		Expect(reasons).To(HaveKeyWithValue("KeyRotationStarted", ContainSubstring(`annotation storage.osm.dev/rotate-key is "leaked-1"`)))
		Expect(reasons).To(HaveKeyWithValue("KeyRotated", MatchRegexp(`^Wrote new key `+newID+` to Secret team-credentials; the key it replaced, `+
			oldID+`, works until \S+, then it is revoked$`)))
		Expect(reasons).To(HaveKeyWithValue("KeyRevoked", "Revoked key "+oldID+", replaced in Secret team-credentials by key "+newID))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		st, err := json.Marshal(c.Status)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(st)).NotTo(ContainSubstring(newSecret), "the secret is in the status")
	})
})

// discard is a ResponseWriter whose answer nobody reads: the client sees the connection drop.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
