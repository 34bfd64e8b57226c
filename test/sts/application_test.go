package sts_test

import (
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// TestKeylessApplicationThroughTheOperator: an Application with authentication ServiceAccount,
// on Ceph RGW with STS, gets a Deployment whose container environment (its values, and the
// Secret values its references name) and a token of the Application's ServiceAccount minted for
// the projected volume's audience let the AWS SDK read both linked Buckets, and only what the
// links allow: a Bucket it does not link is refused, and so is a write to its ReadOnly link.
func TestKeylessApplicationThroughTheOperator(t *testing.T) {
	ctx := t.Context()
	stk, kubeconfig := startKeylessOperator(t)
	c := stk.Client
	const ns = "team"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acct"},
			Spec: storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	for _, name := range []string{"photos", "logs", "ledger"} {
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: storagev1alpha1.BucketSpec{BucketName: "team-" + name, ContractName: "acct", BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete}}
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		waitReady(t, c, b, func(o client.Object) []metav1.Condition { return o.(*storagev1alpha1.Bucket).Status.Conditions })
	}
	contractSecret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "acct-credentials"}, contractSecret); err != nil {
		t.Fatal(err)
	}
	owner := localenv.S3ClientOfSecret(contractSecret)
	for _, bucket := range []string{"team-photos", "team-logs", "team-ledger"} {
		if _, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("seed.txt"), Body: strings.NewReader("seed")}); err != nil {
			t.Fatalf("seeding %s: %v", bucket, err)
		}
	}

	app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Authentication: storagev1alpha1.AuthenticationServiceAccount,
			Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs", Access: storagev1alpha1.AccessReadOnly}}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
		func(o client.Object) []metav1.Condition { return o.(*storagev1alpha1.BucketAccess).Status.Conditions })
	d := &appsv1.Deployment{}
	deadline := time.Now().Add(time.Minute)
	for c.Get(ctx, client.ObjectKeyFromObject(app), d) != nil {
		if time.Now().After(deadline) {
			t.Fatal("no Deployment for the Application")
		}
		time.Sleep(200 * time.Millisecond)
	}

	// What the kubelet would give the container: its env, references resolved, and the token
	// of the pod's ServiceAccount for the projected volume's audience, where the env says.
	pod := d.Spec.Template.Spec
	if len(pod.Volumes) != 1 || pod.Volumes[0].Projected == nil || len(pod.Volumes[0].Projected.Sources) != 1 ||
		pod.Volumes[0].Projected.Sources[0].ServiceAccountToken == nil {
		t.Fatalf("the pod has volumes %+v, want one projected ServiceAccount token", pod.Volumes)
	}
	projected := pod.Volumes[0].Projected.Sources[0].ServiceAccountToken
	container := pod.Containers[0]
	env := map[string]string{}
	for _, e := range container.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s := &corev1.Secret{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, s); err != nil {
				t.Fatal(err)
			}
			env[e.Name] = string(s.Data[ref.Key])
		default:
			t.Fatalf("env %s has a source the test does not resolve: %+v", e.Name, e.ValueFrom)
		}
	}
	for name := range env {
		if strings.HasSuffix(name, "ACCESS_KEY_ID") || strings.HasSuffix(name, "SECRET_ACCESS_KEY") {
			t.Errorf("the keyless container gets %s", name)
		}
	}
	if len(container.VolumeMounts) != 1 || env["AWS_WEB_IDENTITY_TOKEN_FILE"] != container.VolumeMounts[0].MountPath+"/"+projected.Path {
		t.Fatalf("AWS_WEB_IDENTITY_TOKEN_FILE %q, mounts %+v, token path %q", env["AWS_WEB_IDENTITY_TOKEN_FILE"], container.VolumeMounts, projected.Path)
	}
	if projected.Audience != audience {
		t.Errorf("the projected token's audience is %q, want the manager's %q", projected.Audience, audience)
	}
	out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "-n", ns, "create", "token", pod.ServiceAccountName,
		"--audience", projected.Audience, "--duration", "10m").Output()
	if err != nil {
		t.Fatalf("kubectl create token %s: %v", pod.ServiceAccountName, err)
	}
	s3c := sdkFromEnv(t, env, strings.TrimSpace(string(out)))

	for _, prefix := range []string{"PHOTOS_", "LOGS_"} {
		got, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(env[prefix+"BUCKET"]), Key: aws.String("seed.txt")})
		if err != nil {
			t.Fatalf("reading %s with the container's environment and the token: %v", env[prefix+"BUCKET"], err)
		}
		_ = got.Body.Close()
	}
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(env["PHOTOS_BUCKET"]), Key: aws.String("new.txt"),
		Body: strings.NewReader("x")}); err != nil {
		t.Errorf("writing team-photos, linked ReadWrite: %v", err)
	}
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(env["LOGS_BUCKET"]), Key: aws.String("new.txt"),
		Body: strings.NewReader("x")}); !forbidden(err) {
		t.Errorf("writing team-logs, linked ReadOnly: %v, want 403 AccessDenied", err)
	}
	if _, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("team-ledger"), Key: aws.String("seed.txt")}); apiCode(err) != "AccessDenied" {
		t.Errorf("reading team-ledger, not linked: %v, want AccessDenied", err)
	}
}

// forbidden reports whether err is a 403 answer. RGW refuses a PUT before it has read the body
// and may close the connection before its error document is read, so the code alone is not
// always there.
func forbidden(err error) bool {
	var re *awshttp.ResponseError
	return apiCode(err) == "AccessDenied" || (errors.As(err, &re) && re.HTTPStatusCode() == http.StatusForbidden)
}
