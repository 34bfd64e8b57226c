package storage_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
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
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

var _ = Describe("Contract", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	secretOf := func(ctx SpecContext, c *storagev1alpha1.Contract) *corev1.Secret {
		GinkgoHelper()
		s := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, s)).To(Succeed())
		return s
	}
	providerContract := func(ctx SpecContext, id string) *contractapi.Contract {
		GinkgoHelper()
		resp, err := api.GetContractWithResponse(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.JSON200).NotTo(BeNil(), "GET %s: HTTP %d %s", id, resp.StatusCode(), resp.Body)
		return resp.JSON200
	}
	createsFor := func(c *storagev1alpha1.Contract, status int) int {
		return len(stk.ContractAPI.Calls(func(call stack.Call) bool {
			return call.Method == http.MethodPost && call.IdempotencyKey == string(c.UID) && call.Status == status
		}))
	}

	It("becomes Ready with working credentials in a Secret", func(ctx SpecContext) {
		c := newContract(ns, "team-a")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)

		By("reporting what the provider sold")
		Expect(c.Status.ContractID).NotTo(BeEmpty())
		Expect(c.Status.State).To(Equal("active"))
		Expect(c.Status.Endpoint).To(Equal(stk.S3.Endpoint))
		Expect(c.Status.Region).To(Equal(stk.S3.Region))
		Expect(c.Status.Plan).To(Equal("standard"))
		Expect(c.Status.SecretName).To(Equal("team-a-credentials"))
		Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		Expect(c.Finalizers).To(ContainElement("storage.osm.dev/finalizer"))
		Expect(providerContract(ctx, c.Status.ContractID).State).To(Equal(contractapi.Active))

		By("writing the four standard S3 variables into a Secret the Contract owns")
		s := secretOf(ctx, c)
		Expect(s.Data).To(HaveKeyWithValue("AWS_ENDPOINT_URL", []byte(stk.S3.Endpoint)))
		Expect(s.Data).To(HaveKeyWithValue("AWS_REGION", []byte(stk.S3.Region)))
		Expect(s.Data).To(HaveKey("AWS_ACCESS_KEY_ID"))
		Expect(s.Data).To(HaveKey("AWS_SECRET_ACCESS_KEY"))
		Expect(s.Labels).To(HaveKeyWithValue("storage.osm.dev/contract", "team-a"))
		Expect(metav1.IsControlledBy(s, c)).To(BeTrue(), "owner references: %v", s.OwnerReferences)

		By("handing out keys that really work on the S3 endpoint")
		s3c := localenv.NewS3Client(string(s.Data["AWS_ENDPOINT_URL"]), string(s.Data["AWS_REGION"]),
			string(s.Data["AWS_ACCESS_KEY_ID"]), string(s.Data["AWS_SECRET_ACCESS_KEY"]))
		bucket := aws.String("team-a-check-" + ns)
		_, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket})
		Expect(err).NotTo(HaveOccurred())
		_, err = s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: bucket})
		Expect(err).NotTo(HaveOccurred())

		By("buying exactly one contract")
		Expect(createsFor(c, http.StatusCreated)).To(Equal(1))
	})

	// Creating its Secret wakes a Contract at once, before the cache shows what the pass that
	// created it wrote. That second pass must not act on the older Contract.
	It("asks the provider once and says it bought it once, though its new Secret wakes it at once", func(ctx SpecContext) {
		var contracts []*storagev1alpha1.Contract
		for i := range 30 {
			c := newContract(ns, fmt.Sprintf("once-%d", i))
			Expect(k8s.Create(ctx, c)).To(Succeed())
			contracts = append(contracts, c)
		}
		for _, c := range contracts {
			contractReady(ctx, c)
		}
		Consistently(func(g Gomega) {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			for _, c := range contracts {
				g.Expect(createsFor(c, http.StatusCreated)).To(Equal(1), "purchases of %s", c.Name)
				g.Expect(createsFor(c, http.StatusOK)).To(BeZero(), "replayed purchases of %s", c.Name)
				saidOnce(g, list.Items, c, "ContractCreated")
				// A new Contract's first Ready is said by its condition alone.
				g.Expect(reasonsOf(list.Items, c)).NotTo(ContainElement(storagev1alpha1.ReasonAvailable))
			}
		}).Within(2 * time.Second).Should(Succeed())
	})

	It("reports the contract API as unavailable while it is down, then becomes Ready", func(ctx SpecContext) {
		stk.ContractAPI.Stop()
		DeferCleanup(func() { Expect(stk.ContractAPI.Start()).To(Succeed()) })

		c := newContract(ns, "while-down")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonContractAPIUnavailable)
		Expect(cond.Message).To(ContainSubstring("creating the contract"))
		Expect(cond.Message).To(HaveSuffix("retrying"))

		Expect(stk.ContractAPI.Start()).To(Succeed())
		contractReady(ctx, c)
		Expect(createsFor(c, http.StatusCreated)).To(Equal(1))
	})

	It("reports a refused request and asks again only once a resync period", func(ctx SpecContext) {
		c := newContract(ns, "gold", func(c *storagev1alpha1.Contract) { c.Spec.Plan = "gold" })
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonContractAPIRejected)
		Expect(cond.Message).To(ContainSubstring("gold"))
		Expect(cond.Message).To(ContainSubstring("HTTP 422"))

		// Retries with backoff would ask about ten times in three seconds; once a resync period
		// (1 s here), at most four.
		attempts := len(stk.ContractAPI.Calls(func(call stack.Call) bool { return call.IdempotencyKey == string(c.UID) }))
		Consistently(func() int {
			return len(stk.ContractAPI.Calls(func(call stack.Call) bool { return call.IdempotencyKey == string(c.UID) }))
		}, 3*time.Second).Should(BeNumerically("<=", attempts+4))

		By("deleting it without anything to cancel")
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		gone(ctx, c)
	})

	It("does not buy a second contract when the manager restarts before recording the first", func(ctx SpecContext) {
		// Every create succeeds at the provider, but no answer reaches the first manager, which is
		// then restarted: the new manager must find the contract the first one bought.
		restarted := make(chan struct{})
		var mu sync.Mutex
		var hidden []int
		stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			select {
			case <-restarted:
			default:
				if r.Method == http.MethodPost && r.URL.Path == "/v1/contracts" {
					lost := &lostAnswer{}
					next.ServeHTTP(lost, r)
					mu.Lock()
					hidden = append(hidden, lost.status)
					mu.Unlock()
					panic(http.ErrAbortHandler)
				}
			}
			next.ServeHTTP(w, r)
		})
		DeferCleanup(func() { stk.ContractAPI.SetHook(nil) })

		c := newContract(ns, "restart")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		Eventually(func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(hidden) }).Should(ContainElement(http.StatusCreated))
		Expect(stk.StopManager()).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		Expect(c.Status.ContractID).To(BeEmpty(), "the first manager must not have recorded the contract")
		close(restarted)
		Expect(stk.StartManager()).To(Succeed())

		contractReady(ctx, c)
		mu.Lock()
		defer mu.Unlock()
		bought := createsFor(c, http.StatusCreated)
		for _, status := range hidden {
			if status == http.StatusCreated {
				bought++
			}
		}
		Expect(bought).To(Equal(1), "contracts bought (answers lost: %v)", hidden)
		Expect(createsFor(c, http.StatusOK)).To(BeNumerically(">=", 1), "the restarted manager replays the create")
		Expect(providerContract(ctx, c.Status.ContractID).State).To(Equal(contractapi.Active))
	})

	It("cancels a contract whose purchase was never recorded, when deleted with reclaimPolicy Delete", func(ctx SpecContext) {
		// The provider sells the contract, but no answer reaches the manager; the user then
		// deletes the Contract. Deletion must find that contract and cancel it, not leak it.
		boughtID := losePurchaseAnswers()

		c := newContract(ns, "unrecorded", func(c *storagev1alpha1.Contract) {
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		Eventually(boughtID).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(c), c) }, 2*time.Second).
			Should(Succeed(), "deletion must wait while it cannot learn what was bought")

		stk.ContractAPI.SetHook(nil)
		gone(ctx, c)
		Expect(providerContract(ctx, boughtID()).State).To(Equal(contractapi.Cancelled))
	})

	It("keeps the keys of a contract whose purchase was never recorded, when deleted with reclaimPolicy Retain", func(ctx SpecContext) {
		// The provider sells the contract and the answer is lost; the Contract is deleted with
		// Retain. The contract lives on, so its keys must too.
		boughtID := losePurchaseAnswers()

		c := newContract(ns, "unrecorded-retain")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		Eventually(boughtID).ShouldNot(BeEmpty())
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(c), c) }, 2*time.Second).
			Should(Succeed(), "deletion must wait while it cannot learn what was bought")
		stk.ContractAPI.SetHook(nil)
		gone(ctx, c)

		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.SecretNameOrDefault()}, secret)).To(Succeed(),
			"the retained contract's keys are nowhere")
		Expect(secret.OwnerReferences).To(BeEmpty())
		Expect(secret.Data).To(HaveKey("AWS_SECRET_ACCESS_KEY"))
		Expect(providerContract(ctx, boughtID()).State).To(Equal(contractapi.Active))
		Expect(providerContract(ctx, boughtID()).AccessKeys).To(ContainElement(HaveField("AccessKeyId", string(secret.Data["AWS_ACCESS_KEY_ID"]))))
	})

	It("does not take a bare 404 (a proxy, a wrong URL) for a cancelled contract", func(ctx SpecContext) {
		c := newContract(ns, "proxied")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			if r.Method == http.MethodGet {
				http.NotFound(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
		DeferCleanup(func() { stk.ContractAPI.SetHook(nil) })

		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonContractAPIUnavailable)
		Expect(cond.Message).To(ContainSubstring("is the contract API URL right?"))
		Expect(c.Status.State).To(Equal("active"))
		stk.ContractAPI.SetHook(nil)
		contractReady(ctx, c)
	})

	It("recreates a Secret deleted by hand, with the same keys", func(ctx SpecContext) {
		c := newContract(ns, "lost-secret")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		before := secretOf(ctx, c)

		Expect(k8s.Delete(ctx, before)).To(Succeed())
		Eventually(func(g Gomega) {
			after := &corev1.Secret{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(before), after)).To(Succeed())
			g.Expect(after.UID).NotTo(Equal(before.UID))
			g.Expect(after.Data).To(Equal(before.Data))
		}).Should(Succeed())
		Expect(createsFor(c, http.StatusCreated)).To(Equal(1))
	})

	It("recovers its Secret after its spec changed", func(ctx SpecContext) {
		c := newContract(ns, "renamed", func(c *storagev1alpha1.Contract) { c.Spec.DisplayName = "Team A" })
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)

		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				return err
			}
			c.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatS3cfg}
			return k8s.Update(ctx, c)
		}).Should(Succeed())
		contractReady(ctx, c)
		var before *corev1.Secret
		Eventually(func(g Gomega) {
			before = secretOf(ctx, c)
			g.Expect(before.Data).To(HaveKey(credentials.S3cfgFile))
		}).Should(Succeed())
		Expect(k8s.Delete(ctx, before)).To(Succeed())
		Eventually(func(g Gomega) {
			after := &corev1.Secret{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(before), after)).To(Succeed())
			g.Expect(after.UID).NotTo(Equal(before.UID))
			g.Expect(after.Data).To(Equal(before.Data))
		}).Should(Succeed())
	})

	It("moves its credentials when secretName changes, leaving no copy behind", func(ctx SpecContext) {
		c := newContract(ns, "moving")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		old := secretOf(ctx, c)

		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				return err
			}
			c.Spec.SecretName = "moving-s3"
			return k8s.Update(ctx, c)
		}).Should(Succeed())
		contractReady(ctx, c)
		Expect(c.Status.SecretName).To(Equal("moving-s3"))
		Expect(secretOf(ctx, c).Data).To(Equal(old.Data))
		gone(ctx, old)
	})

	It("never overwrites a Secret it does not own", func(ctx SpecContext) {
		foreign := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken-credentials"},
			StringData: map[string]string{"password": "hunter2"},
		}
		Expect(k8s.Create(ctx, foreign)).To(Succeed())

		c := newContract(ns, "taken")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		cond := contractNotReady(ctx, c, storagev1alpha1.ReasonSecretConflict)
		Expect(cond.Message).To(ContainSubstring("taken-credentials"))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
		Expect(foreign.Data).To(Equal(map[string][]byte{"password": []byte("hunter2")}))
	})

	// No webhook runs here, so nothing defaults reclaimPolicy (the webhook writes Delete at
	// creation): an empty policy, as with the webhooks off, keeps the contract like Retain.
	It("keeps the contract and its Secret when deleted with no reclaimPolicy, as with Retain", func(ctx SpecContext) {
		c := newContract(ns, "keep")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		Expect(c.Spec.ReclaimPolicy).To(BeEmpty(), "only the webhook defaults it")
		id, secret := c.Status.ContractID, secretOf(ctx, c)

		Expect(k8s.Delete(ctx, c)).To(Succeed())
		gone(ctx, c)

		Expect(providerContract(ctx, id).State).To(Equal(contractapi.Active))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		Expect(secret.OwnerReferences).To(BeEmpty(), "the Secret must outlive the Contract")
		Expect(secret.Data).To(HaveKey("AWS_SECRET_ACCESS_KEY"))
	})

	It("cancels the contract and removes its Secret when deleted with reclaimPolicy Delete", func(ctx SpecContext) {
		c := newContract(ns, "cancel", func(c *storagev1alpha1.Contract) {
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		id, secret := c.Status.ContractID, secretOf(ctx, c)
		s3c := localenv.NewS3Client(stk.S3.Endpoint, stk.S3.Region,
			string(secret.Data["AWS_ACCESS_KEY_ID"]), string(secret.Data["AWS_SECRET_ACCESS_KEY"]))

		Expect(k8s.Delete(ctx, c)).To(Succeed())
		gone(ctx, c)

		Expect(providerContract(ctx, id).State).To(Equal(contractapi.Cancelled))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).NotTo(Succeed())
		_, err := s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
		Expect(err).To(HaveOccurred(), "the cancelled account's keys still work")
	})

	It("says plainly that its key cannot rotate on versitygw, and keeps the key it has", func(ctx SpecContext) {
		c := newContract(ns, "one-key", func(c *storagev1alpha1.Contract) {
			c.Spec.KeyRotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 720 * time.Hour}}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		before := secretOf(ctx, c).Data["AWS_ACCESS_KEY_ID"]

		By("saying so as soon as rotation is asked for, in the provider's words")
		keyRotation := func(g Gomega) *metav1.Condition {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			cond := meta.FindStatusCondition(c.Status.Conditions, storagev1alpha1.KeyRotationCondition)
			g.Expect(cond).NotTo(BeNil(), "no KeyRotation condition")
			return cond
		}
		Eventually(func(g Gomega) {
			cond := keyRotation(g)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(storagev1alpha1.ReasonKeyRotationUnsupported))
			g.Expect(cond.Message).To(Equal("Versitygw accounts hold one key pair (a versitygw user is its access key): " +
				"this Contract's key cannot rotate, and key " + string(before) + " stays in Secret one-key-credentials. " +
				"Remove spec.keyRotation and the storage.osm.dev/rotate-key annotation to stop asking"))
		}).Should(Succeed())

		By("asking the provider for nothing when the annotation asks for a key now")
		patch := client.MergeFrom(c.DeepCopy())
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.RotateKeyAnnotation, "now")
		Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(keyRotation(g).Reason).To(Equal(storagev1alpha1.ReasonKeyRotationUnsupported))
			g.Expect(c.Status.PendingKey).To(BeNil())
			g.Expect(secretOf(ctx, c).Data["AWS_ACCESS_KEY_ID"]).To(Equal(before))
		}, 3*resyncPeriod).Should(Succeed())
		addKeys := stk.ContractAPI.Calls(func(call stack.Call) bool {
			return call.Method == http.MethodPost && call.Path == "/v1/contracts/"+c.Status.ContractID+"/keys"
		})
		Expect(addKeys).To(BeEmpty(), "the provider said its accounts hold one key")
		contractReady(ctx, c)

		By("keeping the key that works")
		s := secretOf(ctx, c)
		s3c := localenv.NewS3Client(c.Status.Endpoint, c.Status.Region, string(s.Data["AWS_ACCESS_KEY_ID"]), string(s.Data["AWS_SECRET_ACCESS_KEY"]))
		_, err := s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
		Expect(err).NotTo(HaveOccurred())
		Expect(providerContract(ctx, c.Status.ContractID).AccessKeys).To(HaveLen(1))

		By("dropping the condition once rotation is no longer asked for")
		patch = client.MergeFrom(c.DeepCopy())
		c.Spec.KeyRotation = nil
		delete(c.Annotations, storagev1alpha1.RotateKeyAnnotation)
		Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(meta.FindStatusCondition(c.Status.Conditions, storagev1alpha1.KeyRotationCondition)).To(BeNil())
		}).Should(Succeed())
	})

	It("refuses a key rotation period under a minute, or an overlap as long as the period", func(ctx SpecContext) {
		for _, tc := range []struct {
			rotation storagev1alpha1.KeyRotation
			message  string
		}{
			{storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 30 * time.Second}}, "keyRotation.period must be at least one minute"},
			{storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour}, Overlap: &metav1.Duration{Duration: time.Hour}},
				"keyRotation.overlap must not be negative and must be shorter than period"},
			{storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour}, Overlap: &metav1.Duration{Duration: -time.Minute}},
				"keyRotation.overlap must not be negative and must be shorter than period"},
		} {
			c := newContract(ns, "bad-rotation", func(c *storagev1alpha1.Contract) { c.Spec.KeyRotation = &tc.rotation })
			err := k8s.Create(ctx, c)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(HaveSuffix("spec.keyRotation: Invalid value: " + tc.message))
		}
	})

	It("is not removed while a Bucket names it", func(ctx SpecContext) {
		c := newContract(ns, "shared")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		b := &storagev1alpha1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "photos"},
			Spec:       storagev1alpha1.BucketSpec{BucketName: "photos-" + ns, ContractName: "shared"},
		}
		Expect(k8s.Create(ctx, b)).To(Succeed())

		Expect(k8s.Delete(ctx, c)).To(Succeed())
		contractNotReady(ctx, c, storagev1alpha1.ReasonDeleting)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(c.Status.Conditions).To(ContainElement(And(
				HaveField("Type", storagev1alpha1.InUseCondition),
				HaveField("Status", metav1.ConditionTrue),
				HaveField("Message", "Named by 1 Bucket: photos"))))
		}).Should(Succeed())
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(c), c) }, 2*time.Second).Should(Succeed())

		Expect(k8s.Delete(ctx, b)).To(Succeed())
		gone(ctx, b)
		gone(ctx, c)
	})
})

