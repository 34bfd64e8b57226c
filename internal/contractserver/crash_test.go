package contractserver

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// A crash after the backend made the account but before the record said so: the retry after
// the restart finds the recorded credentials, finishes, and hands out the same keys.
func TestRetryAfterCrashFinishesProvisioning(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	backend := gatewayBackend(t, gw)
	dir := t.TempDir()
	req := contractapi.ContractRequest{Plan: "standard"}

	crashed := startServer(t, Config{Backend: backend, DataDir: dir})
	rec, err := crashed.srv.newRecord("uid-crash", toStoredRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	if err := crashed.srv.store.insert(rec); err != nil {
		t.Fatal(err)
	}
	first, err := crashed.srv.firstKey(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.CreateAccount(t.Context(), rec.ID, first, Plan{Name: "standard"}); err != nil {
		t.Fatal(err)
	}
	crashed.stop()

	restarted := startServer(t, Config{Backend: backend, DataDir: dir})
	get, err := restarted.client.GetContractWithResponse(t.Context(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "get unfinished contract", get.HTTPResponse, get.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)

	got := createContract(t, restarted.client, "uid-crash", req)
	if got.Id != rec.ID || got.Credentials.AccessKeyId != first.AccessKeyID || got.Credentials.SecretAccessKey != first.SecretAccessKey {
		t.Fatalf("retry made contract %s key %s, want the recorded contract %s key %s", got.Id, got.Credentials.AccessKeyId, rec.ID, first.AccessKeyID)
	}
	if err := useKeys(t.Context(), s3As(gw, got.Credentials), "after-crash"); err != nil {
		t.Errorf("keys after the retry: %v", err)
	}
}

// Concurrent requests with one key make one contract: one 201, the rest replays of it.
func TestConcurrentCreatesMakeOneContract(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	const n = 6
	var wg sync.WaitGroup
	results := make([]*contractapi.CreateContractResponse, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = ts.client.CreateContractWithResponse(t.Context(),
				&contractapi.CreateContractParams{IdempotencyKey: "uid-race"}, contractapi.ContractRequest{Plan: "standard"})
		})
	}
	wg.Wait()
	ids, created := map[string]bool{}, 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		switch {
		case r.JSON201 != nil:
			created++
			ids[r.JSON201.Id] = true
		case r.JSON200 != nil:
			ids[r.JSON200.Id] = true
		default:
			t.Fatalf("request %d: %s %s", i, r.Status(), r.Body)
		}
	}
	if created != 1 || len(ids) != 1 {
		t.Errorf("%d requests with one key: %d created, %d distinct ids; want 1 and 1", n, created, len(ids))
	}
}

