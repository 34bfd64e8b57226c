package contractserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

func TestCreateGetAndUseContract(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	ctx := t.Context()

	req := contractapi.ContractRequest{
		Plan:        "standard",
		DisplayName: aws.String("Team A"),
		Requester:   &contractapi.Requester{Namespace: aws.String("team-a"), Name: aws.String("main")},
	}
	created := createContract(t, ts.client, "uid-create", req)
	if created.State != contractapi.Active || created.Endpoint != gw.Endpoint || created.Region != gw.Region || created.Plan != "standard" {
		t.Errorf("created contract %+v: want active, endpoint %s, region %s, plan standard", created, gw.Endpoint, gw.Region)
	}
	if created.Credentials.AccessKeyId == "" || len(created.Credentials.SecretAccessKey) < 40 {
		t.Errorf("credentials %q/(%d chars): want an id and a secret of at least 40 characters",
			created.Credentials.AccessKeyId, len(created.Credentials.SecretAccessKey))
	}

	got, err := ts.client.GetContractWithResponse(ctx, created.Id)
	if err != nil {
		t.Fatalf("GetContract: %v", err)
	}
	if got.JSON200 == nil {
		t.Fatalf("GetContract: %s: %s", got.Status(), got.Body)
	}
	want := contractapi.Contract{
		Id:          created.Id,
		State:       contractapi.Active,
		Endpoint:    gw.Endpoint,
		Region:      gw.Region,
		Plan:        "standard",
		DisplayName: aws.String("Team A"),
		Requester:   req.Requester,
		CreatedAt:   created.CreatedAt,
		AccessKeys:  []contractapi.AccessKey{{AccessKeyId: created.Credentials.AccessKeyId, CreatedAt: created.CreatedAt}},
		// versitygw names the account by its key and judges the owner by the policy alone.
		BucketPolicy: &contractapi.BucketPolicyForm{ResourcePrefix: "arn:aws:s3:::",
			OwnerPrincipal: map[string]string{"AWS": created.Credentials.AccessKeyId}, OwnerNeedsAllow: true},
		// A versitygw user is its key: the account cannot hold a second one.
		KeyRotation: &contractapi.KeyRotationSupport{Supported: false,
			Detail: aws.String("versitygw accounts hold one key pair (a versitygw user is its access key)")},
	}
	if diff := cmp.Diff(want, *got.JSON200); diff != "" {
		t.Errorf("GetContract (-want +got):\n%s", diff)
	}
	if body := string(got.Body); contains(body, created.Credentials.SecretAccessKey) || contains(body, "secretAccessKey") {
		t.Errorf("GetContract returned a secret: %s", body)
	}

	// The keys work on the gateway: make a bucket with an object, then remove both.
	user := s3As(gw, created.Credentials)
	if err := useKeys(ctx, user, "team-a-data"); err != nil {
		t.Fatalf("using the contract's keys: %v", err)
	}
	if _, err := user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("team-a-data"), Key: aws.String("hello.txt")}); err != nil {
		t.Fatalf("DeleteObject: %v", err)
	}
	if _, err := user.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("team-a-data")}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}

	missing, err := ts.client.GetContractWithResponse(ctx, "nosuchcontract")
	if err != nil {
		t.Fatalf("GetContract: %v", err)
	}
	wantProblem(t, "get unknown contract", missing.HTTPResponse, missing.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
}

func TestCreateIsIdempotent(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw), Plans: []Plan{{Name: "standard"}, {Name: "other"}}})
	ctx := t.Context()
	req := contractapi.ContractRequest{Plan: "standard", DisplayName: aws.String("x")}
	first := createContract(t, ts.client, "uid-idem", req)

	replay, err := ts.client.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-idem"}, req)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if replay.JSON200 == nil {
		t.Fatalf("replay: %s, want 200: %s", replay.Status(), replay.Body)
	}
	if diff := cmp.Diff(*first, *replay.JSON200); diff != "" {
		t.Errorf("replay returned another contract (-first +replay):\n%s", diff)
	}

	// The display name only describes the contract: a replay after the caller changed it still
	// gets the same contract.
	for name, body := range map[string]contractapi.ContractRequest{
		"other display name": {Plan: "standard", DisplayName: aws.String("y")},
		"display name gone":  {Plan: "standard"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := ts.client.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-idem"}, body)
			if err != nil {
				t.Fatalf("CreateContract: %v", err)
			}
			if resp.JSON200 == nil || resp.JSON200.Id != first.Id || resp.JSON200.Credentials != first.Credentials {
				t.Errorf("replay with %s: %s %s, want 200 with contract %s", name, resp.Status(), resp.Body, first.Id)
			}
		})
	}

	reuses := map[string]contractapi.ContractRequest{
		"other plan":   {Plan: "other", DisplayName: aws.String("x")},
		"region added": {Plan: "standard", DisplayName: aws.String("x"), Region: aws.String(gw.Region)},
	}
	for name, body := range reuses {
		t.Run(name, func(t *testing.T) {
			resp, err := ts.client.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-idem"}, body)
			if err != nil {
				t.Fatalf("CreateContract: %v", err)
			}
			wantProblem(t, "key reuse", resp.HTTPResponse, resp.ApplicationproblemJSON422, http.StatusUnprocessableEntity, contractapi.ProblemIdempotencyKeyReuse)
		})
	}

	other := createContract(t, ts.client, "uid-idem-2", req)
	if other.Id == first.Id || other.Credentials == first.Credentials {
		t.Errorf("a new Idempotency-Key returned the first contract again")
	}
}

