package sts_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// audience is what the tokens are minted for and the contract's provider accepts.
const audience = "osm-sts-test"

// TestKeylessAccessOnCephRGW: a token kubectl creates for ns-a/sa-a, with the audience, gets
// credentials from RGW's STS through the AWS SDK with only AWS_ROLE_ARN,
// AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ENDPOINT_URL and AWS_REGION, reads its bucket and is refused
// another; a token of another ServiceAccount, another audience or another signer is refused;
// once the role is deleted, a fresh exchange fails.
func TestKeylessAccessOnCephRGW(t *testing.T) {
	ctx := t.Context()
	stk, err := stack.Start(ctx, stack.Options{RGW: true, STS: true})
	if err != nil {
		t.Fatalf("starting the stack: %v", err)
	}
	t.Cleanup(stk.Stop)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := stk.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := stk.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-a"}}); err != nil {
		t.Fatal(err)
	}
	for _, sa := range []string{"sa-a", "sa-b"} {
		if err := stk.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-a", Name: sa}}); err != nil {
			t.Fatal(err)
		}
	}

	// A contract and two buckets of its account, made with its keys.
	api, err := contractapi.NewClientWithResponses(stk.ContractAPI.URL, contractapi.WithBearerToken(stk.ContractAPI.Token))
	if err != nil {
		t.Fatal(err)
	}
	bought, err := api.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-keyless"}, contractapi.ContractRequest{Plan: "standard"})
	if err != nil || bought.JSON201 == nil {
		t.Fatalf("buying a contract: %v %s", err, bought.Body)
	}
	c := bought.JSON201
	owner := localenv.NewS3Client(c.Endpoint, c.Region, c.Credentials.AccessKeyId, c.Credentials.SecretAccessKey)
	for _, bucket := range []string{"photos", "ledger"} {
		if _, err := owner.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatalf("creating %s: %v", bucket, err)
		}
		if _, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("seed.txt"), Body: strings.NewReader("seed")}); err != nil {
			t.Fatalf("seeding %s: %v", bucket, err)
		}
	}

	p, err := api.PutOIDCProviderWithResponse(ctx, c.Id, contractapi.OIDCProviderRequest{IssuerUrl: stk.OIDCIssuer.URL,
		Audiences: []string{audience}, Thumbprints: []string{stk.OIDCIssuer.Thumbprint}})
	if err != nil || p.JSON201 == nil {
		t.Fatalf("putOIDCProvider: %v %s", err, p.Body)
	}
	r, err := api.PutRoleWithResponse(ctx, c.Id, "photos-reader", contractapi.RoleRequest{Subject: "system:serviceaccount:ns-a:sa-a",
		Grants: []contractapi.RoleGrant{{Bucket: "photos", Access: contractapi.ReadOnly}}})
	if err != nil || r.JSON201 == nil {
		t.Fatalf("putRole: %v %s", err, r.Body)
	}
	// AWS_ENDPOINT_URL_STS too: the Go SDK (config 1.33) builds the STS client of its web identity
	// provider before it reads AWS_ENDPOINT_URL, so without it the exchange goes to
	// sts.<region>.amazonaws.com.
	env := map[string]string{"AWS_ROLE_ARN": r.JSON201.Arn, "AWS_ENDPOINT_URL": c.Endpoint, "AWS_ENDPOINT_URL_STS": c.Endpoint, "AWS_REGION": c.Region}
	t.Logf("AWS_ROLE_ARN=%s AWS_ENDPOINT_URL=%s AWS_REGION=%s audience=%s", env["AWS_ROLE_ARN"], env["AWS_ENDPOINT_URL"], env["AWS_REGION"], audience)

	token := func(sa, aud string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "-n", "ns-a", "create", "token", sa,
			"--audience", aud, "--duration", "10m").Output()
		if err != nil {
			t.Fatalf("kubectl create token %s: %v", sa, err)
		}
		return strings.TrimSpace(string(out))
	}

	t.Run("the ServiceAccount's token reads its bucket and is refused another", func(t *testing.T) {
		s3c := sdkFromEnv(t, env, token("sa-a", audience))
		got, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("seed.txt")})
		if err != nil {
			t.Fatalf("reading photos: %v", err)
		}
		_ = got.Body.Close()
		t.Log("GetObject photos/seed.txt: allowed")
		for what, err := range map[string]error{
			"reading ledger": func() error {
				_, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ledger"), Key: aws.String("seed.txt")})
				return err
			}(),
			"writing photos": func() error {
				_, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("photos"), Key: aws.String("new.txt"), Body: strings.NewReader("x")})
				return err
			}(),
		} {
			if !forbidden(err) {
				t.Errorf("%s: %v, want 403 AccessDenied", what, err)
			}
			t.Logf("%s: %s", what, apiCode(err))
		}
	})

	otherSigner := forged(t, token("sa-a", audience))
	for what, tok := range map[string]string{
		"another ServiceAccount": token("sa-b", audience),
		"another audience":       token("sa-a", "sts.amazonaws.com"),
		"another signing key":    otherSigner,
	} {
		t.Run("a token of "+what+" is refused", func(t *testing.T) {
			err := listWith(ctx, sdkFromEnv(t, env, tok))
			if !refusedExchange(err) {
				t.Errorf("%s: %v, want the exchange refused by RGW", what, err)
			}
			t.Logf("%s: %v", what, err)
		})
	}

	t.Run("once the role is deleted a fresh exchange fails", func(t *testing.T) {
		if resp, err := api.DeleteRoleWithResponse(ctx, c.Id, "photos-reader"); err != nil || resp.StatusCode() != 204 {
			t.Fatalf("deleteRole: %v %v", err, resp)
		}
		err := listWith(ctx, sdkFromEnv(t, env, token("sa-a", audience)))
		if !refusedExchange(err) {
			t.Errorf("exchange after deleteRole: %v, want refused by RGW", err)
		}
		t.Logf("after deleteRole: %v", err)
	})
}

// sdkFromEnv is an S3 client that the AWS SDK builds from the environment alone: env, and the
// token in a file named by AWS_WEB_IDENTITY_TOKEN_FILE, as a projected volume gives a pod.
func sdkFromEnv(t *testing.T, env map[string]string, token string) *s3.Client {
	t.Helper()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", file)
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatalf("loading the SDK's configuration: %v", err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true; o.RetryMaxAttempts = 1 })
}

func listWith(ctx context.Context, c *s3.Client) error {
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("photos")})
	return err
}

// refusedExchange reports whether err is RGW's STS refusing AssumeRoleWithWebIdentity with a
// 4xx answer, not a failure to reach it.
func refusedExchange(err error) bool {
	var re *awshttp.ResponseError
	return err != nil && strings.Contains(err.Error(), "AssumeRoleWithWebIdentity") &&
		errors.As(err, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500
}

func apiCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// forged is token, claims and header as they are, signed with a key of its own: what someone
// without the cluster's key could make.
func forged(t *testing.T, token string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("a token of %d parts", len(parts))
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
}
