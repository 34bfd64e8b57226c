package storage_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// One BucketAccess over three Buckets of one Contract: its one key does, in each, exactly what
// its item there allows, and nothing in a fourth; checked with the AWS CLI and rclone from the
// Secret's files alone, as a workload would. A Bucket taken out of the list refuses the key at
// once, with the same key still working in the others.
var _ = Describe("A BucketAccess over several Buckets", func() {
	It("gives one key each Bucket's own access and prefix, and nothing elsewhere; a Bucket taken out refuses it", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		acct := readyAccount(ctx, ns, "acct")
		names := map[string]string{}
		for _, name := range []string{"photos", "uploads", "backups", "private"} {
			b := newBucket(ns, name, "acct")
			Expect(k8s.Create(ctx, b)).To(Succeed())
			bucketReady(ctx, b)
			names[name] = b.Spec.BucketName
			Expect(put(ctx, acct.s3, b.Spec.BucketName, "seed.txt")).To(Succeed())
		}
		Expect(put(ctx, acct.s3, names["backups"], "db/old.dump")).To(Succeed())

		a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
			Spec: storagev1alpha1.BucketAccessSpec{
				Buckets: []storagev1alpha1.AccessBucket{
					{Name: "photos", Access: storagev1alpha1.AccessReadOnly},
					{Name: "uploads", Access: storagev1alpha1.AccessReadWrite},
					{Name: "backups", Access: storagev1alpha1.AccessWriteOnly, Prefix: "db/"},
				},
				Formats: []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatAWSFiles, storagev1alpha1.FormatRclone},
			}}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		accessReady(ctx, a)
		key := a.Status.AccessKeyID
		Expect(a.Status.BucketName).To(BeEmpty(), "the list form says its buckets in status.buckets")
		Expect(a.Status.Buckets).To(HaveLen(3))
		for _, st := range a.Status.Buckets {
			Expect(st.Verified).To(Equal(metav1.ConditionTrue), "%s: %s: %s", st.Name, st.Reason, st.Message)
			Expect(st.BucketName).To(Equal(names[st.Name]))
		}
		verified := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition)
		Expect(verified.Message).To(ContainSubstring(`backups (WriteOnly) under prefix "db/" list refused, read refused, write allowed; outside it list refused, read refused, write refused`))

		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, secret)).To(Succeed())
		Expect(secret.Data).To(HaveKeyWithValue("BUCKET_NAME_PHOTOS", []byte(names["photos"])))
		Expect(secret.Data).To(HaveKeyWithValue("BUCKET_NAME_UPLOADS", []byte(names["uploads"])))
		Expect(secret.Data).To(HaveKeyWithValue("BUCKET_NAME_BACKUPS", []byte(names["backups"])))
		Expect(secret.Data).To(HaveKeyWithValue("BUCKET_PREFIX_BACKUPS", []byte("db/")))
		Expect(secret.Data).NotTo(HaveKey("BUCKET_NAME"))
		dir := writeSecretFiles(secret)
		Expect(os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new"), 0o600)).To(Succeed())
		aws := func(args ...string) error {
			out, err := runClient(ctx, dir, awsCLI(), []string{"AWS_SHARED_CREDENTIALS_FILE=credentials", "AWS_CONFIG_FILE=config"}, args...)
			GinkgoWriter.Printf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
			return err
		}
		rclone := func(args ...string) error {
			out, err := runClient(ctx, dir, "rclone", []string{"RCLONE_CONFIG=rclone.conf"}, append(args, "--retries=1", "--low-level-retries=1")...)
			GinkgoWriter.Printf("rclone %s: %v\n%s", strings.Join(args, " "), err, out)
			return err
		}
		s3url := func(bucket, key string) string { return "s3://" + names[bucket] + "/" + key }
		remote := func(bucket, key string) string { return "osm:" + names[bucket] + "/" + key }

		By("ReadOnly in photos: list and read, no write")
		Expect(aws("s3", "ls", s3url("photos", ""))).To(Succeed())
		Expect(aws("s3", "cp", s3url("photos", "seed.txt"), "got.txt")).To(Succeed())
		Expect(aws("s3", "cp", "new.txt", s3url("photos", "new.txt"))).NotTo(Succeed())
		Expect(rclone("lsf", remote("photos", ""))).To(Succeed())
		Expect(rclone("lsf", "osm-photos:")).To(Succeed(), "each bucket has an alias remote of its own")
		Expect(rclone("copyto", "--s3-no-head", "new.txt", remote("photos", "new.txt"))).NotTo(Succeed())

		By("ReadWrite in uploads: list, read, write, delete")
		Expect(aws("s3", "cp", "new.txt", s3url("uploads", "new.txt"))).To(Succeed())
		Expect(aws("s3", "ls", s3url("uploads", ""))).To(Succeed())
		Expect(aws("s3", "rm", s3url("uploads", "new.txt"))).To(Succeed())
		Expect(rclone("copyto", "new.txt", remote("uploads", "r.txt"))).To(Succeed())
		Expect(rclone("deletefile", remote("uploads", "r.txt"))).To(Succeed())

		By("WriteOnly under db/ in backups: write there, and nothing else")
		Expect(aws("s3", "cp", "new.txt", s3url("backups", "db/new.dump"))).To(Succeed())
		Expect(rclone("copyto", "--s3-no-head", "--no-check-dest", "new.txt", remote("backups", "db/r.dump"))).To(Succeed())
		Expect(rclone("copyto", "--s3-no-head", "--no-check-dest", "new.txt", "osm-backups:alias.dump")).To(Succeed(), "the alias stands for the prefix")
		Expect(get(ctx, acct.s3, names["backups"], "db/alias.dump")).To(Succeed())
		Expect(aws("s3", "cp", "new.txt", s3url("backups", "other/new.dump"))).NotTo(Succeed())
		Expect(aws("s3", "cp", s3url("backups", "db/old.dump"), "got.dump")).NotTo(Succeed())
		Expect(aws("s3", "ls", s3url("backups", "db/"))).NotTo(Succeed())
		Expect(rclone("lsf", remote("backups", "db/"))).NotTo(Succeed())
		Expect(get(ctx, acct.s3, names["backups"], "db/new.dump")).To(Succeed())

		By("nothing in a fourth Bucket of the same account")
		Expect(aws("s3", "ls", s3url("private", ""))).NotTo(Succeed())
		Expect(aws("s3", "cp", s3url("private", "seed.txt"), "got.txt")).NotTo(Succeed())
		Expect(aws("s3", "cp", "new.txt", s3url("private", "new.txt"))).NotTo(Succeed())
		Expect(rclone("lsf", remote("private", ""))).NotTo(Succeed())

		By("uploads taken out of the list: refused there, the same key still works in the others")
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.Buckets = []storagev1alpha1.AccessBucket{a.Spec.Buckets[0], a.Spec.Buckets[2]}
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
			var left []string
			for _, st := range a.Status.Buckets {
				left = append(left, st.Name)
			}
			g.Expect(left).To(Equal([]string{"photos", "backups"}), "uploads leaves status.buckets once it refuses the key")
		}).Should(Succeed())
		Expect(aws("s3", "ls", s3url("uploads", ""))).NotTo(Succeed())
		Expect(aws("s3", "cp", s3url("uploads", "seed.txt"), "got.txt")).NotTo(Succeed())
		Expect(aws("s3", "cp", "new.txt", s3url("uploads", "new.txt"))).NotTo(Succeed())
		Expect(rclone("lsf", remote("uploads", ""))).NotTo(Succeed())
		Expect(aws("s3", "ls", s3url("photos", ""))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, secret)).To(Succeed())
			g.Expect(secret.Data).NotTo(HaveKey("BUCKET_NAME_UPLOADS"))
			g.Expect(string(secret.Data["rclone.conf"])).NotTo(ContainSubstring("osm-uploads"))
		}).Should(Succeed())
		Expect(aws("s3", "cp", "new.txt", s3url("backups", "db/after.dump"))).To(Succeed())
		accessReady(ctx, a)
		Expect(a.Status.AccessKeyID).To(Equal(key), "taking a Bucket out edits policies, and issues no new key")
		Expect(a.Status.KeysIssued).To(BeZero())
		Eventually(func() int { return eventsOf(ctx, ns, "app", "BucketRevoked") }).Should(Equal(1))

		By("put back, uploads takes the same key again")
		patch = client.MergeFrom(a.DeepCopy())
		a.Spec.Buckets = append(a.Spec.Buckets, storagev1alpha1.AccessBucket{Name: "uploads", Access: storagev1alpha1.AccessReadOnly})
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func() error { return aws("s3", "ls", s3url("uploads", "")) }).Should(Succeed())
		Expect(aws("s3", "cp", "new.txt", s3url("uploads", "again.txt"))).NotTo(Succeed(), "ReadOnly now")
		accessReady(ctx, a)
		Expect(a.Status.AccessKeyID).To(Equal(key))

		By("a rotation checks the new key in every bucket before the Secret gets it")
		Expect(patchAnnotation(ctx, a, storagev1alpha1.RotateKeyAnnotation, "1")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			g.Expect(a.Status.AccessKeyID).NotTo(Equal(key))
		}).Should(Succeed())
		rotated := accessReady(ctx, a)
		Expect(a.Status.KeysIssued).To(Equal(int32(1)))
		for _, st := range a.Status.Buckets {
			Expect(st.Verified).To(Equal(metav1.ConditionTrue), "%s: %s: %s", st.Name, st.Reason, st.Message)
		}
		Expect(get(ctx, rotated, names["photos"], "seed.txt")).To(Succeed())
		Expect(put(ctx, rotated, names["backups"], "db/rotated.dump")).To(Succeed())
		Expect(s3Code(put(ctx, rotated, names["photos"], "x"))).To(Equal("AccessDenied"))
	})

	// Admission refuses these; without it (or with a Bucket re-created since), the controller
	// says so in a False condition with a reason and an event, and does not loop on an error.
	It("names a missing Bucket, and one of another Contract, in Ready and status.buckets", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		readyAccount(ctx, ns, "acct")
		readyAccount(ctx, ns, "other")
		for name, contract := range map[string]string{"photos": "acct", "theirs": "other"} {
			b := newBucket(ns, name, contract)
			Expect(k8s.Create(ctx, b)).To(Succeed())
			bucketReady(ctx, b)
		}
		a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
			Spec: storagev1alpha1.BucketAccessSpec{Buckets: []storagev1alpha1.AccessBucket{
				{Name: "photos", Access: storagev1alpha1.AccessReadOnly},
				{Name: "missing", Access: storagev1alpha1.AccessReadOnly},
				{Name: "theirs", Access: storagev1alpha1.AccessReadOnly},
			}}}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			ready := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(storagev1alpha1.ReasonBucketNotFound))
			g.Expect(ready.Message).To(ContainSubstring(`Bucket "missing" does not exist`))
			g.Expect(a.Status.Buckets).To(HaveLen(3))
			g.Expect(a.Status.Buckets[1].Reason).To(Equal(storagev1alpha1.ReasonBucketNotFound))
			g.Expect(a.Status.Buckets[2].Reason).To(Equal(storagev1alpha1.ReasonContractMismatch))
			g.Expect(a.Status.Buckets[2].Message).To(ContainSubstring(`Bucket "theirs" belongs to Contract other, and Bucket "photos" to Contract acct`))
		}).Should(Succeed())
		Expect(a.Status.PrincipalRequested).To(BeFalse(), "nothing is issued while a Bucket cannot be reached")

		By("the missing Bucket taken out, the other Contract's decides; taken out too, the key is issued")
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.Buckets = []storagev1alpha1.AccessBucket{a.Spec.Buckets[0], a.Spec.Buckets[2]}
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			ready := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(ready.Reason).To(Equal(storagev1alpha1.ReasonContractMismatch))
			g.Expect(ready.ObservedGeneration).To(Equal(a.Generation))
		}).Should(Succeed())
		Eventually(func() int { return eventsOf(ctx, ns, "app", storagev1alpha1.ReasonContractMismatch) }).Should(BeNumerically(">=", 1))
		patch = client.MergeFrom(a.DeepCopy())
		a.Spec.Buckets = a.Spec.Buckets[:1]
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		accessReady(ctx, a)
		Expect(a.Status.Buckets).To(HaveLen(1))
	})
})