func TestCreateRefusesBadRequests(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	tests := []struct {
		name   string
		key    string
		req    contractapi.ContractRequest
		status int
		typ    contractapi.ProblemType
	}{
		{"unknown plan", "k1", contractapi.ContractRequest{Plan: "gold"}, http.StatusUnprocessableEntity, contractapi.ProblemUnknownPlan},
		{"unsupported region", "k2", contractapi.ContractRequest{Plan: "standard", Region: aws.String("mars-1")}, http.StatusUnprocessableEntity, contractapi.ProblemUnsupportedRegion},
		{"no plan", "k3", contractapi.ContractRequest{}, http.StatusBadRequest, contractapi.ProblemInvalidRequest},
		{"empty Idempotency-Key", "", contractapi.ContractRequest{Plan: "standard"}, http.StatusBadRequest, contractapi.ProblemInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := ts.client.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: tt.key}, tt.req)
			if err != nil {
				t.Fatalf("CreateContract: %v", err)
			}
			p := resp.ApplicationproblemJSON422
			if tt.status == http.StatusBadRequest {
				p = resp.ApplicationproblemJSON400
			}
			wantProblem(t, tt.name, resp.HTTPResponse, p, tt.status, tt.typ)
		})
	}
	// A refused request records nothing: the key is still free for a valid request.
	createContract(t, ts.client, "k1", contractapi.ContractRequest{Plan: "standard"})
}

func TestAuthentication(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	created := createContract(t, ts.client, "uid-auth", contractapi.ContractRequest{Plan: "standard"})

	for name, token := range map[string]string{"no token": "", "wrong token": "not-the-token"} {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, ts.http.URL, token)
			ctx := t.Context()
			get, err := c.GetContractWithResponse(ctx, created.Id)
			if err != nil {
				t.Fatalf("GetContract: %v", err)
			}
			wantProblem(t, "get", get.HTTPResponse, get.ApplicationproblemJSON401, http.StatusUnauthorized, contractapi.ProblemUnauthorized)

			create, err := c.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-auth"}, contractapi.ContractRequest{Plan: "standard"})
			if err != nil {
				t.Fatalf("CreateContract: %v", err)
			}
			wantProblem(t, "create", create.HTTPResponse, create.ApplicationproblemJSON401, http.StatusUnauthorized, contractapi.ProblemUnauthorized)
			if contains(string(create.Body), created.Credentials.SecretAccessKey) {
				t.Errorf("an unauthenticated replay returned the secret")
			}

			cancel, err := c.CancelContractWithResponse(ctx, created.Id, &contractapi.CancelContractParams{Force: aws.Bool(true)})
			if err != nil {
				t.Fatalf("CancelContract: %v", err)
			}
			wantProblem(t, "cancel", cancel.HTTPResponse, cancel.ApplicationproblemJSON401, http.StatusUnauthorized, contractapi.ProblemUnauthorized)
		})
	}
	// Nothing above changed the contract.
	got, err := ts.client.GetContractWithResponse(t.Context(), created.Id)
	if err != nil || got.JSON200 == nil || got.JSON200.State != contractapi.Active {
		t.Fatalf("after refused requests: %v %v, want an active contract", err, got.Status())
	}
}

