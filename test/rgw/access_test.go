package rgw_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// On RGW a BucketAccess's principal is a user of its own in its contract's RGW tenant, named in
// the policy as arn:aws:iam::<tenant>:user/<id>, and a key is revoked by RGW itself: the same
// promises as on versitygw, checked against the server AWS-faithful tests trust.
var _ = Describe("BucketAccess on Ceph RGW", func() {
	var (
		ns    string
		owner *s3.Client
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		c := &storagev1alpha1.Contract{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
			Spec:       storagev1alpha1.ContractSpec{Plan: "standard"},
		}
		Expect(k8s.Create(ctx, c)).To(Succeed())
		ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		owner = s3OfSecret(ctx, ns, c.Status.SecretName)
	})

	bucket := func(ctx SpecContext, name string) string {
		GinkgoHelper()
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: storagev1alpha1.BucketSpec{BucketName: name + "-" + ns, ContractName: "team"}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		return b.Spec.BucketName
	}
	access := func(ctx SpecContext, name, bucket string, mode storagev1alpha1.AccessMode, mutate ...func(*storagev1alpha1.BucketAccess)) *storagev1alpha1.BucketAccess {
		GinkgoHelper()
		a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(bucket), Access: mode}}
		for _, m := range mutate {
			m(a)
		}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			for _, typ := range []string{storagev1alpha1.ReadyCondition, storagev1alpha1.AccessVerifiedCondition} {
				c := meta.FindStatusCondition(a.Status.Conditions, typ)
				g.Expect(c).NotTo(BeNil(), "no %s condition yet", typ)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s: %s", typ, c.Reason, c.Message)
			}
		}).WithTimeout(60 * time.Second).Should(Succeed())
		return a
	}

	It("gives each access mode exactly its rights, in its bucket only", func(ctx SpecContext) {
		photos, other := bucket(ctx, "photos"), bucket(ctx, "other")
		Expect(putObject(ctx, owner, photos, "cat.jpg")).To(Succeed())
		Expect(putObject(ctx, owner, other, "secret.txt")).To(Succeed())
		reader := s3OfSecret(ctx, ns, access(ctx, "reader", "photos", storagev1alpha1.AccessReadOnly).Status.SecretName)
		backup := s3OfSecret(ctx, ns, access(ctx, "backup", "photos", storagev1alpha1.AccessWriteOnly).Status.SecretName)
		app := s3OfSecret(ctx, ns, access(ctx, "app", "photos", storagev1alpha1.AccessReadWrite).Status.SecretName)

		By("ReadOnly reads and cannot write or delete")
		Expect(getObject(ctx, reader, photos, "cat.jpg")).To(Succeed())
		Expect(code(putObject(ctx, reader, photos, "new.jpg"))).To(Equal("AccessDenied"))
		Expect(code(deleteObject(ctx, reader, photos, "cat.jpg"))).To(Equal("AccessDenied"))

		By("WriteOnly writes and cannot read, list or delete, nor read back or re-grant what it wrote")
		Expect(putObject(ctx, backup, photos, "backup-1.tar")).To(Succeed())
		Expect(code(getObject(ctx, backup, photos, "cat.jpg"))).To(Equal("AccessDenied"))
		var err error
		// RGW makes the uploader the object's owner, whose ACL grants it everything: only the
		// policy's explicit Deny refuses it.
		Expect(code(getObject(ctx, backup, photos, "backup-1.tar"))).To(Equal("AccessDenied"))
		_, err = backup.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(photos), Key: aws.String("backup-1.tar")})
		Expect(code(err)).To(Equal("AccessDenied"))
		_, err = backup.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(photos), Key: aws.String("backup-1.tar"), ACL: s3types.ObjectCannedACLPublicRead})
		Expect(code(err)).To(Equal("AccessDenied"))
		Expect(getObject(ctx, reader, photos, "backup-1.tar")).To(Succeed(), "the account's ReadOnly key reads the backup")
		_, err = backup.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(photos)})
		Expect(code(err)).To(Equal("AccessDenied"))
		Expect(code(deleteObject(ctx, backup, photos, "cat.jpg"))).To(Equal("AccessDenied"))

		By("ReadWrite works in its bucket and cannot touch another bucket of the same account")
		Expect(putObject(ctx, app, photos, "upload.jpg")).To(Succeed())
		Expect(deleteObject(ctx, app, photos, "upload.jpg")).To(Succeed())
		Expect(code(getObject(ctx, app, other, "secret.txt"))).To(Equal("AccessDenied"))
		Expect(code(putObject(ctx, app, other, "x"))).To(Equal("AccessDenied"))

		By("the checks stored nothing")
		Expect(code(getObject(ctx, owner, photos, ".osm-access-check"))).To(Equal("NoSuchKey"))
	})

	// RGW evaluates the s3:prefix condition of the listing statement as AWS does.
	It("limits a key to its prefix: it lists and writes under it and is refused outside it", func(ctx SpecContext) {
		backups := bucket(ctx, "backups")
		Expect(putObject(ctx, owner, backups, "other/old.tar")).To(Succeed())
		a := access(ctx, "web", "backups", storagev1alpha1.AccessReadWrite, func(a *storagev1alpha1.BucketAccess) { a.Spec.Prefix = "web/" })
		Expect(meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition).Message).To(
			ContainSubstring(`under prefix "web/" list allowed, read allowed, write allowed; outside it list refused, read refused, write refused`))
		key := s3OfSecret(ctx, ns, a.Status.SecretName)

		By("under the prefix it writes, reads, lists and deletes")
		Expect(putObject(ctx, key, backups, "web/db.tar")).To(Succeed())
		Expect(getObject(ctx, key, backups, "web/db.tar")).To(Succeed())
		_, err := key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(backups), Prefix: aws.String("web/")})
		Expect(err).NotTo(HaveOccurred())
		Expect(deleteObject(ctx, key, backups, "web/db.tar")).To(Succeed())

		By("outside it every request is refused: the whole bucket's listing, another prefix's, reads, writes, deletes")
		_, err = key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(backups)})
		Expect(code(err)).To(Equal("AccessDenied"))
		_, err = key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(backups), Prefix: aws.String("other/")})
		Expect(code(err)).To(Equal("AccessDenied"))
		Expect(code(getObject(ctx, key, backups, "other/old.tar"))).To(Equal("AccessDenied"))
		Expect(code(putObject(ctx, key, backups, "other/new.tar"))).To(Equal("AccessDenied"))
		Expect(code(deleteObject(ctx, key, backups, "other/old.tar"))).To(Equal("AccessDenied"))
	})

	// One principal, one key, a statement set in each Bucket's policy: RGW evaluates each as AWS
	// does, and a Bucket taken out of the list drops the key there only.
	It("gives one key over several Buckets each Bucket's own access and prefix, and drops one taken out", func(ctx SpecContext) {
		photos, uploads, backups, private := bucket(ctx, "photos"), bucket(ctx, "uploads"), bucket(ctx, "backups"), bucket(ctx, "private")
		for _, b := range []string{photos, uploads, backups, private} {
			Expect(putObject(ctx, owner, b, "seed.txt")).To(Succeed())
		}
		Expect(putObject(ctx, owner, backups, "db/old.dump")).To(Succeed())
		a := access(ctx, "app", "", "", func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Buckets = []storagev1alpha1.AccessBucket{
				{Name: "photos", Access: storagev1alpha1.AccessReadOnly},
				{Name: "uploads", Access: storagev1alpha1.AccessReadWrite},
				{Name: "backups", Access: storagev1alpha1.AccessWriteOnly, Prefix: "db/"},
			}
		})
		Expect(meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition).Message).To(
			ContainSubstring(`backups (WriteOnly) under prefix "db/" list refused, read refused, write allowed; outside it list refused, read refused, write refused`))
		key, keyID := s3OfSecret(ctx, ns, a.Status.SecretName), a.Status.AccessKeyID

		By("ReadOnly in photos, ReadWrite in uploads, WriteOnly under db/ in backups, nothing in private")
		Expect(getObject(ctx, key, photos, "seed.txt")).To(Succeed())
		Expect(code(putObject(ctx, key, photos, "new.txt"))).To(Equal("AccessDenied"))
		Expect(putObject(ctx, key, uploads, "new.txt")).To(Succeed())
		Expect(deleteObject(ctx, key, uploads, "new.txt")).To(Succeed())
		Expect(putObject(ctx, key, backups, "db/new.dump")).To(Succeed())
		Expect(code(putObject(ctx, key, backups, "other.dump"))).To(Equal("AccessDenied"))
		Expect(code(getObject(ctx, key, backups, "db/old.dump"))).To(Equal("AccessDenied"))
		Expect(code(getObject(ctx, key, backups, "db/new.dump"))).To(Equal("AccessDenied"), "what it wrote itself")
		Expect(code(getObject(ctx, key, private, "seed.txt"))).To(Equal("AccessDenied"))
		Expect(code(putObject(ctx, key, private, "new.txt"))).To(Equal("AccessDenied"))

		By("uploads taken out: refused there, the same key still works elsewhere")
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.Buckets = []storagev1alpha1.AccessBucket{a.Spec.Buckets[0], a.Spec.Buckets[2]}
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(code(getObject(ctx, key, uploads, "seed.txt"))).To(Equal("AccessDenied"))
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			g.Expect(a.Status.Buckets).To(HaveLen(2))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(code(putObject(ctx, key, uploads, "new.txt"))).To(Equal("AccessDenied"))
		Expect(getObject(ctx, key, photos, "seed.txt")).To(Succeed())
		Expect(putObject(ctx, key, backups, "db/after.dump")).To(Succeed())
		Expect(a.Status.AccessKeyID).To(Equal(keyID))
	})

	It("rotates without a failed request, and revokes the old key after the overlap and on deletion", func(ctx SpecContext) {
		data := bucket(ctx, "data")
		Expect(putObject(ctx, owner, data, "report.csv")).To(Succeed())
		a := access(ctx, "reader", "data", storagev1alpha1.AccessReadOnly, func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour},
				Overlap: &metav1.Duration{Duration: 4 * time.Second}}
		})
		firstKey, secretName := a.Status.AccessKeyID, a.Status.SecretName
		first := s3OfSecret(ctx, ns, secretName)

		var requests, failures atomic.Int64
		var firstFailure atomic.Value
		readCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for i := 0; i < 3000 && readCtx.Err() == nil; i++ { // bounded: stops by itself
				secret := &corev1.Secret{}
				err := k8s.Get(readCtx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)
				if err == nil {
					err = getObject(readCtx, localenv.S3ClientOfSecret(secret), data, "report.csv")
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
		patch := client.MergeFrom(a.DeepCopy())
		a.Annotations = map[string]string{storagev1alpha1.RotateKeyAnnotation: "1"}
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			g.Expect(a.Status.AccessKeyID).NotTo(Equal(firstKey))
			g.Expect(a.Status.RetiringKeys).To(BeEmpty())
		}).WithTimeout(60 * time.Second).Should(Succeed())
		time.Sleep(time.Second)
		stop()
		wg.Wait()
		Expect(requests.Load()).To(BeNumerically(">", 20))
		Expect(failures.Load()).To(BeZero(), "first failure: %v", firstFailure.Load())
		Expect(code(getObject(ctx, first, data, "report.csv"))).To(Equal("InvalidAccessKeyId"))

		By("deleting the BucketAccess revokes the key it handed out last")
		current := s3OfSecret(ctx, ns, secretName)
		Expect(getObject(ctx, current, data, "report.csv")).To(Succeed())
		Expect(k8s.Delete(ctx, a)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(a), a)
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "still there, finalizers %v", a.Finalizers)
		}).Should(Succeed())
		Expect(code(getObject(ctx, current, data, "report.csv"))).To(Equal("InvalidAccessKeyId"))
	})
})

func s3OfSecret(ctx context.Context, ns, name string) *s3.Client {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)).To(Succeed())
	return localenv.S3ClientOfSecret(secret)
}

func code(err error) string {
	if err == nil {
		return ""
	}
	if c := objectstore.ErrorCode(err); c != "" {
		return c
	}
	return err.Error()
}

func putObject(ctx context.Context, c *s3.Client, bucket, key string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("data")})
	return err
}

func getObject(ctx context.Context, c *s3.Client, bucket, key string) error {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err == nil {
		_ = out.Body.Close()
	}
	return err
}

func deleteObject(ctx context.Context, c *s3.Client, bucket, key string) error {
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err
}
