// Package cosi_test runs the COSI driver (cmd/cosi-driver) under COSI's own provisioner sidecar
// (v0.1.0, bin/cosi-sidecar) over a real API server with COSI's CRDs, versitygw and the reference
// contract server.
//
// COSI's central controller is not served anywhere this project can build from, so the test
// does its part: it creates the Bucket a BucketClaim of a BucketClass would get (name,
// driverName, parameters copied from the class, bucketClaim reference) and writes the claim's
// status.bucketName, as the controller does. Everything else is the sidecar's and the driver's.
package cosi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	cosiapi "sigs.k8s.io/container-object-storage-interface-api/apis"
	cosiv1alpha1 "sigs.k8s.io/container-object-storage-interface-api/apis/objectstorage/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

func TestDriverUnderTheRealSidecar(t *testing.T) {
	ctx, g, stk := running(t, 8*time.Minute)
	crds, err := localenv.COSICRDs()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(crds).To(HaveLen(5))
	_, err = envtest.InstallCRDs(stk.Config, envtest.CRDInstallOptions{CRDs: crds})
	g.Expect(err).NotTo(HaveOccurred())
	k8s := kubeClient(g, stk)

	// The platform team's Contract, whose account holds the class's buckets.
	platform := namespace(ctx, g, k8s, "platform-")
	contract := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "cosi"},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
	g.Expect(k8s.Create(ctx, contract)).To(Succeed())
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKeyFromObject(contract), contract) == nil &&
			meta.IsStatusConditionTrue(contract.Status.Conditions, storagev1alpha1.ReadyCondition)
	}).Should(BeTrue())
	var accountSecret corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: platform, Name: contract.Status.SecretName}, &accountSecret)).To(Succeed())
	account := localenv.NewS3Client(contract.Status.Endpoint, contract.Status.Region,
		string(accountSecret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(accountSecret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
	keyClient := func(info cosiapi.BucketInfo) *s3.Client {
		// v0.1.0's sidecar writes AWS's endpoint and us-west-1 into every BucketInfo,
		// whatever the driver answers (pkg/bucketaccess); the key is the driver's.
		return localenv.NewS3Client(contract.Status.Endpoint, contract.Status.Region, info.Spec.S3.AccessKeyID, info.Spec.S3.AccessSecretKey)
	}

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(stk.WriteKubeconfig(kubeconfig)).To(Succeed())
	socket := filepath.Join(dir, "cosi.sock")
	driver := startDriver(g, dir, "cosi-driver", kubeconfig, socket, stk)
	defer func() { _ = driver.Stop() }()
	sidecar := startSidecar(g, dir, kubeconfig, socket)
	defer func() { _ = sidecar.Stop() }()
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []process{driver, sidecar} {
				b, _ := os.ReadFile(p.log)
				t.Logf("%s:\n%s", p.log, b)
			}
		}
	})

	apps := namespace(ctx, g, k8s, "apps-")

	// Dynamic provisioning: a BucketClass naming this driver and the Contract, and the claim.
	class := &cosiv1alpha1.BucketClass{ObjectMeta: metav1.ObjectMeta{Name: "osm-" + platform},
		DriverName: cosidriver.DefaultName, DeletionPolicy: cosiv1alpha1.DeletionPolicyDelete,
		Parameters: map[string]string{cosidriver.ParamContractNamespace: platform, cosidriver.ParamContractName: contract.Name}}
	g.Expect(k8s.Create(ctx, class)).To(Succeed())
	claim := &cosiv1alpha1.BucketClaim{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "photos"},
		Spec: cosiv1alpha1.BucketClaimSpec{BucketClassName: class.Name, Protocols: []cosiv1alpha1.Protocol{cosiv1alpha1.ProtocolS3}}}
	g.Expect(k8s.Create(ctx, claim)).To(Succeed())
	// COSI's controller's part: the Bucket for the claim, and the claim's bucketName.
	bucket := &cosiv1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "cosi-" + apps, Finalizers: []string{sidecarBucketFinalizer}},
		Spec: cosiv1alpha1.BucketSpec{DriverName: class.DriverName, BucketClassName: class.Name,
			BucketClaim: &corev1.ObjectReference{Kind: "BucketClaim", Namespace: apps, Name: claim.Name, UID: claim.UID},
			Protocols:   claim.Spec.Protocols, Parameters: class.Parameters, DeletionPolicy: class.DeletionPolicy}}
	g.Expect(k8s.Create(ctx, bucket)).To(Succeed())
	claim.Status.BucketName = bucket.Name
	g.Expect(k8s.Status().Update(ctx, claim)).To(Succeed())

	// The sidecar asks the driver for the bucket, and it is there, on versitygw.
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKeyFromObject(bucket), bucket) == nil && bucket.Status.BucketReady
	}).Should(BeTrue(), "the COSI Bucket never became ready: see %s", driver.log)
	g.Expect(bucket.Status.BucketID).To(Equal(platform + "/" + contract.Name + "/" + bucket.Name))
	_, err = account.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket.Name)})
	g.Expect(err).NotTo(HaveOccurred(), "no bucket %s on versitygw", bucket.Name)
	// The controller's part again: v0.1.0's sidecar sets the claim's bucketReady with an update
	// of the claim itself, which the status subresource ignores.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
	claim.Status.BucketReady = true
	g.Expect(k8s.Status().Update(ctx, claim)).To(Succeed())
	g.Expect(put(ctx, account, bucket.Name, "hello.txt", "hello")).To(Succeed())

	// Access: a ReadOnly and a ReadWrite class, one BucketAccess each; the sidecar writes the
	// Secret with the BucketInfo from the driver's answer.
	readOnly := accessClass(ctx, g, k8s, "osm-read-only-"+apps, "ReadOnly")
	readWrite := accessClass(ctx, g, k8s, "osm-read-write-"+apps, "ReadWrite")
	reader := bucketAccess(ctx, g, k8s, apps, "reader", claim.Name, readOnly)
	writer := bucketAccess(ctx, g, k8s, apps, "writer", claim.Name, readWrite)
	readerInfo, writerInfo := bucketInfo(ctx, g, k8s, reader), bucketInfo(ctx, g, k8s, writer)
	g.Expect(readerInfo.Spec.BucketName).To(Equal(bucket.Name))
	g.Expect(readerInfo.Spec.S3.AccessKeyID).NotTo(BeEmpty())
	g.Expect(readerInfo.Spec.S3.AccessKeyID).NotTo(Equal(writerInfo.Spec.S3.AccessKeyID))
	readerS3, writerS3 := keyClient(readerInfo), keyClient(writerInfo)

	g.Expect(get(ctx, readerS3, bucket.Name, "hello.txt")).To(Equal("hello"))
	err = put(ctx, readerS3, bucket.Name, "by-reader.txt", "no")
	g.Expect(refused(err)).To(BeTrue(), "a ReadOnly key wrote: %v", err)
	g.Expect(put(ctx, writerS3, bucket.Name, "by-writer.txt", "yes")).To(Succeed())
	g.Expect(get(ctx, writerS3, bucket.Name, "by-writer.txt")).To(Equal("yes"))
	// The same with the AWS CLI, as a workload would use the BucketInfo's key.
	awsCLI := func(info cosiapi.BucketInfo, stdin string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "aws", append([]string{"--endpoint-url", contract.Status.Endpoint}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+info.Spec.S3.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+info.Spec.S3.AccessSecretKey,
			"AWS_REGION="+contract.Status.Region, "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null",
			"AWS_SHARED_CREDENTIALS_FILE=/dev/null", "HOME="+t.TempDir(),
			"AWS_REQUEST_CHECKSUM_CALCULATION=when_required", "AWS_RESPONSE_CHECKSUM_VALIDATION=when_required")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	_, err = exec.LookPath("aws")
	g.Expect(err).NotTo(HaveOccurred(), "the AWS CLI (aws) is not on PATH: `make deps` installs it (Debian package awscli)")
	out, err := awsCLI(readerInfo, "", "s3", "cp", "s3://"+bucket.Name+"/hello.txt", "-")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("hello"))
	out, err = awsCLI(readerInfo, "no", "s3", "cp", "-", "s3://"+bucket.Name+"/by-reader-cli.txt")
	g.Expect(err).To(HaveOccurred(), "the AWS CLI wrote with a ReadOnly key: %s", out)
	g.Expect(out).To(ContainSubstring("AccessDenied"))
	out, err = awsCLI(writerInfo, "yes", "s3", "cp", "-", "s3://"+bucket.Name+"/by-writer-cli.txt")
	g.Expect(err).NotTo(HaveOccurred(), out)

	// Revoking. v0.1.0's sidecar never calls DriverRevokeBucketAccess: deleting a BucketAccess
	// only drops its finalizers (pkg/bucketaccess, deleteBucketAccessOp). The driver follows the
	// deletion itself, from its grant records; its periodic sweep is ten minutes away, so what
	// revokes here is the watch.
	g.Expect(k8s.Delete(ctx, reader)).To(Succeed())
	g.Eventually(func() bool {
		_, err := get(ctx, readerS3, bucket.Name, "hello.txt")
		return refused(err)
	}).Should(BeTrue(), "the key of a deleted BucketAccess still reads: see %s", driver.log)
	g.Expect(get(ctx, writerS3, bucket.Name, "hello.txt")).To(Equal("hello"), "revoking the reader took the writer's access")

	// Static provisioning: the admin's Bucket for a bucket the account already has
	// (existingBucketID, in the driver's <contractNamespace>/<contractName>/<bucket> form, and
	// named as the bucket, since v0.1.0's sidecar writes the Bucket's name as BucketInfo's
	// bucketName), and a claim for it (existingBucketName).
	existing := "legacy-" + apps
	_, err = account.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(existing)})
	g.Expect(err).NotTo(HaveOccurred())
	staticClaim := &cosiv1alpha1.BucketClaim{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "legacy"},
		Spec: cosiv1alpha1.BucketClaimSpec{ExistingBucketName: existing, Protocols: []cosiv1alpha1.Protocol{cosiv1alpha1.ProtocolS3}}}
	g.Expect(k8s.Create(ctx, staticClaim)).To(Succeed())
	static := &cosiv1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: existing, Finalizers: []string{sidecarBucketFinalizer}},
		Spec: cosiv1alpha1.BucketSpec{DriverName: cosidriver.DefaultName, BucketClassName: class.Name,
			BucketClaim: &corev1.ObjectReference{Kind: "BucketClaim", Namespace: apps, Name: staticClaim.Name, UID: staticClaim.UID},
			Protocols:   []cosiv1alpha1.Protocol{cosiv1alpha1.ProtocolS3}, DeletionPolicy: cosiv1alpha1.DeletionPolicyRetain,
			ExistingBucketID: platform + "/" + contract.Name + "/" + existing}}
	g.Expect(k8s.Create(ctx, static)).To(Succeed())
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKeyFromObject(static), static) == nil && static.Status.BucketReady
	}).Should(BeTrue())
	g.Expect(static.Status.BucketID).To(Equal(static.Spec.ExistingBucketID))
	// The controller's part: it binds the claim to the admin's Bucket.
	staticClaim.Status = cosiv1alpha1.BucketClaimStatus{BucketName: static.Name, BucketReady: true}
	g.Expect(k8s.Status().Update(ctx, staticClaim)).To(Succeed())
	legacyWriter := bucketAccess(ctx, g, k8s, apps, "legacy-writer", staticClaim.Name, readWrite)
	legacyS3 := keyClient(bucketInfo(ctx, g, k8s, legacyWriter))
	g.Expect(put(ctx, legacyS3, existing, "from-cosi.txt", "static")).To(Succeed())
	g.Expect(get(ctx, account, existing, "from-cosi.txt")).To(Equal("static"))

	// A deletion the driver never saw: the writer's BucketAccess goes while the driver is down;
	// the driver, started again, revokes it in its first sweep.
	g.Expect(driver.Stop()).To(Succeed())
	g.Expect(k8s.Delete(ctx, writer)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(writer), writer)) }).Should(BeTrue())
	g.Expect(put(ctx, writerS3, bucket.Name, "while-down.txt", "the driver is down")).To(Succeed())
	restarted := startDriver(g, dir, "cosi-driver-restarted", kubeconfig, socket, stk)
	defer func() { _ = restarted.Stop() }()
	g.Eventually(func() bool { return refused(put(ctx, writerS3, bucket.Name, "late.txt", "no")) }).Should(BeTrue(),
		"the key of a BucketAccess deleted while the driver was down still writes: see %s", restarted.log)
	g.Expect(get(ctx, legacyS3, existing, "from-cosi.txt")).To(Equal("static"), "the sweep took a live BucketAccess's access")

	// Deleting the dynamic Bucket under deletionPolicy: Delete removes the bucket (emptied
	// first: the driver never empties one).
	// late.txt: the writer's key may have written it before the sweep revoked it.
	for _, key := range []string{"hello.txt", "by-writer.txt", "by-writer-cli.txt", "while-down.txt", "late.txt"} {
		_, err := account.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket.Name), Key: aws.String(key)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(k8s.Delete(ctx, bucket)).To(Succeed())
	g.Eventually(func() bool {
		_, err := account.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket.Name)})
		return notFound(err)
	}).Should(BeTrue(), "the bucket of a COSI Bucket deleted under Delete is still there: see %s", restarted.log)

	// No secret key in the driver's logs, which ran at debug level.
	for _, p := range []process{driver, restarted} {
		log, err := os.ReadFile(p.log)
		g.Expect(err).NotTo(HaveOccurred())
		for _, info := range []cosiapi.BucketInfo{readerInfo, writerInfo} {
			g.Expect(string(log)).NotTo(ContainSubstring(info.Spec.S3.AccessSecretKey))
		}
		g.Expect(string(log)).NotTo(ContainSubstring(string(accountSecret.Data[storagev1alpha1.SecretKeySecretAccessKey])))
		g.Expect(string(log)).NotTo(ContainSubstring("Revoking the access of deleted BucketAccesses"), "a sweep failed: see %s", p.log)
	}
}

