package rgw_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

var _ = Describe("Bucket usage and quotas on Ceph RGW", func() {
	It("shows what the AWS CLI uploaded, warns near the quota, and RGW refuses past it", func(ctx SpecContext) {
		if _, err := exec.LookPath("aws"); err != nil {
			Fail("the AWS CLI (aws) is not on PATH: `make deps` installs it (Debian package awscli)")
		}
		ns := newNamespace(ctx)
		c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
			Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
		Expect(k8s.Create(ctx, c)).To(Succeed())
		ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "uploads"},
			Spec: storagev1alpha1.BucketSpec{BucketName: "uploads-" + ns, ContractName: "team",
				Quota: &storagev1alpha1.BucketQuota{MaxObjects: ptr.To[int64](3)}}}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		Expect(b.Status.Quota).To(Equal(&storagev1alpha1.ObservedQuota{MaxObjects: 3}))

		dir := GinkgoT().TempDir()
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, secret)).To(Succeed())
		owner := localenv.NewS3Client(c.Status.Endpoint, c.Status.Region,
			string(secret.Data["AWS_ACCESS_KEY_ID"]), string(secret.Data["AWS_SECRET_ACCESS_KEY"]))
		// upload runs `aws s3api put-object`, which reports the server's error code as it is.
		upload := func(key string, size int) (string, error) {
			file := filepath.Join(dir, key)
			Expect(os.WriteFile(file, []byte(strings.Repeat("x", size)), 0o600)).To(Succeed())
			cmd := exec.CommandContext(ctx, "aws", "s3api", "put-object", "--bucket", b.Spec.BucketName, "--key", key, "--body", file)
			cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
			for k, v := range secret.Data {
				cmd.Env = append(cmd.Env, k+"="+string(v))
			}
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		nearlyFull := func(g Gomega) *metav1.Condition {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			cond := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.QuotaNearlyFullCondition)
			g.Expect(cond).NotTo(BeNil())
			return cond
		}

		By("showing two uploads, 3500 bytes, in status and in kubectl get buckets, below the threshold")
		for key, size := range map[string]int{"a.bin": 1000, "b.bin": 2500} {
			out, err := upload(key, size)
			Expect(err).NotTo(HaveOccurred(), out)
		}
		Eventually(func(g Gomega) {
			cond := nearlyFull(g)
			g.Expect(b.Status.Usage).NotTo(BeNil())
			g.Expect([]any{b.Status.Usage.Bytes, b.Status.Usage.Objects, b.Status.Usage.Size}).To(Equal([]any{int64(3500), int64(2), "3.4Ki"}))
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse), "%s: %s", cond.Reason, cond.Message)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(c.Status.Usage).To(Equal(&storagev1alpha1.ContractUsage{Bytes: 3500, Objects: 2, Size: "3.4Ki", Buckets: 1}))
		}).Should(Succeed())

		By("writing nothing to the Bucket while its usage stays the same, resync after resync")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		version := b.ResourceVersion
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			g.Expect(b.ResourceVersion).To(Equal(version))
		}, 3*time.Second).Should(Succeed())

		kubeconfig := filepath.Join(dir, "kubeconfig")
		Expect(stk.WriteKubeconfig(kubeconfig)).To(Succeed())
		out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "get", "buckets", "-n", ns).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(strings.Fields(strings.Split(string(out), "\n")[0])).To(ContainElements("SIZE", "OBJECTS"))
		Expect(strings.Fields(strings.Split(string(out), "\n")[1])).To(ContainElements("uploads", "True", "3.4Ki", "2"))

		By("turning QuotaNearlyFull True, with a warning, once the third object fills 100% of maxObjects")
		out2, err := upload("c.bin", 10)
		Expect(err).NotTo(HaveOccurred(), out2)
		Eventually(func(g Gomega) {
			cond := nearlyFull(g)
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cond.Reason).To(Equal(storagev1alpha1.ReasonQuotaNearlyFull))
			g.Expect(cond.Message).To(HavePrefix("Bucket " + b.Spec.BucketName + " holds 3.4Ki in 3 objects, against a quota of 3 objects: 100% full"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var events eventsv1.EventList
			g.Expect(k8s.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
			g.Expect(events.Items).To(ContainElement(And(
				HaveField("Regarding.Name", b.Name), HaveField("Reason", storagev1alpha1.ReasonQuotaNearlyFull), HaveField("Type", corev1.EventTypeWarning))))
		}).Should(Succeed())

		By("refusing the fourth upload at the server")
		out2, err = upload("d.bin", 10)
		Expect(err).To(HaveOccurred())
		// The AWS CLI (1.x) fails on RGW's QuotaExceeded answer, which has no Message, before it
		// can print it ("argument of type 'NoneType' is not iterable"); the SDK shows the code.
		_, err = owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.Spec.BucketName), Key: aws.String("d.bin"),
			Body: strings.NewReader("0123456789")})
		Expect(objectstore.ErrorCode(err)).To(Equal("QuotaExceeded"), "the fourth object through the SDK: %v (the CLI said %s)", err, out2)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(b.Status.Usage.Objects).To(Equal(int64(3)))
	})
})