// lostAnswer is a ResponseWriter that keeps only the status of an answer that a lost connection
// never delivers.
type lostAnswer struct {
	status int
	body   []byte
}

// losePurchaseAnswers lets every purchase through to the contract server and drops its answer
// until the hook is removed (stk.ContractAPI.SetHook(nil)); the function it returns says which
// contract was bought.
func losePurchaseAnswers() (boughtID func() string) {
	var mu sync.Mutex
	var bought string
	stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/contracts" {
			lost := &lostAnswer{}
			next.ServeHTTP(lost, r)
			var got contractapi.ContractWithCredentials
			if json.Unmarshal(lost.body, &got) == nil && got.Id != "" {
				mu.Lock()
				bought = got.Id
				mu.Unlock()
			}
			panic(http.ErrAbortHandler)
		}
		next.ServeHTTP(w, r)
	})
	DeferCleanup(func() { stk.ContractAPI.SetHook(nil) })
	return func() string { mu.Lock(); defer mu.Unlock(); return bought }
}

func (*lostAnswer) Header() http.Header { return http.Header{} }
func (l *lostAnswer) Write(b []byte) (int, error) {
	l.body = append(l.body, b...)
	return len(b), nil
}
func (l *lostAnswer) WriteHeader(status int) { l.status = status }
