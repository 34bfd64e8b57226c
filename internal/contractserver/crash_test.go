package contractserver

import (
	"net/http"
	"sync"
	"testing"

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
