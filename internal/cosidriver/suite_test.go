package cosidriver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	cosiv1alpha1 "sigs.k8s.io/container-object-storage-interface-api/apis/objectstorage/v1alpha1"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
)

// One stack for the package: a control plane with COSI's CRDs, versitygw, the contract server
// and the manager, which buys the Contract every test's BucketClass names; and the driver,
// served on a unix socket and called through gRPC as the sidecar calls it.
var env struct {
	stk         *stack.Stack
	kube        client.Client // with COSI's types
	driver      *cosidriver.Driver
	records     string // the driver's record namespace
	contract    *storagev1alpha1.Contract
	account     objectstore.Config
	provisioner cosi.ProvisionerClient
	identity    cosi.IdentityClient
	socket      string
}

func TestMain(m *testing.M) {
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runSuite(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stk, err := stack.Start(ctx, stack.Options{})
	if err != nil {
		return 0, err
	}
	defer stk.Stop()
	env.stk = stk
	if err := stk.StartManager(); err != nil {
		return 0, err
	}
	if env.contract, err = buyContract(ctx, stk.Client); err != nil {
		return 0, err
	}
	crds, err := localenv.COSICRDs()
	if err != nil {
		return 0, err
	}
	if _, err := envtest.InstallCRDs(stk.Config, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		return 0, err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, storagev1alpha1.AddToScheme, cosiv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return 0, err
		}
	}
	if env.kube, err = client.New(stk.Config, client.Options{Scheme: scheme}); err != nil {
		return 0, err
	}
	records := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cosi-driver-"}}
	if err := stk.Client.Create(ctx, records); err != nil {
		return 0, err
	}
	env.records = records.Name
	var secret corev1.Secret
	if err := stk.Client.Get(ctx, client.ObjectKey{Namespace: env.contract.Namespace, Name: env.contract.Status.SecretName}, &secret); err != nil {
		return 0, err
	}
	env.account = objectstore.Config{Endpoint: env.contract.Status.Endpoint, Region: env.contract.Status.Region,
		AccessKeyID: string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), SecretAccessKey: string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey])}

	dir, err := os.MkdirTemp("", "cosi-driver-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	env.socket = filepath.Join(dir, "cosi.sock")
	gen, err := operator.NewContractAPIClient(stk.ManagerOptions)
	if err != nil {
		return 0, err
	}
	driver := cosidriver.New(cosidriver.Options{Kube: env.kube, RecordNamespace: env.records,
		Principals: contractclient.New(gen), Log: stderrLog()})
	env.driver = driver
	lis, err := cosidriver.Listen(env.socket)
	if err != nil {
		return 0, err
	}
	server := driver.Server()
	go func() { _ = server.Serve(lis) }()
	defer server.Stop()
	conn, err := grpc.NewClient("unix://"+env.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	env.provisioner, env.identity = cosi.NewProvisionerClient(conn), cosi.NewIdentityClient(conn)
	return m.Run(), nil
}

// buyContract makes a namespace and a Contract in it, and waits until the manager has bought it.
func buyContract(ctx context.Context, k8s client.Client) (*storagev1alpha1.Contract, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "platform-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		return nil, err
	}
	c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "cosi"},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
	if err := k8s.Create(ctx, c); err != nil {
		return nil, err
	}
	for {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
			return nil, err
		}
		if meta.IsStatusConditionTrue(c.Status.Conditions, storagev1alpha1.ReadyCondition) {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("Contract %s/%s never became Ready: %v", c.Namespace, c.Name, c.Status.Conditions)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// classParams are the parameters of a BucketClass naming the suite's Contract.
func classParams() map[string]string {
	return map[string]string{cosidriver.ParamContractNamespace: env.contract.Namespace, cosidriver.ParamContractName: env.contract.Name}
}

var bucketSeq int

// bucketName is a fresh bucket name for t.
func bucketName(t *testing.T) string {
	bucketSeq++
	return fmt.Sprintf("cosi-%d-%d", time.Now().UnixNano()%1_000_000_000, bucketSeq)
}

// s3With is an S3 client with a key pair on the Contract's endpoint.
func s3With(accessKeyID, secret string) *s3.Client {
	return localenv.NewS3Client(env.account.Endpoint, env.account.Region, accessKeyID, secret)
}

// accountS3 is an S3 client with the Contract's own keys.
func accountS3() *s3.Client { return s3With(env.account.AccessKeyID, env.account.SecretAccessKey) }

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

func list(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	return err
}

// refused says err is S3 refusing the key (403: access denied, or a key it does not know).
func refused(err error) bool {
	var resp interface{ HTTPStatusCode() int }
	return err != nil && errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusForbidden
}

// bucketExists asks with the account's keys.
func bucketExists(ctx context.Context, bucket string) (bool, error) {
	_, err := accountS3().HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	var resp interface{ HTTPStatusCode() int }
	if errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newG(t *testing.T) *WithT {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	return g
}

// stderrLog is the driver's log in the test's output: what a failing test shows next to it.
func stderrLog() logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}