func TestKeys(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	ctx := t.Context()
	created := createContract(t, ts.client, "uid-keys", contractapi.ContractRequest{Plan: "standard"})

	// versitygw accounts have a single key: adding one is not supported, and records nothing.
	add, err := ts.client.AddKeyWithResponse(ctx, created.Id, &contractapi.AddKeyParams{IdempotencyKey: "rotation-1"})
	if err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	wantProblem(t, "add key", add.HTTPResponse, add.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	if detail := add.ApplicationproblemJSON501.Detail; detail == nil || !strings.Contains(*detail, "versitygw accounts hold one key pair") {
		t.Errorf("add key refused with detail %v, want one that says versitygw accounts hold one key pair", detail)
	}
	replay, err := ts.client.AddKeyWithResponse(ctx, created.Id, &contractapi.AddKeyParams{IdempotencyKey: "rotation-1"})
	if err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	wantProblem(t, "add key again", replay.HTTPResponse, replay.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)

	last, err := ts.client.RemoveKeyWithResponse(ctx, created.Id, created.Credentials.AccessKeyId)
	if err != nil {
		t.Fatalf("RemoveKey: %v", err)
	}
	wantProblem(t, "remove last key", last.HTTPResponse, last.ApplicationproblemJSON409, http.StatusConflict, contractapi.ProblemLastKey)

	unknown, err := ts.client.RemoveKeyWithResponse(ctx, created.Id, "OSMKNOSUCHKEY")
	if err != nil {
		t.Fatalf("RemoveKey: %v", err)
	}
	wantProblem(t, "remove unknown key", unknown.HTTPResponse, unknown.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)

	got, err := ts.client.GetContractWithResponse(ctx, created.Id)
	if err != nil || got.JSON200 == nil {
		t.Fatalf("GetContract: %v", err)
	}
	if n := len(got.JSON200.AccessKeys); n != 1 {
		t.Errorf("contract has %d keys after the refused calls, want 1", n)
	}
	if kr := got.JSON200.KeyRotation; kr == nil || kr.Supported || kr.Detail == nil || !strings.Contains(*kr.Detail, "versitygw accounts hold one key pair") {
		t.Errorf("keyRotation %+v, want unsupported, saying versitygw accounts hold one key pair", kr)
	}
	if err := useKeys(ctx, s3As(gw, created.Credentials), "still-works"); err != nil {
		t.Errorf("the first key stopped working: %v", err)
	}

	cancelContract(t, ts.client, created.Id, true)
	afterAdd, err := ts.client.AddKeyWithResponse(ctx, created.Id, &contractapi.AddKeyParams{IdempotencyKey: "rotation-2"})
	if err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	wantProblem(t, "add key to cancelled", afterAdd.HTTPResponse, afterAdd.ApplicationproblemJSON409, http.StatusConflict, contractapi.ProblemContractCancelled)
	afterRemove, err := ts.client.RemoveKeyWithResponse(ctx, created.Id, created.Credentials.AccessKeyId)
	if err != nil {
		t.Fatalf("RemoveKey: %v", err)
	}
	wantProblem(t, "remove key of cancelled", afterRemove.HTTPResponse, afterRemove.ApplicationproblemJSON409, http.StatusConflict, contractapi.ProblemContractCancelled)
}

func TestCancel(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	ctx := t.Context()

	t.Run("without buckets", func(t *testing.T) {
		created := createContract(t, ts.client, "uid-cancel-empty", contractapi.ContractRequest{Plan: "standard"})
		cancelContract(t, ts.client, created.Id, false)
		wantKeysRejected(t, gw, created.Credentials)
	})

	t.Run("with buckets", func(t *testing.T) {
		req := contractapi.ContractRequest{Plan: "standard"}
		created := createContract(t, ts.client, "uid-cancel-full", req)
		user := s3As(gw, created.Credentials)
		for _, b := range []string{"full-one", "full-two"} {
			if err := useKeys(ctx, user, b); err != nil {
				t.Fatalf("using the contract's keys: %v", err)
			}
		}

		refused, err := ts.client.CancelContractWithResponse(ctx, created.Id, &contractapi.CancelContractParams{})
		if err != nil {
			t.Fatalf("CancelContract: %v", err)
		}
		wantProblem(t, "cancel with buckets", refused.HTTPResponse, refused.ApplicationproblemJSON409, http.StatusConflict, contractapi.ProblemContractHasBuckets)
		if _, err := user.ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
			t.Fatalf("a refused cancel broke the keys: %v", err)
		}

		cancelContract(t, ts.client, created.Id, true)
		wantKeysRejected(t, gw, created.Credentials)
		root := s3As(gw, contractapi.Credentials{AccessKeyId: gw.RootAccessKey, SecretAccessKey: gw.RootSecretKey})
		out, err := root.ListBuckets(ctx, &s3.ListBucketsInput{})
		if err != nil {
			t.Fatalf("ListBuckets as root: %v", err)
		}
		for _, b := range out.Buckets {
			t.Errorf("bucket %q survived the forced cancel", aws.ToString(b.Name))
		}

		got, err := ts.client.GetContractWithResponse(ctx, created.Id)
		if err != nil || got.JSON200 == nil {
			t.Fatalf("GetContract: %v", err)
		}
		if c := got.JSON200; c.State != contractapi.Cancelled || c.CancelledAt == nil || len(c.AccessKeys) != 0 {
			t.Errorf("cancelled contract: state %s, cancelledAt %v, %d keys; want cancelled, a time, no keys", c.State, c.CancelledAt, len(c.AccessKeys))
		}

		// Cancelling again is a no-op, and a replay of the creation still names the same contract.
		cancelContract(t, ts.client, created.Id, false)
		replay, err := ts.client.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-cancel-full"}, req)
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		if replay.JSON200 == nil || replay.JSON200.Id != created.Id || replay.JSON200.State != contractapi.Cancelled {
			t.Errorf("replay after cancel: %s %s, want 200 with the cancelled contract", replay.Status(), replay.Body)
		}
	})

	missing, err := ts.client.CancelContractWithResponse(ctx, "nosuchcontract", &contractapi.CancelContractParams{})
	if err != nil {
		t.Fatalf("CancelContract: %v", err)
	}
	wantProblem(t, "cancel unknown", missing.HTTPResponse, missing.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
}

func TestRestartKeepsContracts(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	backend := gatewayBackend(t, gw)
	dir := t.TempDir()
	req := contractapi.ContractRequest{Plan: "standard"}

	first := startServer(t, Config{Backend: backend, DataDir: dir})
	created := createContract(t, first.client, "uid-restart", req)
	first.stop()

	second := startServer(t, Config{Backend: backend, DataDir: dir})
	got, err := second.client.GetContractWithResponse(t.Context(), created.Id)
	if err != nil {
		t.Fatalf("GetContract: %v", err)
	}
	if got.JSON200 == nil || got.JSON200.State != contractapi.Active {
		t.Fatalf("after restart: %s %s, want the active contract", got.Status(), got.Body)
	}
	replay, err := second.client.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: "uid-restart"}, req)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if replay.JSON200 == nil {
		t.Fatalf("replay after restart: %s, want 200: %s", replay.Status(), replay.Body)
	}
	if diff := cmp.Diff(*created, *replay.JSON200); diff != "" {
		t.Errorf("replay after restart (-before +after):\n%s", diff)
	}
}

