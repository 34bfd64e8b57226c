package sts_test

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// TestKeylessBucketAccessThroughTheOperator: a BucketAccess with authentication ServiceAccount,
// made through the operator on Ceph RGW with STS, yields a Secret whose variables alone (and
// the workload's token) let the AWS SDK read its bucket; it holds no key; deleting the
// BucketAccess deletes the role, so a fresh exchange fails.
func TestKeylessBucketAccessThroughTheOperator(t *testing.T) {
	ctx := t.Context()
	stk, kubeconfig := startKeylessOperator(t)
	c := stk.Client
	const ns = "team"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acct"},
			Spec: storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "photos"},
			Spec: storagev1alpha1.BucketSpec{BucketName: "team-photos", ContractName: "acct", BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger"},
			Spec: storagev1alpha1.BucketSpec{BucketName: "team-ledger", ContractName: "acct", BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	for _, name := range []string{"photos", "ledger"} {
		waitReady(t, c, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			func(o client.Object) []metav1.Condition { return o.(*storagev1alpha1.Bucket).Status.Conditions })
	}
	contractSecret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "acct-credentials"}, contractSecret); err != nil {
		t.Fatal(err)
	}
	owner := localenv.S3ClientOfSecret(contractSecret)
	for _, bucket := range []string{"team-photos", "team-ledger"} {
		if _, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("seed.txt"), Body: strings.NewReader("seed")}); err != nil {
			t.Fatalf("seeding %s: %v", bucket, err)
		}
	}

	a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-photos"},
		Spec: storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: storagev1alpha1.AccessReadOnly,
			Authentication: storagev1alpha1.AuthenticationServiceAccount, ServiceAccountName: "web"}}
	if err := c.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, a, func(o client.Object) []metav1.Condition { return o.(*storagev1alpha1.BucketAccess).Status.Conditions })
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.SecretNameOrDefault()}, secret); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for k, v := range secret.Data {
		env[k] = string(v)
	}
	keys := slices.Sorted(maps.Keys(env))
	t.Logf("Secret %s: %v, AWS_ROLE_ARN=%s", secret.Name, keys, env["AWS_ROLE_ARN"])
	want := []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_REGION", "AWS_ROLE_ARN", "OSM_TOKEN_AUDIENCE"}
	if !slices.Equal(keys, want) {
		t.Errorf("the Secret holds %v, want exactly %v", keys, want)
	}
	if env["AWS_ROLE_ARN"] != a.Status.RoleARN || env["OSM_TOKEN_AUDIENCE"] != audience {
		t.Errorf("AWS_ROLE_ARN %q, status.roleARN %q, audience %q", env["AWS_ROLE_ARN"], a.Status.RoleARN, env["OSM_TOKEN_AUDIENCE"])
	}

	token := func(sa string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "-n", ns, "create", "token", sa,
			"--audience", env["OSM_TOKEN_AUDIENCE"], "--duration", "10m").Output()
		if err != nil {
			t.Fatalf("kubectl create token %s: %v", sa, err)
		}
		return strings.TrimSpace(string(out))
	}
	s3c := sdkFromEnv(t, env, token("web"))
	got, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("team-photos"), Key: aws.String("seed.txt")})
	if err != nil {
		t.Fatalf("reading team-photos with the Secret's variables and the token: %v", err)
	}
	_ = got.Body.Close()
	if _, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("team-ledger"), Key: aws.String("seed.txt")}); apiCode(err) != "AccessDenied" {
		t.Errorf("reading team-ledger: %v, want AccessDenied", err)
	}

	if err := c.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(a), a)) {
		if time.Now().After(deadline) {
			t.Fatalf("the BucketAccess is not gone: %+v", a.Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err = sdkFromEnv(t, env, token("web")).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("team-photos")})
	if !refusedExchange(err) {
		t.Errorf("exchange after the BucketAccess was deleted: %v, want refused by RGW", err)
	}
}

// waitReady waits until obj is Ready=True, for at most two minutes.
func waitReady(t *testing.T, c client.Client, obj client.Object, conds func(client.Object) []metav1.Condition) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var last *metav1.Condition
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err == nil {
			if last = meta.FindStatusCondition(conds(obj), storagev1alpha1.ReadyCondition); last != nil && last.Status == metav1.ConditionTrue {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s is not Ready: %+v", obj.GetName(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startKeylessOperator starts Ceph RGW with STS, the issuer RGW trusts and the manager told of
// it, and writes a kubeconfig for kubectl (create token): what the tests through the operator
// share.
func startKeylessOperator(t *testing.T) (*stack.Stack, string) {
	t.Helper()
	stk, err := stack.Start(t.Context(), stack.Options{RGW: true, STS: true})
	if err != nil {
		t.Fatalf("starting the stack: %v", err)
	}
	t.Cleanup(stk.Stop)
	stk.ManagerOptions.OIDCIssuerURL = stk.OIDCIssuer.URL
	stk.ManagerOptions.OIDCAudience = audience
	stk.ManagerOptions.OIDCThumbprints = []string{stk.OIDCIssuer.Thumbprint}
	if err := stk.StartManager(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := stk.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	return stk, kubeconfig
}
