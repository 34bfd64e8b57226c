package storage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	cosiapi "sigs.k8s.io/container-object-storage-interface-api/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// Each format is checked the way its consumer reads it: the Secret's keys written out as the
// files a volume mount makes, and the real client run with nothing else than those files and
// the variable (or flag) it documents for finding them.
var _ = Describe("Secret formats", func() {
	It("gives the AWS CLI, rclone, s3cmd and COSI what each reads, and rewrites them all at a rotation", func(ctx SpecContext) {
		ns, acct, bucket := accountWithBucket(ctx, "photos")
		Expect(put(ctx, acct.s3, bucket, "cat.jpg")).To(Succeed())
		a := newAccess(ns, "app", "photos", storagev1alpha1.AccessReadWrite)
		a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatAWSFiles,
			storagev1alpha1.FormatCOSI, storagev1alpha1.FormatOBC, storagev1alpha1.FormatRclone, storagev1alpha1.FormatS3cfg}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		accessReady(ctx, a)
		clientsRead(ctx, a, bucket, "cat.jpg")

		By("the obc ConfigMap holds the connection and no key")
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("BUCKET_NAME", bucket))
		Expect(cm.Data).To(HaveKey("BUCKET_HOST"))
		Expect(cm.Data).To(HaveKey("BUCKET_PORT"))
		for k, v := range cm.Data {
			Expect(v).NotTo(ContainSubstring(a.Status.AccessKeyID), k)
		}

		By("a rotation rewrites every format at once, and every client reads the new key")
		first := a.Status.AccessKeyID
		Expect(patchAnnotation(ctx, a, storagev1alpha1.RotateKeyAnnotation, "1")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
			g.Expect(a.Status.AccessKeyID).NotTo(Equal(first))
		}).Should(Succeed())
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, secret)).To(Succeed())
		for k, v := range secret.Data {
			Expect(string(v)).NotTo(ContainSubstring(first), "%s still holds the replaced key", k)
		}
		clientsRead(ctx, a, bucket, "cat.jpg")

		By("formats no longer asked for leave the Secret, and the obc ConfigMap goes")
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatRclone}
		Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, secret)).To(Succeed())
			g.Expect(keysOf(secret.Data)).To(ConsistOf("rclone.conf"))
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the ConfigMap is still there: %v", err)
		}).Should(Succeed())
		accessReady(ctx, a)
		out, err := runClient(ctx, writeSecretFiles(secret), "rclone", []string{"RCLONE_CONFIG=rclone.conf"}, "lsf", "osm:"+bucket)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("cat.jpg"))
	})

	It("gives a Contract's Secret the formats it asks for, without a bucket", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		c := newContract(ns, "acct", func(c *storagev1alpha1.Contract) {
			c.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatS3cfg, storagev1alpha1.FormatEnv}
		})
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		b := newBucket(ns, "logs", "acct")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, secret)).To(Succeed())
		out, err := runClient(ctx, writeSecretFiles(secret), "s3cmd", nil, "-c", ".s3cfg", "ls")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("s3://" + b.Spec.BucketName))
	})
})

