package storage_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

func newAccess(ns, name, bucket string, access storagev1alpha1.AccessMode) *storagev1alpha1.BucketAccess {
	return &storagev1alpha1.BucketAccess{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(bucket), Access: access},
	}
}

// accessReady waits until the BucketAccess is Ready with its key verified, and returns an S3
// client made from its Secret alone, as a workload would.
func accessReady(ctx SpecContext, a *storagev1alpha1.BucketAccess) *s3.Client {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		for _, typ := range []string{storagev1alpha1.ReadyCondition, storagev1alpha1.AccessVerifiedCondition} {
			c := meta.FindStatusCondition(a.Status.Conditions, typ)
			g.Expect(c).NotTo(BeNil(), "no %s condition yet", typ)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s: %s", typ, c.Reason, c.Message)
		}
	}).Should(Succeed())
	return clientOfSecret(ctx, a.Namespace, a.Status.SecretName)
}

func clientOfSecret(ctx context.Context, ns, name string) *s3.Client {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)).To(Succeed())
	return localenv.S3ClientOfSecret(secret)
}

// s3Code is the S3 error code of err, "" for success.
func s3Code(err error) string {
	if err == nil {
		return ""
	}
	if code := objectstore.ErrorCode(err); code != "" {
		return code
	}
	return err.Error()
}

func put(ctx context.Context, c *s3.Client, bucket, key string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("data")})
	return err
}

func get(ctx context.Context, c *s3.Client, bucket, key string) error {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err == nil {
		_ = out.Body.Close()
	}
	return err
}

func list(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	return err
}

func del(ctx context.Context, c *s3.Client, bucket, key string) error {
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err
}