// The finalizers v0.1.0's sidecar adds (its pkg/consts). It adds one with an update of the
// object as its event brought it, then writes the status from that same copy, which the API
// server refuses as a conflict whenever the first update changed anything; its retries reuse
// the stale copy, so the object never gets its status. The test creates Buckets and
// BucketAccesses with the finalizer already on, so that first update changes nothing and the
// status write goes through: a workaround for the sidecar, not something the driver needs.
const (
	sidecarBucketFinalizer = "cosi.objectstorage.k8s.io/bucket-protection"
	sidecarAccessFinalizer = "cosi.objectstorage.k8s.io/bucketaccess-protection"
)

// running starts the stack and its manager for one test, stopped when the test ends.
func running(t *testing.T, timeout time.Duration) (context.Context, Gomega, *stack.Stack) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(60 * time.Second)
	g.SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	stk, err := stack.Start(ctx, stack.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(stk.Stop)
	g.Expect(stk.StartManager()).To(Succeed())
	return ctx, g, stk
}

func kubeClient(g Gomega, stk *stack.Stack) client.Client {
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(storagev1alpha1.AddToScheme(scheme)).To(Succeed())
	g.Expect(cosiv1alpha1.AddToScheme(scheme)).To(Succeed())
	c, err := client.New(stk.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

type process struct {
	*localenv.Process
	log string
}

// startDriver builds cmd/cosi-driver and runs it as shipped, serving on socket, its log in
// dir/<name>.log. Its grant records go to the default namespace; it sweeps every ten minutes, so
// within a test only a watched deletion, or its first sweep, revokes.
func startDriver(g Gomega, dir, name, kubeconfig, socket string, stk *stack.Stack) process {
	root, err := localenv.ModuleRoot()
	g.Expect(err).NotTo(HaveOccurred())
	bin := filepath.Join(dir, "cosi-driver")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cosi-driver")
	build.Dir = root
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "building cmd/cosi-driver: %s", out)
	log := filepath.Join(dir, name+".log")
	p, err := localenv.StartProcess(name, log, bin, []string{
		"--kubeconfig=" + kubeconfig, "--socket=" + socket, "--record-namespace=default", "--revoke-period=10m",
		"--contract-api-url=" + stk.ManagerOptions.ContractAPIURL,
		"--contract-api-token-file=" + stk.ManagerOptions.ContractAPITokenFile,
		"--zap-log-level=debug",
	}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error { _, err := os.Stat(socket); return err }).Should(Succeed(), "the driver never served: see %s", log)
	return process{Process: p, log: log}
}

// startSidecar runs COSI's provisioner sidecar against the driver's socket. Its leader election
// lease goes to the default namespace (POD_NAMESPACE).
func startSidecar(g Gomega, dir, kubeconfig, socket string) process {
	bin := ensureSidecar(g)
	log := filepath.Join(dir, "cosi-sidecar.log")
	p, err := localenv.StartProcess("cosi-sidecar", log, bin, []string{
		"--kubeconfig=" + kubeconfig, "--driver-addr=unix://" + socket, "--v=5",
	}, []string{"POD_NAMESPACE=default"})
	g.Expect(err).NotTo(HaveOccurred())
	return process{Process: p, log: log}
}

// ensureSidecar builds the sidecar into bin/ unless it is there and current (hack/tools/build.sh
// decides), and returns its path. Only the COSI tests and make dev ARGS=--cosi need it, so
// `make tools` leaves it out.
func ensureSidecar(g Gomega) string {
	root, err := localenv.ModuleRoot()
	g.Expect(err).NotTo(HaveOccurred())
	binDir, err := localenv.BinDir()
	g.Expect(err).NotTo(HaveOccurred())
	bin := filepath.Join(binDir, "cosi-sidecar")
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(os.Stderr, "cosi: cosi-sidecar is not in %s: building it from the Go module proxy (hack/tools/build.sh cosi-sidecar)\n", binDir)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "tools", "build.sh"), "cosi-sidecar")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BIN_DIR="+binDir)
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "building cosi-sidecar: %s", out)
	return bin
}