var _ = Describe("A BucketAccess limited to a prefix", func() {
	It("writes and lists under its prefix and is refused outside it, and restic backs up and restores there", func(ctx SpecContext) {
		ns, acct, bucket := accountWithBucket(ctx, "backups")
		Expect(put(ctx, acct.s3, bucket, "other/old.tar")).To(Succeed())
		Expect(put(ctx, acct.s3, bucket, "web/seed.txt")).To(Succeed())
		a := newAccess(ns, "web", "backups", storagev1alpha1.AccessReadWrite)
		a.Spec.Prefix = "web/"
		Expect(k8s.Create(ctx, a)).To(Succeed())
		key := accessReady(ctx, a)
		verified := meta.FindStatusCondition(a.Status.Conditions, storagev1alpha1.AccessVerifiedCondition)
		Expect(verified.Message).To(ContainSubstring(`under prefix "web/" list allowed, read allowed, write allowed; outside it list refused, read refused, write refused`))

		By("inside the prefix it lists, reads, writes and deletes")
		Expect(put(ctx, key, bucket, "web/new.txt")).To(Succeed())
		Expect(get(ctx, key, bucket, "web/seed.txt")).To(Succeed())
		_, err := key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("web/")})
		Expect(err).NotTo(HaveOccurred())
		Expect(del(ctx, key, bucket, "web/new.txt")).To(Succeed())

		By("outside it every request is refused: a whole-bucket listing, another prefix, reads, writes, deletes")
		Expect(s3Code(list(ctx, key, bucket))).To(Equal("AccessDenied"))
		_, err = key.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("other/")})
		Expect(s3Code(err)).To(Equal("AccessDenied"))
		Expect(s3Code(get(ctx, key, bucket, "other/old.tar"))).To(Equal("AccessDenied"))
		Expect(s3Code(put(ctx, key, bucket, "other/new.tar"))).To(Equal("AccessDenied"))
		Expect(s3Code(put(ctx, key, bucket, "webx/new.tar"))).To(Equal("AccessDenied"))
		Expect(s3Code(del(ctx, key, bucket, "other/old.tar"))).To(Equal("AccessDenied"))
		Expect(get(ctx, acct.s3, bucket, "other/old.tar")).To(Succeed())

		By("restic, with the env format's variables alone, backs up into the prefix and restores the same bytes")
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Status.SecretName}, secret)).To(Succeed())
		Expect(string(secret.Data["BUCKET_PREFIX"])).To(Equal("web/"))
		resticRoundTrip(ctx, secret)
		out, err := acct.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		Expect(err).NotTo(HaveOccurred())
		for _, o := range out.Contents {
			Expect(*o.Key).To(Or(HavePrefix("web/"), Equal("other/old.tar")), "restic wrote outside the prefix")
		}
	})
})

// accountWithBucket is a namespace of its own with a Ready Contract "acct" and a Ready Bucket
// of name, whose bucket it returns.
func accountWithBucket(ctx SpecContext, name string) (string, account, string) {
	GinkgoHelper()
	ns := newNamespace(ctx)
	acct := readyAccount(ctx, ns, "acct")
	b := newBucket(ns, name, "acct")
	Expect(k8s.Create(ctx, b)).To(Succeed())
	bucketReady(ctx, b)
	return ns, acct, b.Spec.BucketName
}

// clientsRead runs each format's client, with nothing but that format's files, against the
// BucketAccess's bucket, and expects each to list object.
func clientsRead(ctx SpecContext, a *storagev1alpha1.BucketAccess, bucket, object string) {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Status.SecretName}, secret)).To(Succeed())
	dir := writeSecretFiles(secret)
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{awsCLI(), []string{"AWS_SHARED_CREDENTIALS_FILE=credentials", "AWS_CONFIG_FILE=config"}, []string{"s3", "ls", "s3://" + bucket}},
		{"rclone", []string{"RCLONE_CONFIG=rclone.conf"}, []string{"lsf", "osm:" + bucket}},
		{"s3cmd", nil, []string{"-c", ".s3cfg", "ls", "s3://" + bucket}},
	} {
		out, err := runClient(ctx, dir, c.name, c.env, c.args...)
		Expect(err).NotTo(HaveOccurred(), "%s %s: %s", c.name, strings.Join(c.args, " "), out)
		Expect(out).To(ContainSubstring(object), "%s %s", c.name, strings.Join(c.args, " "))
	}

	By("COSI's BucketInfo reads back through COSI's own type, and holds the key in the Secret")
	var info cosiapi.BucketInfo
	Expect(json.Unmarshal(secret.Data["BucketInfo"], &info)).To(Succeed())
	Expect(info.Spec.BucketName).To(Equal(bucket))
	Expect(info.Spec.S3).NotTo(BeNil())
	Expect(info.Spec.S3.AccessKeyID).To(Equal(a.Status.AccessKeyID))
	s3c := s3.New(s3.Options{BaseEndpoint: aws.String(info.Spec.S3.Endpoint), Region: info.Spec.S3.Region, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: info.Spec.S3.AccessKeyID, SecretAccessKey: info.Spec.S3.AccessSecretKey}, nil
		})})
	Expect(get(ctx, s3c, info.Spec.BucketName, object)).To(Succeed())
	Expect(string(secret.Data["COSI_S3_ACCESS_KEY_ID"])).To(Equal(a.Status.AccessKeyID))
}