var _ = Describe("BucketAccess", func() {
	It("hands out a key that can do what its access allows in its bucket, and nothing else", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		acct := readyAccount(ctx, ns, "acct")
		photos := newBucket(ns, "photos", "acct")
		other := newBucket(ns, "other", "acct")
		Expect(k8s.Create(ctx, photos)).To(Succeed())
		Expect(k8s.Create(ctx, other)).To(Succeed())
		bucketReady(ctx, photos)
		bucketReady(ctx, other)
		p, o := photos.Spec.BucketName, other.Spec.BucketName
		Expect(put(ctx, acct.s3, p, "cat.jpg")).To(Succeed())
		Expect(put(ctx, acct.s3, o, "secret.txt")).To(Succeed())

		ro := newAccess(ns, "reader", "photos", storagev1alpha1.AccessReadOnly)
		wo := newAccess(ns, "backup", "photos", storagev1alpha1.AccessWriteOnly)
		rw := newAccess(ns, "app", "photos", storagev1alpha1.AccessReadWrite)
		for _, a := range []*storagev1alpha1.BucketAccess{ro, wo, rw} {
			Expect(k8s.Create(ctx, a)).To(Succeed())
		}
		reader, backup, app := accessReady(ctx, ro), accessReady(ctx, wo), accessReady(ctx, rw)

		By("the Secret holds everything a client needs, and not the account's key")
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reader-credentials"}, secret)).To(Succeed())
		Expect(string(secret.Data["BUCKET_NAME"])).To(Equal(p))
		Expect(string(secret.Data["AWS_ENDPOINT_URL"])).To(Equal(acct.contract.Status.Endpoint))
		Expect(string(secret.Data["AWS_ACCESS_KEY_ID"])).NotTo(Equal(acct.keyID))
		Expect(string(secret.Data["AWS_ACCESS_KEY_ID"])).To(Equal(ro.Status.AccessKeyID))
		Expect(metav1.IsControlledBy(secret, ro)).To(BeTrue())
		verified := meta.FindStatusCondition(ro.Status.Conditions, storagev1alpha1.AccessVerifiedCondition)
		Expect(verified.Message).To(ContainSubstring("list allowed, read allowed, write refused"))

		By("ReadOnly reads and lists, and cannot write or delete")
		Expect(get(ctx, reader, p, "cat.jpg")).To(Succeed())
		Expect(list(ctx, reader, p)).To(Succeed())
		Expect(s3Code(put(ctx, reader, p, "new.jpg"))).To(Equal("AccessDenied"))
		Expect(s3Code(del(ctx, reader, p, "cat.jpg"))).To(Equal("AccessDenied"))

		By("WriteOnly writes, and cannot read, list or delete")
		Expect(put(ctx, backup, p, "backup-1.tar")).To(Succeed())
		Expect(s3Code(get(ctx, backup, p, "cat.jpg"))).To(Equal("AccessDenied"))
		Expect(s3Code(list(ctx, backup, p))).To(Equal("AccessDenied"))
		Expect(s3Code(del(ctx, backup, p, "cat.jpg"))).To(Equal("AccessDenied"))

		By("ReadWrite reads, writes and deletes in its bucket, and cannot touch another bucket of the account")
		Expect(put(ctx, app, p, "upload.jpg")).To(Succeed())
		Expect(get(ctx, app, p, "upload.jpg")).To(Succeed())
		Expect(del(ctx, app, p, "upload.jpg")).To(Succeed())
		Expect(s3Code(get(ctx, app, o, "secret.txt"))).To(Equal("AccessDenied"))
		Expect(s3Code(list(ctx, app, o))).To(Equal("AccessDenied"))
		Expect(s3Code(put(ctx, app, o, "x"))).To(Equal("AccessDenied"))

		By("nothing a check sent was stored, and the objects the denials named are still there")
		Expect(s3Code(get(ctx, acct.s3, p, ".osm-access-check"))).To(Equal("NoSuchKey"))
		Expect(get(ctx, acct.s3, p, "cat.jpg")).To(Succeed())

		By("the Bucket stays Ready, with the generated statements marked apart from the user's")
		bucketReady(ctx, photos)
		Expect(string(photos.Status.Policy.Raw)).To(ContainSubstring(bucketpolicy.AccessStatementPrefix))
	})

	// Creating its Secret wakes a BucketAccess at once, before the cache shows what the pass
	// that created it wrote. That second pass must not act on the older BucketAccess.
	It("asks for its principal once and says it is Available once, though its new Secret wakes it at once", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyAccount(ctx, ns, "acct")
		b := newBucket(ns, "shared", "acct")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		var accesses []*storagev1alpha1.BucketAccess
		for i := range 20 {
			a := newAccess(ns, fmt.Sprintf("reader-%d", i), "shared", storagev1alpha1.AccessReadOnly)
			Expect(k8s.Create(ctx, a)).To(Succeed())
			accesses = append(accesses, a)
		}
		for _, a := range accesses {
			accessReady(ctx, a)
		}
		Consistently(func(g Gomega) {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			for _, a := range accesses {
				asked := stk.ContractAPI.Calls(func(call stack.Call) bool {
					return call.Method == http.MethodPost && call.IdempotencyKey == string(a.UID)
				})
				g.Expect(asked).To(HaveLen(1), "requests for the principal of %s", a.Name)
				saidOnce(g, list.Items, a, storagev1alpha1.ReasonAvailable)
			}
		}).Within(2 * time.Second).Should(Succeed())
	})

	It("rotates the key without a single failed request, and revokes the old one after the overlap", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		acct := readyAccount(ctx, ns, "acct")
		b := newBucket(ns, "data", "acct")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		Expect(put(ctx, acct.s3, b.Spec.BucketName, "report.csv")).To(Succeed())
		a := newAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour},
			Overlap: &metav1.Duration{Duration: 4 * time.Second}}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		accessReady(ctx, a)
		firstKey, secretName := a.Status.AccessKeyID, a.Status.SecretName
		firstClient := clientOfSecret(ctx, ns, secretName)

		By("a reader that re-reads the Secret before every request, as a mounted file is read, keeps reading")
		var requests, failures atomic.Int64
		var firstFailure atomic.Value
		readCtx, stopReading := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for i := 0; i < 3000 && readCtx.Err() == nil; i++ { // bounded: stops by itself
				secret := &corev1.Secret{}
				err := k8s.Get(readCtx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)
				if err == nil {
					err = get(readCtx, localenv.S3ClientOfSecret(secret), b.Spec.BucketName, "report.csv")
				}
				if readCtx.Err() != nil {
					return
				}
				requests.Add(1)
				if err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()

		pendingBefore := eventsOf(ctx, ns, "reader", storagev1alpha1.ReasonPolicyPending)
		Expect(patchAnnotation(ctx, a, storagev1alpha1.RotateKeyAnnotation, "now")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			g.Expect(a.Status.AccessKeyID).NotTo(Equal(firstKey))
			g.Expect(a.Status.RetiringKeys).To(BeEmpty(), "the old key is revoked after the overlap")
			g.Expect(a.Status.RotatedFor).To(Equal("now"))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		time.Sleep(time.Second) // a few requests with the new key only
		stopReading()
		wg.Wait()
		Expect(requests.Load()).To(BeNumerically(">", 20))
		Expect(failures.Load()).To(BeZero(), "first failure: %v", firstFailure.Load())

		By("the old key no longer works, and the new one does")
		Expect(s3Code(get(ctx, firstClient, b.Spec.BucketName, "report.csv"))).To(Equal("InvalidAccessKeyId"))
		Expect(get(ctx, clientOfSecret(ctx, ns, secretName), b.Spec.BucketName, "report.csv")).To(Succeed())
		Expect(a.Status.KeysIssued).To(Equal(int32(1)), "keysIssued counts the keys rotation issued")
		Expect(eventsOf(ctx, ns, "reader", storagev1alpha1.ReasonPolicyPending)).To(Equal(pendingBefore),
			"Ready must not drop while the new key waits for the policy: the old key still works")
	})

	It("revokes every key when deleted, and holds its Bucket until then", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		acct := readyAccount(ctx, ns, "acct")
		b := newBucket(ns, "data", "acct", func(s *storagev1alpha1.BucketSpec) { s.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete })
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		Expect(put(ctx, acct.s3, b.Spec.BucketName, "report.csv")).To(Succeed())
		a := newAccess(ns, "reader", "data", storagev1alpha1.AccessReadOnly)
		Expect(k8s.Create(ctx, a)).To(Succeed())
		reader := accessReady(ctx, a)
		Expect(get(ctx, reader, b.Spec.BucketName, "report.csv")).To(Succeed())

		By("the Bucket says who uses it")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.InUseCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("BucketAccess"))
			g.Expect(c.Message).To(ContainSubstring("reader"))
		}).Should(Succeed())

		Expect(k8s.Delete(ctx, a)).To(Succeed())
		gone(ctx, a)
		Expect(s3Code(get(ctx, reader, b.Spec.BucketName, "report.csv"))).To(BeElementOf("InvalidAccessKeyId", "AccessDenied"))
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reader-credentials"}, &corev1.Secret{}))).To(BeTrue(),
			"the Secret goes with its BucketAccess")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			g.Expect(b.Status.Policy).To(BeNil(), "the generated statements go with their BucketAccess")
		}).Should(Succeed())
	})

	It("waits for its Bucket, and says so", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		a := newAccess(ns, "early", "not-yet", storagev1alpha1.AccessReadOnly)
		Expect(k8s.Create(ctx, a)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			c := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(storagev1alpha1.ReasonBucketNotFound))
		}).Should(Succeed())
		readyAccount(ctx, ns, "acct")
		b := newBucket(ns, "not-yet", "acct")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		accessReady(ctx, a)
	})
})

// eventsOf counts the events with reason about the object named name in ns.
func eventsOf(ctx context.Context, ns, name, reason string) int {
	GinkgoHelper()
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			n++
		}
	}
	return n
}

// patchAnnotation sets one annotation on obj.
func patchAnnotation(ctx context.Context, obj client.Object, key, value string) error {
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = value
	obj.SetAnnotations(ann)
	return k8s.Patch(ctx, obj, patch)
}
