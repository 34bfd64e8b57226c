package contractserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

const testToken = "test-token"

// testEncryptionKey seals the secrets of every test server, so a restarted one reads them.
var testEncryptionKey = randomBytes(EncryptionKeySize)

// startGateway starts a versitygw for one test, stopped and removed when the test ends.
func startGateway(t *testing.T, opts localenv.VersityGWOptions) *localenv.VersityGW {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	gw, err := localenv.StartVersityGW(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(func() { _ = gw.Stop() })
	return gw
}

func gatewayBackend(t *testing.T, gw *localenv.VersityGW) *VersityGWBackend {
	t.Helper()
	b, err := NewVersityGWBackend(VersityGWConfig{
		S3Endpoint:     gw.Endpoint,
		Region:         gw.Region,
		AdminEndpoint:  gw.AdminEndpoint,
		AdminAccessKey: gw.RootAccessKey,
		AdminSecretKey: gw.RootSecretKey,
	})
	if err != nil {
		t.Fatalf("NewVersityGWBackend: %v", err)
	}
	return b
}

// testServer is a contract server on 127.0.0.1 with a client for it.
type testServer struct {
	srv    *Server
	http   *httptest.Server
	client contractapi.ClientWithResponsesInterface
}

// startServer runs New(cfg) behind httptest; cfg.Token (without a TokenFile), cfg.DataDir and
// cfg.EncryptionKey get test defaults.
func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.Token == "" && cfg.TokenFile == "" {
		cfg.Token = testToken
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.EncryptionKey == nil {
		cfg.EncryptionKey = testEncryptionKey
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	ts := &testServer{srv: srv, http: hs, client: newClient(t, hs.URL, cfg.Token)}
	t.Cleanup(ts.stop)
	return ts
}

// stop closes the HTTP server, then the store; safe to call twice.
func (ts *testServer) stop() {
	ts.http.Close()
	_ = ts.srv.Close()
}

func newClient(t *testing.T, url, token string) contractapi.ClientWithResponsesInterface {
	t.Helper()
	opts := []contractapi.ClientOption{}
	if token != "" {
		opts = append(opts, contractapi.WithBearerToken(token))
	}
	c, err := contractapi.NewClientWithResponses(url, opts...)
	if err != nil {
		t.Fatalf("NewClientWithResponses: %v", err)
	}
	return c
}

// s3As is an S3 client for the gateway signing with creds, path-style, without retries.
func s3As(gw *localenv.VersityGW, creds contractapi.Credentials) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint:     aws.String(gw.Endpoint),
		Region:           gw.Region,
		UsePathStyle:     true,
		Credentials:      credentials.NewStaticCredentialsProvider(creds.AccessKeyId, creds.SecretAccessKey, ""),
		RetryMaxAttempts: 1,
	})
}

func createContract(t *testing.T, c contractapi.ClientWithResponsesInterface, key string, req contractapi.ContractRequest) *contractapi.ContractWithCredentials {
	t.Helper()
	resp, err := c.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: key}, req)
	if err != nil {
		t.Fatalf("createContract: %v", err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("createContract: got %s, want 201: %s", resp.Status(), resp.Body)
	}
	return resp.JSON201
}

// wantProblem checks an error answer: status, problem type and content type.
func wantProblem(t *testing.T, what string, httpResp *http.Response, problem *contractapi.Problem, status int, typ contractapi.ProblemType) {
	t.Helper()
	if httpResp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d", what, httpResp.StatusCode, status)
	}
	if ct := httpResp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	if problem == nil {
		t.Fatalf("%s: no problem document parsed", what)
	}
	if problem.Type != typ || problem.Status != status || problem.Title == "" {
		t.Errorf("%s: problem %+v, want type %s status %d and a title", what, *problem, typ, status)
	}
}

// s3ErrorCode is the S3 error code of err, or "" when err is not an S3 error.
func s3ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func useKeys(ctx context.Context, client *s3.Client, bucket string) error {
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return err
	}
	_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("hello.txt"), Body: strings.NewReader("hello")})
	return err
}

func contains(s, sub string) bool { return sub != "" && strings.Contains(s, sub) }

func itoa(i int) string { return strconv.Itoa(i) }