// resticRoundTrip backs a directory up with restic into the Secret's bucket under its prefix,
// with the Secret's variables as envFrom gives them, restores it elsewhere and compares.
func resticRoundTrip(ctx SpecContext, secret *corev1.Secret) {
	GinkgoHelper()
	// Debian 12's restic (0.14) gives up when the HEAD of the bucket in `restic init` is
	// refused, as it is for a key limited to a prefix; `make tools` builds a newer one.
	restic, err := localenv.Binary("restic")
	Expect(err).NotTo(HaveOccurred())
	data, restored := GinkgoT().TempDir(), GinkgoT().TempDir()
	Expect(os.WriteFile(filepath.Join(data, "orders.db"), []byte("orders v1\x00\x01"), 0o600)).To(Succeed())
	Expect(os.MkdirAll(filepath.Join(data, "media"), 0o700)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(data, "media", "logo.png"), []byte("png bytes"), 0o600)).To(Succeed())
	var env []string
	for k, v := range secret.Data {
		env = append(env, k+"="+string(v))
	}
	d := secret.Data
	repo := fmt.Sprintf("s3:%s/%s/%srestic", d["AWS_ENDPOINT_URL"], d["BUCKET_NAME"], d["BUCKET_PREFIX"])
	env = append(env, "RESTIC_REPOSITORY="+repo, "RESTIC_PASSWORD=not-a-secret", "RESTIC_CACHE_DIR="+GinkgoT().TempDir())
	for _, args := range [][]string{
		{"init"},
		{"backup", "--host", "test", "."},
		{"restore", "latest", "--target", restored},
	} {
		out, err := runClient(ctx, data, restic, env, args...)
		Expect(err).NotTo(HaveOccurred(), "restic %s: %s", strings.Join(args, " "), out)
	}
	for _, f := range []string{"orders.db", filepath.Join("media", "logo.png")} {
		want, err := os.ReadFile(filepath.Join(data, f))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.ReadFile(filepath.Join(restored, f))).To(Equal(want), f)
	}
}

// writeSecretFiles writes each of the Secret's keys to a file of its name, as a volume mount
// does, and returns the directory.
func writeSecretFiles(secret *corev1.Secret) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for k, v := range secret.Data {
		Expect(os.WriteFile(filepath.Join(dir, k), v, 0o600)).To(Succeed())
	}
	return dir
}

// runClient runs a client in dir with only PATH, HOME (where tools installed for the user
// live) and env: no AWS_* or other variable of this process reaches it.
func runClient(ctx context.Context, dir, name string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// awsCLI is an AWS CLI on PATH that takes the endpoint from the profile (endpoint_url: 1.29 and
// 2.13 on); Debian 12's awscli (2.9) does not, and fails the test.
func awsCLI() string {
	GinkgoHelper()
	var seen []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		path := filepath.Join(dir, "aws")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		out, _ := exec.Command(path, "--version").CombinedOutput()
		m := regexp.MustCompile(`aws-cli/(\d+)\.(\d+)`).FindStringSubmatch(string(out))
		if m == nil {
			continue
		}
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		if (major == 1 && minor >= 29) || (major == 2 && minor >= 13) || major > 2 {
			return path
		}
		seen = append(seen, path+": "+strings.TrimSpace(string(out)))
	}
	Fail(fmt.Sprintf("no AWS CLI on PATH reads endpoint_url from a profile (1.29+ or 2.13+); found %v", seen))
	return ""
}

func keysOf(data map[string][]byte) []string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	return keys
}