func TestBackendUnavailable(t *testing.T) {
	t.Run("closed port", func(t *testing.T) {
		port, err := localenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://127.0.0.1:" + itoa(port)
		backend, err := NewVersityGWBackend(VersityGWConfig{
			S3Endpoint: closed, AdminEndpoint: closed, Region: "us-east-1",
			AdminAccessKey: "admin", AdminSecretKey: "secret",
		})
		if err != nil {
			t.Fatal(err)
		}
		ts := startServer(t, Config{Backend: backend})
		resp, err := ts.client.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: "uid-down"}, contractapi.ContractRequest{Plan: "standard"})
		if err != nil {
			t.Fatalf("CreateContract: %v", err)
		}
		wantProblem(t, "create with the backend down", resp.HTTPResponse, resp.ApplicationproblemJSON503, http.StatusServiceUnavailable, contractapi.ProblemBackendUnavailable)
		if resp.Headers503 == nil || resp.Headers503.RetryAfter < 1 {
			t.Errorf("503 without a Retry-After: %v", resp.HTTPResponse.Header)
		}
	})

	// A creation that fails at the backend is finished by its retry once the gateway is back,
	// with the credentials recorded the first time and without a second account.
	t.Run("gateway stopped and restarted", func(t *testing.T) {
		opts := localenv.VersityGWOptions{Dir: t.TempDir()}
		var err error
		if opts.Port, err = localenv.FreePort(); err != nil {
			t.Fatal(err)
		}
		if opts.AdminPort, err = localenv.FreePort(); err != nil {
			t.Fatal(err)
		}
		opts.RootAccessKey, opts.RootSecretKey = "rootaccess", "rootsecret1234567890"
		gw := startGateway(t, opts)
		ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
		ctx := t.Context()
		live := createContract(t, ts.client, "uid-live", contractapi.ContractRequest{Plan: "standard"})

		if err := gw.Stop(); err != nil {
			t.Fatal(err)
		}
		req := contractapi.ContractRequest{Plan: "standard"}
		down, err := ts.client.CreateContractWithResponse(ctx, &contractapi.CreateContractParams{IdempotencyKey: "uid-retry"}, req)
		if err != nil {
			t.Fatalf("CreateContract: %v", err)
		}
		wantProblem(t, "create with the gateway stopped", down.HTTPResponse, down.ApplicationproblemJSON503, http.StatusServiceUnavailable, contractapi.ProblemBackendUnavailable)
		if down.Headers503 == nil || down.Headers503.RetryAfter < 1 {
			t.Errorf("503 without a Retry-After: %v", down.HTTPResponse.Header)
		}
		cancel, err := ts.client.CancelContractWithResponse(ctx, live.Id, &contractapi.CancelContractParams{})
		if err != nil {
			t.Fatalf("CancelContract: %v", err)
		}
		wantProblem(t, "cancel with the gateway stopped", cancel.HTTPResponse, cancel.ApplicationproblemJSON503, http.StatusServiceUnavailable, contractapi.ProblemBackendUnavailable)
		// Reading needs only the records.
		if got, err := ts.client.GetContractWithResponse(ctx, live.Id); err != nil || got.JSON200 == nil {
			t.Errorf("GetContract with the gateway stopped: %v", err)
		}

		gw = startGateway(t, opts)
		retried := createContract(t, ts.client, "uid-retry", req)
		if err := useKeys(ctx, s3As(gw, retried.Credentials), "after-retry"); err != nil {
			t.Errorf("keys of the retried contract: %v", err)
		}
		if err := useKeys(ctx, s3As(gw, live.Credentials), "kept-across-restart"); err != nil {
			t.Errorf("keys made before the gateway restart: %v", err)
		}
	})
}