func namespace(ctx context.Context, g Gomega, k8s client.Client, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func accessClass(ctx context.Context, g Gomega, k8s client.Client, name, access string) *cosiv1alpha1.BucketAccessClass {
	c := &cosiv1alpha1.BucketAccessClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: cosidriver.DefaultName,
		AuthenticationType: cosiv1alpha1.AuthenticationTypeKey, Parameters: map[string]string{cosidriver.ParamAccess: access}}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	return c
}

func bucketAccess(ctx context.Context, g Gomega, k8s client.Client, ns, name, claim string, class *cosiv1alpha1.BucketAccessClass) *cosiv1alpha1.BucketAccess {
	a := &cosiv1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: []string{sidecarAccessFinalizer}},
		Spec: cosiv1alpha1.BucketAccessSpec{BucketClaimName: claim, BucketAccessClassName: class.Name,
			CredentialsSecretName: name + "-bucket", Protocol: cosiv1alpha1.ProtocolS3}}
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	return a
}

// bucketInfo waits for the Secret the sidecar writes for a, and reads its BucketInfo.
func bucketInfo(ctx context.Context, g Gomega, k8s client.Client, a *cosiv1alpha1.BucketAccess) cosiapi.BucketInfo {
	var secret corev1.Secret
	g.Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.CredentialsSecretName}, &secret)
	}).Should(Succeed(), "no Secret for BucketAccess %s", a.Name)
	var info cosiapi.BucketInfo
	g.Expect(json.Unmarshal(secret.Data["BucketInfo"], &info)).To(Succeed())
	g.Expect(info.Spec.S3).NotTo(BeNil())
	return info
}

func put(ctx context.Context, c *s3.Client, bucket, key, body string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(body))})
	return err
}

func get(ctx context.Context, c *s3.Client, bucket, key string) (string, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func httpStatus(err error) int {
	var resp interface{ HTTPStatusCode() int }
	if errors.As(err, &resp) {
		return resp.HTTPStatusCode()
	}
	return 0
}

// refused: S3 answered 403 (access denied, or a key it does not know).
func refused(err error) bool { return err != nil && httpStatus(err) == http.StatusForbidden }

func notFound(err error) bool { return err != nil && httpStatus(err) == http.StatusNotFound }
