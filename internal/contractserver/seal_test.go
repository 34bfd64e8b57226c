package contractserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// A copy of the database yields no secret key, and a replay still returns it.
func TestSecretKeysAreSealedAtRest(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, Config{Backend: &fakeBackend{}, DataDir: dir})
	req := contractapi.ContractRequest{Plan: "standard"}
	created := createContract(t, ts.client, "uid-sealed", req)
	ts.stop()

	wantNoSecret(t, dir, created.Credentials.SecretAccessKey)

	restarted := startServer(t, Config{Backend: &fakeBackend{}, DataDir: dir})
	if got := replay(t, restarted, "uid-sealed", req); got.Credentials != created.Credentials {
		t.Errorf("replay after a restart returned %+v, want the credentials first returned", got.Credentials)
	}
}

// A sealed secret opens only as the secret of its own contract.
func TestSealedSecretIsBoundToItsContract(t *testing.T) {
	box, err := newSecretBox(testEncryptionKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.seal("contract-a", "s3cr3t")
	if got, err := box.open("contract-a", sealed); err != nil || got != "s3cr3t" {
		t.Fatalf("open as its own contract: %q, %v", got, err)
	}
	if _, err := box.open("contract-b", sealed); err == nil {
		t.Error("the secret of contract-a opened as the secret of contract-b")
	}
}

// A server started with another key still serves the contracts, but a replay answers a 500
// that says what is wrong, never a garbled secret.
func TestReplayWithAnotherEncryptionKey(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, Config{Backend: &fakeBackend{}, DataDir: dir})
	req := contractapi.ContractRequest{Plan: "standard"}
	created := createContract(t, ts.client, "uid-rekeyed", req)
	ts.stop()

	var logs syncBuffer
	rekeyed := startServer(t, Config{Backend: &fakeBackend{}, DataDir: dir, EncryptionKey: randomBytes(EncryptionKeySize),
		Logger: slogTo(&logs)})
	resp, err := rekeyed.client.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: "uid-rekeyed"}, req)
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "replay", resp.HTTPResponse, resp.ApplicationproblemJSON500, http.StatusInternalServerError, contractapi.ProblemInternal)
	if p := resp.ApplicationproblemJSON500; p == nil || p.Detail == nil || !strings.Contains(*p.Detail, "encryption key") {
		t.Errorf("problem %+v does not say the encryption key changed", p)
	}
	if !strings.Contains(logs.String(), "does not open with this encryption key") {
		t.Errorf("the log does not say the encryption key is wrong:\n%s", logs.String())
	}
	get, err := rekeyed.client.GetContractWithResponse(t.Context(), created.Id)
	if err != nil || get.JSON200 == nil {
		t.Errorf("GetContract with another key: %v %s, want 200", err, get.Status())
	}
}

// Records written before encryption hold the secret in the clear: opening the store seals them,
// and leaves no trace of the plaintext in the file.
func TestPlainSecretsAreSealedOnOpen(t *testing.T) {
	dir := t.TempDir()
	const id, secret = "legacycontract00", "0123456789abcdef0123456789abcdef01234567"
	writeLegacyRecord(t, filepath.Join(dir, "contracts.db"), id, "uid-legacy", secret)

	ts := startServer(t, Config{Backend: &fakeBackend{}, DataDir: dir})
	got := replay(t, ts, "uid-legacy", contractapi.ContractRequest{Plan: "standard"})
	if got.Id != id || got.Credentials.SecretAccessKey != secret || got.Credentials.AccessKeyId != FirstAccessKeyID(id) {
		t.Errorf("replay of a legacy contract: %s %+v, want %s with its recorded credentials", got.Id, got.Credentials, id)
	}
	ts.stop()
	wantNoSecret(t, dir, secret)
	if _, err := os.Stat(filepath.Join(dir, "contracts.db.sealing")); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
}

// writeLegacyRecord writes an active contract as the server stored it before encryption.
func writeLegacyRecord(t *testing.T, path, id, key, secret string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	legacy := map[string]any{
		"id": id, "idempotencyKey": key, "request": map[string]any{"plan": "standard"}, "state": stateActive,
		"endpoint": "http://127.0.0.1:1", "region": "us-east-1",
		"firstKey":  map[string]string{"AccessKeyID": FirstAccessKeyID(id), "SecretAccessKey": secret},
		"keys":      []map[string]any{{"accessKeyId": FirstAccessKeyID(id), "state": keyActive, "createdAt": created}},
		"createdAt": created,
	}
	data, err := json.Marshal(legacy)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		contracts, err := tx.CreateBucket(bucketContracts)
		if err != nil {
			return err
		}
		idx, err := tx.CreateBucket(bucketIdempotency)
		if err != nil {
			return err
		}
		if err := idx.Put([]byte(key), []byte(id)); err != nil {
			return err
		}
		return contracts.Put([]byte(id), data)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func replay(t *testing.T, ts *testServer, key string, req contractapi.ContractRequest) *contractapi.ContractWithCredentials {
	t.Helper()
	resp, err := ts.client.CreateContractWithResponse(t.Context(), &contractapi.CreateContractParams{IdempotencyKey: key}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("replay: %s %s, want 200", resp.Status(), resp.Body)
	}
	return resp.JSON200
}

// wantNoSecret reads the database file as a thief with a copy would.
func wantNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "contracts.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) < 40 || bytes.Contains(data, []byte(secret)) {
		t.Errorf("contracts.db holds the secret key %q", secret)
	}
}

// A principal's sealed secret opens only as the secret of its own key, principal and contract.
func TestSealedPrincipalSecretIsBoundToItsKey(t *testing.T) {
	box, err := newSecretBox(testEncryptionKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.sealPrincipalKey("c1", "p1", "AK1", "s3cr3t")
	if got, err := box.openPrincipalKey("c1", "p1", "AK1", sealed); err != nil || got != "s3cr3t" {
		t.Fatalf("open = %q, %v; want the secret", got, err)
	}
	for name, open := range map[string]func() (string, error){
		"another key":       func() (string, error) { return box.openPrincipalKey("c1", "p1", "AK2", sealed) },
		"another principal": func() (string, error) { return box.openPrincipalKey("c1", "p2", "AK1", sealed) },
		"another contract":  func() (string, error) { return box.openPrincipalKey("c2", "p1", "AK1", sealed) },
		"a contract secret": func() (string, error) { return box.open("c1", sealed) },
	} {
		if got, err := open(); err == nil {
			t.Errorf("opened as %s: %q", name, got)
		}
	}
}