func TestRateLimit(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw), RequestsPerSecond: 0.5, Burst: 1})
	ctx := t.Context()
	if _, err := ts.client.GetContractWithResponse(ctx, "any"); err != nil {
		t.Fatalf("GetContract: %v", err)
	}
	resp, err := ts.client.GetContractWithResponse(ctx, "any")
	if err != nil {
		t.Fatalf("GetContract: %v", err)
	}
	wantProblem(t, "second request", resp.HTTPResponse, resp.ApplicationproblemJSON429, http.StatusTooManyRequests, contractapi.ProblemRateLimited)
	if resp.Headers429 == nil || resp.Headers429.RetryAfter < 1 || resp.Headers429.RetryAfter > 2 {
		t.Errorf("Retry-After %v, want 1 or 2 seconds", resp.Headers429)
	}
	time.Sleep(time.Duration(resp.Headers429.RetryAfter) * time.Second)
	again, err := ts.client.GetContractWithResponse(ctx, "any")
	if err != nil || again.StatusCode() != http.StatusNotFound {
		t.Errorf("after waiting Retry-After: %v %v, want the 404 of an unknown contract", err, again.Status())
	}
}

func TestNewRefusesQuotasOnVersityGW(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	_, err := New(Config{Token: testToken, DataDir: t.TempDir(), EncryptionKey: testEncryptionKey, Backend: gatewayBackend(t, gw), Plans: []Plan{{Name: "small", QuotaBytes: 1 << 30}}})
	if err == nil {
		t.Fatal("New accepted a plan with a quota for versitygw, which cannot enforce it")
	}
}

func cancelContract(t *testing.T, c contractapi.ClientWithResponsesInterface, id string, force bool) {
	t.Helper()
	resp, err := c.CancelContractWithResponse(t.Context(), id, &contractapi.CancelContractParams{Force: &force})
	if err != nil {
		t.Fatalf("CancelContract: %v", err)
	}
	if resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("CancelContract(force=%t): %s, want 204: %s", force, resp.Status(), resp.Body)
	}
}

// wantKeysRejected checks that the gateway no longer knows the key.
func wantKeysRejected(t *testing.T, gw *localenv.VersityGW, creds contractapi.Credentials) {
	t.Helper()
	_, err := s3As(gw, creds).ListBuckets(t.Context(), &s3.ListBucketsInput{})
	if code := s3ErrorCode(err); code != "InvalidAccessKeyId" {
		t.Errorf("ListBuckets with the keys of a cancelled contract: %v, want InvalidAccessKeyId", err)
	}
}