// A crash after the backend made a principal (or a principal's key) but before the record said
// so: the replay after the restart finishes it with the recorded key pair, sealed across the
// restart, and never makes a second one.
func TestPrincipalRetryAfterCrash(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	backend := gatewayBackend(t, gw)
	dir := t.TempDir()

	crashed := startServer(t, Config{Backend: backend, DataDir: dir})
	contract := createContract(t, crashed.client, "uid-principal-crash", contractapi.ContractRequest{Plan: "standard"})
	done := createPrincipal(t, crashed.client, contract.Id, "ba-done")

	// A principal made at the backend, unfinished in the records.
	p, err := crashed.srv.recordPrincipal(contract.Id, "ba-crash")
	if err != nil {
		t.Fatal(err)
	}
	first, err := crashed.srv.principalKey(contract.Id, p, &p.FirstKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.CreatePrincipal(t.Context(), contract.Id, p.ID, first); err != nil {
		t.Fatal(err)
	}
	// A key of the finished principal made at the backend, unfinished in the records.
	key := newCredentials(newPrincipalAccessKeyID())
	_, err = crashed.srv.store.updatePrincipal(contract.Id, done.Id, func(q *storedPrincipal) error {
		q.Keys = append(q.Keys, storedPrincipalKey{AccessKeyID: key.AccessKeyID, IdempotencyKey: "rotation-crash", State: keyPending,
			SealedSecret: crashed.srv.secrets.sealPrincipalKey(contract.Id, done.Id, key.AccessKeyID, key.SecretAccessKey), CreatedAt: now()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.AddPrincipalKey(t.Context(), contract.Id, done.Id, key); err != nil {
		t.Fatal(err)
	}
	crashed.stop()
	wantNoSecret(t, dir, done.Credentials.SecretAccessKey)
	wantNoSecret(t, dir, first.SecretAccessKey)
	wantNoSecret(t, dir, key.SecretAccessKey)

	restarted := startServer(t, Config{Backend: backend, DataDir: dir})
	get, err := restarted.client.GetPrincipalWithResponse(t.Context(), contract.Id, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "get unfinished principal", get.HTTPResponse, get.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
	if got := getPrincipal(t, restarted.client, contract.Id, done.Id); len(got.AccessKeyIds) != 1 {
		t.Errorf("a key whose adding did not finish is shown: %v", got.AccessKeyIds)
	}

	got := createPrincipal(t, restarted.client, contract.Id, "ba-crash")
	if got.Id != p.ID || got.Credentials.AccessKeyId != first.AccessKeyID || got.Credentials.SecretAccessKey != first.SecretAccessKey {
		t.Fatalf("replay made principal %s key %s, want the recorded principal %s key %s", got.Id, got.Credentials.AccessKeyId, p.ID, first.AccessKeyID)
	}
	added := addPrincipalKey(t, restarted.client, contract.Id, done.Id, "rotation-crash", http.StatusCreated)
	if added.Credentials.AccessKeyId != key.AccessKeyID || added.Credentials.SecretAccessKey != key.SecretAccessKey || len(added.AccessKeyIds) != 2 {
		t.Fatalf("add-key replay made key %s (principal keys %v), want the recorded key %s in effect", added.Credentials.AccessKeyId, added.AccessKeyIds, key.AccessKeyID)
	}
	for _, creds := range []contractapi.Credentials{got.Credentials, added.Credentials} {
		if _, err := s3As(gw, creds).ListBuckets(t.Context(), &s3.ListBucketsInput{}); err != nil {
			t.Errorf("key %s after the replay: %v", creds.AccessKeyId, err)
		}
	}
}

// A principal whose creation never finished, and is never asked for again, is removed with its
// contract: its key, which the backend made, stops working.
func TestCancelRemovesUnfinishedPrincipals(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	backend := gatewayBackend(t, gw)
	ts := startServer(t, Config{Backend: backend})
	contract := createContract(t, ts.client, "uid-unfinished", contractapi.ContractRequest{Plan: "standard"})
	p, err := ts.srv.recordPrincipal(contract.Id, "ba-lost")
	if err != nil {
		t.Fatal(err)
	}
	first, err := ts.srv.principalKey(contract.Id, p, &p.FirstKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.CreatePrincipal(t.Context(), contract.Id, p.ID, first); err != nil {
		t.Fatal(err)
	}
	creds := contractapi.Credentials{AccessKeyId: first.AccessKeyID, SecretAccessKey: first.SecretAccessKey}
	if _, err := s3As(gw, creds).ListBuckets(t.Context(), &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("the unfinished principal's key: %v", err)
	}
	cancelContract(t, ts.client, contract.Id, false)
	wantKeysRejected(t, gw, creds)
}

// AfterStoreWrite hears of each write to the records once it has committed, and before the
// request goes on: what the sieve counts on to kill the server right after a write
// (test/faults).
func TestAfterStoreWriteHearsOfEachCommittedWrite(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	var (
		mu    sync.Mutex
		srv   *Server
		heard []string
	)
	hook := func(op, id string) {
		mu.Lock()
		defer mu.Unlock()
		contracts, _ := srv.Contracts()
		principals, _ := srv.Principals()
		recorded := slices.ContainsFunc(contracts, func(c ContractSummary) bool { return c.ID == id }) ||
			slices.ContainsFunc(principals, func(p PrincipalSummary) bool { return p.ID == id })
		heard = append(heard, fmt.Sprintf("%s, recorded %t", op, recorded))
	}
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw), AfterStoreWrite: hook})
	mu.Lock()
	srv = ts.srv
	mu.Unlock()
	contract := createContract(t, ts.client, "uid-hook", contractapi.ContractRequest{Plan: "standard"})
	createPrincipal(t, ts.client, contract.Id, "ba-hook")
	mu.Lock()
	defer mu.Unlock()
	want := []string{"insert contract, recorded true", "update contract, recorded true", "insert principal, recorded true", "update principal, recorded true"}
	if !slices.Equal(heard, want) {
		t.Errorf("AfterStoreWrite heard %q, want %q", heard, want)
	}
}
