package contractserver

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

func TestPrincipalsOnVersityGW(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	testPrincipalLifecycle(t, ts, func(c contractapi.Credentials) *s3.Client { return s3As(gw, c) })
}

// testPrincipalLifecycle drives principals through the API over a real backend, and checks
// every step with S3 calls signed by their keys: a key does what a bucket policy naming its
// principal allows and nothing else, rotates, and stops working when revoked.
func testPrincipalLifecycle(t *testing.T, ts *testServer, s3For func(contractapi.Credentials) *s3.Client) {
	ctx := t.Context()
	contract := createContract(t, ts.client, "uid-principals", contractapi.ContractRequest{Plan: "standard"})
	owner := s3For(contract.Credentials)
	bucket := "principals-" + contract.Id
	if err := useKeys(ctx, owner, bucket); err != nil {
		t.Fatalf("owner making a bucket with an object: %v", err)
	}

	created := createPrincipal(t, ts.client, contract.Id, "ba-uid-1")
	if len(created.AccessKeyIds) != 1 || created.AccessKeyIds[0] != created.Credentials.AccessKeyId || len(created.Credentials.SecretAccessKey) < 40 {
		t.Fatalf("created principal has keys %v and credentials %q/(%d chars): want its one key with a 40-character secret",
			created.AccessKeyIds, created.Credentials.AccessKeyId, len(created.Credentials.SecretAccessKey))
	}
	replay, err := ts.client.CreatePrincipalWithResponse(ctx, contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-uid-1"})
	if err != nil {
		t.Fatalf("CreatePrincipal replay: %v", err)
	}
	if replay.JSON200 == nil {
		t.Fatalf("CreatePrincipal replay: %s, want 200: %s", replay.Status(), replay.Body)
	}
	if diff := cmp.Diff(*created, *replay.JSON200); diff != "" {
		t.Errorf("replay returned another principal or key (-first +replay):\n%s", diff)
	}
	got := getPrincipal(t, ts.client, contract.Id, created.Id)
	want := contractapi.Principal{Id: created.Id, PolicyPrincipal: created.PolicyPrincipal, AccessKeyIds: created.AccessKeyIds, CreatedAt: created.CreatedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetPrincipal (-want +got):\n%s", diff)
	}

	// The principal's key authenticates, but without a policy naming it, it may do nothing:
	// not read the account's bucket, not make a bucket of its own.
	first := s3For(created.Credentials)
	wantS3Code(t, "GetObject before any policy", getObject(t, first, bucket), "AccessDenied")
	if _, err := first.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket + "-own")}); err == nil {
		t.Errorf("a principal made a bucket of its own")
	}

	putPolicy(t, owner, contract, bucket, created.PolicyPrincipal)
	wantS3Code(t, "GetObject granted by the policy", getObject(t, first, bucket), "")
	// RGW sometimes closes the connection on a refused PUT before the SDK reads the error (see
	// the quota case in rgw_test.go): such attempts are retried, an AccessDenied answer is not.
	_, err = first.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("new.txt"), Body: strings.NewReader("x")},
		func(o *s3.Options) { o.RetryMaxAttempts = 10 })
	wantS3Code(t, "PutObject the policy does not grant", err, "AccessDenied")

	// Rotation: a second key, replayed as the first was; both work once the policy names both.
	added := addPrincipalKey(t, ts.client, contract.Id, created.Id, "rotation-1", http.StatusCreated)
	if added.Credentials.AccessKeyId == created.Credentials.AccessKeyId ||
		!cmp.Equal(added.AccessKeyIds, []string{created.Credentials.AccessKeyId, added.Credentials.AccessKeyId}) {
		t.Fatalf("after adding key %s the principal has keys %v, want the first then the new one", added.Credentials.AccessKeyId, added.AccessKeyIds)
	}
	if again := addPrincipalKey(t, ts.client, contract.Id, created.Id, "rotation-1", http.StatusOK); !cmp.Equal(again, added) {
		t.Errorf("add-key replay (-first +replay):\n%s", cmp.Diff(added, again))
	}
	putPolicy(t, owner, contract, bucket, added.PolicyPrincipal)
	second := s3For(added.Credentials)
	wantS3Code(t, "GetObject with the first key during the overlap", getObject(t, first, bucket), "")
	wantS3Code(t, "GetObject with the second key", getObject(t, second, bucket), "")

	// Another principal of the same account is not named by the policy, so it reads nothing.
	other := createPrincipal(t, ts.client, contract.Id, "ba-uid-2")
	wantS3Code(t, "GetObject by a principal the policy does not name", getObject(t, s3For(other.Credentials), bucket), "AccessDenied")

	// Revoking the first key ends it at once and leaves the second.
	for i := range 2 {
		removePrincipalKey(t, ts.client, contract.Id, created.Id, created.Credentials.AccessKeyId, http.StatusNoContent, "")
		if i == 0 {
			wantS3Code(t, "GetObject with the revoked key", getObject(t, first, bucket), "InvalidAccessKeyId")
		}
	}
	wantS3Code(t, "GetObject with the remaining key", getObject(t, second, bucket), "")
	removePrincipalKey(t, ts.client, contract.Id, created.Id, added.Credentials.AccessKeyId, http.StatusConflict, contractapi.ProblemLastKey)
	removePrincipalKey(t, ts.client, contract.Id, created.Id, "OSMPNOSUCHKEY", http.StatusNotFound, contractapi.ProblemNotFound)
	wantS3Code(t, "GetObject after the refused removals", getObject(t, second, bucket), "")
	if got := getPrincipal(t, ts.client, contract.Id, created.Id); !cmp.Equal(got.AccessKeyIds, []string{added.Credentials.AccessKeyId}) {
		t.Errorf("after revoking the first key the principal has keys %v, want [%s]", got.AccessKeyIds, added.Credentials.AccessKeyId)
	}
	// A replay of the creation still answers the first key pair, which accessKeyIds shows revoked.
	late, err := ts.client.CreatePrincipalWithResponse(ctx, contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-uid-1"})
	if err != nil || late.JSON200 == nil {
		t.Fatalf("CreatePrincipal replay after rotation: %v %s %s", err, late.Status(), late.Body)
	}
	if late.JSON200.Id != created.Id || late.JSON200.Credentials != created.Credentials || !cmp.Equal(late.JSON200.AccessKeyIds, []string{added.Credentials.AccessKeyId}) {
		t.Errorf("replay after rotation: %s with key %s and keys %v; want %s, the first key, and only the second in effect",
			late.JSON200.Id, late.JSON200.Credentials.AccessKeyId, late.JSON200.AccessKeyIds, created.Id)
	}

	// Deleting the principal revokes every key it has; it is gone for good.
	for range 2 {
		deletePrincipal(t, ts.client, contract.Id, created.Id, http.StatusNoContent)
	}
	wantS3Code(t, "GetObject with a key of the deleted principal", getObject(t, second, bucket), "InvalidAccessKeyId")
	missing, err := ts.client.GetPrincipalWithResponse(ctx, contract.Id, created.Id)
	if err != nil {
		t.Fatalf("GetPrincipal: %v", err)
	}
	wantProblem(t, "get deleted principal", missing.HTTPResponse, missing.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
	reused, err := ts.client.CreatePrincipalWithResponse(ctx, contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-uid-1"})
	if err != nil {
		t.Fatalf("CreatePrincipal: %v", err)
	}
	wantProblem(t, "replay for a deleted principal", reused.HTTPResponse, reused.ApplicationproblemJSON410, http.StatusGone, contractapi.ProblemPrincipalDeleted)
	addGone, err := ts.client.AddPrincipalKeyWithResponse(ctx, contract.Id, created.Id, &contractapi.AddPrincipalKeyParams{IdempotencyKey: "rotation-2"})
	if err != nil {
		t.Fatalf("AddPrincipalKey: %v", err)
	}
	wantProblem(t, "add a key to a deleted principal", addGone.HTTPResponse, addGone.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
	deletePrincipal(t, ts.client, contract.Id, "nosuchprincipal", http.StatusNotFound)

	// Cancelling the contract removes the principals it still has.
	wantS3Code(t, "ListBuckets with the other principal's key", listBuckets(t, s3For(other.Credentials)), "")
	cancelContract(t, ts.client, contract.Id, true)
	wantS3Code(t, "ListBuckets with a principal's key after the cancel", listBuckets(t, s3For(other.Credentials)), "InvalidAccessKeyId")
	gone, err := ts.client.GetPrincipalWithResponse(ctx, contract.Id, other.Id)
	if err != nil {
		t.Fatalf("GetPrincipal: %v", err)
	}
	wantProblem(t, "get a principal of a cancelled contract", gone.HTTPResponse, gone.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
	refused, err := ts.client.CreatePrincipalWithResponse(ctx, contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-uid-3"})
	if err != nil {
		t.Fatalf("CreatePrincipal: %v", err)
	}
	wantProblem(t, "create in a cancelled contract", refused.HTTPResponse, refused.ApplicationproblemJSON409, http.StatusConflict, contractapi.ProblemContractCancelled)
	removePrincipalKey(t, ts.client, contract.Id, other.Id, other.Credentials.AccessKeyId, http.StatusNoContent, "")
	deletePrincipal(t, ts.client, contract.Id, other.Id, http.StatusNoContent)

	// The records keep one tombstone per idempotency key, without keys.
	audit, err := ts.srv.Principals()
	if err != nil {
		t.Fatalf("Principals: %v", err)
	}
	wantAudit := []PrincipalSummary{
		{ContractID: contract.Id, ID: created.Id, IdempotencyKey: "ba-uid-1", State: principalDeleted, AccessKeyIDs: []string{}},
		{ContractID: contract.Id, ID: other.Id, IdempotencyKey: "ba-uid-2", State: principalDeleted, AccessKeyIDs: []string{}},
	}
	slices.SortFunc(wantAudit, func(a, b PrincipalSummary) int { return strings.Compare(a.ID, b.ID) })
	if diff := cmp.Diff(wantAudit, audit); diff != "" {
		t.Errorf("Principals (-want +got):\n%s", diff)
	}
}

// A backend without principals answers every principal call 501, and is never called for one.
func TestPrincipalsNeedABackendThatHasThem(t *testing.T) {
	backend := &fakeBackend{}
	ts := startServer(t, Config{Backend: backend})
	ctx := t.Context()
	contract := createContract(t, ts.client, "uid-no-principals", contractapi.ContractRequest{Plan: "standard"})
	calls := backend.callCount()

	create, err := ts.client.CreatePrincipalWithResponse(ctx, contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: "k"})
	if err != nil {
		t.Fatalf("CreatePrincipal: %v", err)
	}
	wantProblem(t, "create", create.HTTPResponse, create.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	get, err := ts.client.GetPrincipalWithResponse(ctx, contract.Id, "p")
	if err != nil {
		t.Fatalf("GetPrincipal: %v", err)
	}
	wantProblem(t, "get", get.HTTPResponse, get.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	del, err := ts.client.DeletePrincipalWithResponse(ctx, contract.Id, "p")
	if err != nil {
		t.Fatalf("DeletePrincipal: %v", err)
	}
	wantProblem(t, "delete", del.HTTPResponse, del.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	if n := backend.callCount(); n != calls {
		t.Errorf("backend called %d times for principals it does not have", n-calls)
	}
	// Nothing was recorded: cancelling needs no principal support.
	cancelContract(t, ts.client, contract.Id, false)
}

func TestPrincipalRequestsAreValidated(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	ctx := t.Context()
	contract := createContract(t, ts.client, "uid-validate", contractapi.ContractRequest{Plan: "standard"})
	p := createPrincipal(t, ts.client, contract.Id, "ok")
	for name, key := range map[string]string{"empty": "", "129 characters": strings.Repeat("k", 129)} {
		t.Run(name, func(t *testing.T) {
			create, err := ts.client.CreatePrincipalWithResponse(ctx, contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: key})
			if err != nil {
				t.Fatalf("CreatePrincipal: %v", err)
			}
			wantProblem(t, "create", create.HTTPResponse, create.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
			add, err := ts.client.AddPrincipalKeyWithResponse(ctx, contract.Id, p.Id, &contractapi.AddPrincipalKeyParams{IdempotencyKey: key})
			if err != nil {
				t.Fatalf("AddPrincipalKey: %v", err)
			}
			wantProblem(t, "add key", add.HTTPResponse, add.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
		})
	}
	unknown, err := ts.client.CreatePrincipalWithResponse(ctx, "nosuchcontract", &contractapi.CreatePrincipalParams{IdempotencyKey: "k"})
	if err != nil {
		t.Fatalf("CreatePrincipal: %v", err)
	}
	wantProblem(t, "create in an unknown contract", unknown.HTTPResponse, unknown.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
	if got := getPrincipal(t, ts.client, contract.Id, p.Id); len(got.AccessKeyIds) != 1 {
		t.Errorf("refused requests changed the principal: keys %v", got.AccessKeyIds)
	}
}

func TestVersityGWPrincipalBackendIsIdempotent(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	b := gatewayBackend(t, gw)
	ctx := t.Context()
	contractID, principalID := newContractID(), newPrincipalID()
	first, second := newCredentials(newPrincipalAccessKeyID()), newCredentials(newPrincipalAccessKeyID())

	for i := range 2 {
		if err := b.CreatePrincipal(ctx, contractID, principalID, first); err != nil {
			t.Fatalf("CreatePrincipal, attempt %d: %v", i+1, err)
		}
		if err := b.AddPrincipalKey(ctx, contractID, principalID, second); err != nil {
			t.Fatalf("AddPrincipalKey, attempt %d: %v", i+1, err)
		}
	}
	if err := b.AddPrincipalKey(ctx, contractID, principalID, newCredentials(second.AccessKeyID)); err == nil {
		t.Errorf("AddPrincipalKey with another secret for an existing key succeeded")
	}
	wantUsers(t, b, map[string]string{first.AccessKeyID: vgwRoleUser, second.AccessKeyID: vgwRoleUser})
	for i := range 2 {
		if err := b.RemovePrincipalKey(ctx, contractID, principalID, first.AccessKeyID); err != nil {
			t.Fatalf("RemovePrincipalKey, attempt %d: %v", i+1, err)
		}
	}
	wantUsers(t, b, map[string]string{second.AccessKeyID: vgwRoleUser})
	for i := range 2 {
		if err := b.DeletePrincipal(ctx, contractID, principalID, []string{first.AccessKeyID, second.AccessKeyID}); err != nil {
			t.Fatalf("DeletePrincipal, attempt %d: %v", i+1, err)
		}
	}
	wantUsers(t, b, map[string]string{})
}

// wantUsers checks the gateway's users of principal keys (access keys starting with OSMP) and their roles.
func wantUsers(t *testing.T, b *VersityGWBackend, want map[string]string) {
	t.Helper()
	users, err := b.admin.listUsers(t.Context())
	if err != nil {
		t.Fatalf("list-users: %v", err)
	}
	got := map[string]string{}
	for _, u := range users {
		if strings.HasPrefix(u.Access, "OSMP") {
			got[u.Access] = u.Role
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("principal users (-want +got):\n%s", diff)
	}
}

func createPrincipal(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, key string) *contractapi.PrincipalWithCredentials {
	t.Helper()
	resp, err := c.CreatePrincipalWithResponse(t.Context(), contractID, &contractapi.CreatePrincipalParams{IdempotencyKey: key})
	if err != nil {
		t.Fatalf("CreatePrincipal: %v", err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("CreatePrincipal: got %s, want 201: %s", resp.Status(), resp.Body)
	}
	return resp.JSON201
}

func getPrincipal(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, principalID string) contractapi.Principal {
	t.Helper()
	resp, err := c.GetPrincipalWithResponse(t.Context(), contractID, principalID)
	if err != nil {
		t.Fatalf("GetPrincipal: %v", err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("GetPrincipal: got %s, want 200: %s", resp.Status(), resp.Body)
	}
	if strings.Contains(string(resp.Body), "secretAccessKey") {
		t.Errorf("GetPrincipal returned a secret: %s", resp.Body)
	}
	return *resp.JSON200
}

func addPrincipalKey(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, principalID, key string, status int) contractapi.PrincipalWithCredentials {
	t.Helper()
	resp, err := c.AddPrincipalKeyWithResponse(t.Context(), contractID, principalID, &contractapi.AddPrincipalKeyParams{IdempotencyKey: key})
	if err != nil {
		t.Fatalf("AddPrincipalKey: %v", err)
	}
	got := resp.JSON201
	if status == http.StatusOK {
		got = resp.JSON200
	}
	if resp.StatusCode() != status || got == nil {
		t.Fatalf("AddPrincipalKey: got %s, want %d: %s", resp.Status(), status, resp.Body)
	}
	return *got
}

func removePrincipalKey(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, principalID, accessKeyID string, status int, typ contractapi.ProblemType) {
	t.Helper()
	resp, err := c.RemovePrincipalKeyWithResponse(t.Context(), contractID, principalID, accessKeyID)
	if err != nil {
		t.Fatalf("RemovePrincipalKey: %v", err)
	}
	what := "remove key " + accessKeyID
	switch status {
	case http.StatusNoContent:
		if resp.StatusCode() != status {
			t.Fatalf("%s: got %s, want 204: %s", what, resp.Status(), resp.Body)
		}
	case http.StatusConflict:
		wantProblem(t, what, resp.HTTPResponse, resp.ApplicationproblemJSON409, status, typ)
	default:
		wantProblem(t, what, resp.HTTPResponse, resp.ApplicationproblemJSON404, status, typ)
	}
}

func deletePrincipal(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, principalID string, status int) {
	t.Helper()
	resp, err := c.DeletePrincipalWithResponse(t.Context(), contractID, principalID)
	if err != nil {
		t.Fatalf("DeletePrincipal: %v", err)
	}
	if status == http.StatusNotFound {
		wantProblem(t, "delete principal "+principalID, resp.HTTPResponse, resp.ApplicationproblemJSON404, status, contractapi.ProblemNotFound)
		return
	}
	if resp.StatusCode() != status {
		t.Fatalf("DeletePrincipal: got %s, want %d: %s", resp.Status(), status, resp.Body)
	}
}

// putPolicy writes, as the bucket's owner, a policy that lets principal read objects and, where
// the endpoint judges the owner by the policy alone, keeps the owner in control.
func putPolicy(t *testing.T, owner *s3.Client, contract *contractapi.ContractWithCredentials, bucket string, principal map[string]any) {
	t.Helper()
	statements := []map[string]any{{
		"Sid": "Reader", "Effect": "Allow", "Principal": principal,
		"Action": "s3:GetObject", "Resource": "arn:aws:s3:::" + bucket + "/*",
	}}
	if form := contract.BucketPolicy; form != nil && form.OwnerNeedsAllow {
		statements = append(statements, map[string]any{
			"Sid": "Owner", "Effect": "Allow", "Principal": form.OwnerPrincipal,
			"Action": "s3:*", "Resource": []string{form.ResourcePrefix + bucket, form.ResourcePrefix + bucket + "/*"},
		})
	}
	doc, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statements})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.PutBucketPolicy(t.Context(), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(string(doc))}); err != nil {
		t.Fatalf("PutBucketPolicy %s: %v", doc, err)
	}
}

// getObject reads the object useKeys wrote, to the end.
func getObject(t *testing.T, client *s3.Client, bucket string) error {
	t.Helper()
	out, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("hello.txt")})
	if err != nil {
		return err
	}
	defer func() { _ = out.Body.Close() }()
	_, err = io.Copy(io.Discard, out.Body)
	return err
}

func listBuckets(t *testing.T, client *s3.Client) error {
	t.Helper()
	_, err := client.ListBuckets(t.Context(), &s3.ListBucketsInput{})
	return err
}

// wantS3Code checks that err is the S3 error code, or no error when code is "".
func wantS3Code(t *testing.T, what string, err error, code string) {
	t.Helper()
	switch {
	case code == "" && err != nil:
		t.Errorf("%s: %v, want success", what, err)
	case code != "" && s3ErrorCode(err) != code:
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// versitygw checks that every principal a policy names exists, so a policy must be written
// after a key is added and rewritten without a key once it is revoked.
func TestVersityGWRefusesPoliciesNamingUnknownKeys(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	contract := createContract(t, ts.client, "uid-policy-check", contractapi.ContractRequest{Plan: "standard"})
	owner := s3As(gw, contract.Credentials)
	bucket := "policy-" + contract.Id
	if err := useKeys(t.Context(), owner, bucket); err != nil {
		t.Fatal(err)
	}
	p := createPrincipal(t, ts.client, contract.Id, "ba")
	putPolicy(t, owner, contract, bucket, p.PolicyPrincipal)
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"OSMPNOSUCHKEY"},` +
		`"Action":"s3:GetObject","Resource":"arn:aws:s3:::` + bucket + `/*"}]}`
	_, err := owner.PutBucketPolicy(t.Context(), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(doc)})
	wantS3Code(t, "PutBucketPolicy naming a key that does not exist", err, "MalformedPolicy")
}
