package contractserver

import (
	"net/http"
	"slices"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// On a backend whose accounts hold several keys, adding a key is idempotent: a replay answers
// the same key pair, a replay after its revocation says so, and the key list follows.
func TestAddKeyIsIdempotent(t *testing.T) {
	backend := &fakeBackend{multiKey: true}
	ts := startServer(t, Config{Backend: backend})
	ctx := t.Context()
	created := createContract(t, ts.client, "uid-rotate", contractapi.ContractRequest{Plan: "standard"})
	first := created.Credentials.AccessKeyId

	added := addKey(t, ts.client, created.Id, "rotation-1", http.StatusCreated)
	if added.AccessKeyId == first || added.SecretAccessKey == "" {
		t.Fatalf("added key %q, want a new key pair beside the first key %q", added.AccessKeyId, first)
	}
	if got := backend.addedKeys(created.Id)[added.AccessKeyId]; got != added.SecretAccessKey {
		t.Errorf("the backend holds another secret for key %s than the one answered", added.AccessKeyId)
	}
	replay := addKey(t, ts.client, created.Id, "rotation-1", http.StatusOK)
	if replay != added {
		t.Errorf("replay answered key %q, want the same key pair %q", replay.AccessKeyId, added.AccessKeyId)
	}
	if got := contractKeyIDs(t, ts.client, created.Id); !slices.Equal(got, []string{first, added.AccessKeyId}) {
		t.Errorf("contract keys %v, want the first key and the added one", got)
	}

	// The first key goes; the added one is now the last and stays.
	removeKey(t, ts.client, created.Id, first, http.StatusNoContent, "")
	removeKey(t, ts.client, created.Id, added.AccessKeyId, http.StatusConflict, contractapi.ProblemLastKey)
	second := addKey(t, ts.client, created.Id, "rotation-2", http.StatusCreated)
	removeKey(t, ts.client, created.Id, added.AccessKeyId, http.StatusNoContent, "")
	if _, ok := backend.addedKeys(created.Id)[added.AccessKeyId]; ok {
		t.Errorf("key %s is still at the backend after its revocation", added.AccessKeyId)
	}
	if got := contractKeyIDs(t, ts.client, created.Id); !slices.Equal(got, []string{second.AccessKeyId}) {
		t.Errorf("contract keys %v, want only %s", got, second.AccessKeyId)
	}
	// Revoked since: a replay is told so, and makes nothing.
	revoked, err := ts.client.AddKeyWithResponse(ctx, created.Id, &contractapi.AddKeyParams{IdempotencyKey: "rotation-1"})
	if err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	wantProblem(t, "replay of a revoked key", revoked.HTTPResponse, revoked.ApplicationproblemJSON410, http.StatusGone, contractapi.ProblemKeyRevoked)
	if n := len(backend.addedKeys(created.Id)); n != 1 {
		t.Errorf("the backend holds %d added keys after the refused replay, want 1", n)
	}
	removeKey(t, ts.client, created.Id, added.AccessKeyId, http.StatusNotFound, contractapi.ProblemNotFound)

	invalid, err := ts.client.AddKeyWithResponse(ctx, created.Id, &contractapi.AddKeyParams{IdempotencyKey: ""})
	if err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	wantProblem(t, "add key without an idempotency key", invalid.HTTPResponse, invalid.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
}

// A crash after the backend made a key but before the record said so: the replay after the
// restart finishes it with the recorded key pair, sealed across the restart, and never makes a
// second one.
func TestAddKeyRetryAfterCrash(t *testing.T) {
	backend := &fakeBackend{multiKey: true}
	dir := t.TempDir()
	crashed := startServer(t, Config{Backend: backend, DataDir: dir})
	created := createContract(t, crashed.client, "uid-rotate-crash", contractapi.ContractRequest{Plan: "standard"})

	creds := newCredentials(newAccessKeyID())
	_, err := crashed.srv.store.update(created.Id, func(r *record) error {
		r.Keys = append(r.Keys, storedKey{AccessKeyID: creds.AccessKeyID, IdempotencyKey: "rotation-crash", State: keyPending,
			SealedSecret: crashed.srv.secrets.sealContractKey(r.ID, creds.AccessKeyID, creds.SecretAccessKey), CreatedAt: now()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.AddKey(t.Context(), created.Id, creds); err != nil {
		t.Fatal(err)
	}
	crashed.stop()
	wantNoSecret(t, dir, creds.SecretAccessKey)

	restarted := startServer(t, Config{Backend: backend, DataDir: dir})
	if got := contractKeyIDs(t, restarted.client, created.Id); len(got) != 1 {
		t.Errorf("a key whose adding did not finish is shown: %v", got)
	}
	got := addKey(t, restarted.client, created.Id, "rotation-crash", http.StatusCreated)
	if got.AccessKeyId != creds.AccessKeyID || got.SecretAccessKey != creds.SecretAccessKey {
		t.Fatalf("replay made key %s, want the recorded key %s", got.AccessKeyId, creds.AccessKeyID)
	}
	if n := len(backend.addedKeys(created.Id)); n != 1 {
		t.Errorf("the backend holds %d added keys, want 1", n)
	}
	if keys := contractKeyIDs(t, restarted.client, created.Id); !slices.Contains(keys, creds.AccessKeyID) {
		t.Errorf("contract keys %v after the replay, want %s among them", keys, creds.AccessKeyID)
	}
}

func addKey(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, key string, status int) contractapi.Credentials {
	t.Helper()
	resp, err := c.AddKeyWithResponse(t.Context(), contractID, &contractapi.AddKeyParams{IdempotencyKey: key})
	if err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	if resp.StatusCode() != status {
		t.Fatalf("AddKey %q: %s %s, want %d", key, resp.Status(), resp.Body, status)
	}
	got := resp.JSON201
	if got == nil {
		got = resp.JSON200
	}
	if got == nil {
		t.Fatalf("AddKey %q: no key pair in %s", key, resp.Body)
	}
	return *got
}

func removeKey(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID, accessKeyID string, status int, typ contractapi.ProblemType) {
	t.Helper()
	resp, err := c.RemoveKeyWithResponse(t.Context(), contractID, accessKeyID)
	if err != nil {
		t.Fatalf("RemoveKey: %v", err)
	}
	switch status {
	case http.StatusNoContent:
		if resp.StatusCode() != status {
			t.Fatalf("RemoveKey %s: %s %s, want 204", accessKeyID, resp.Status(), resp.Body)
		}
	case http.StatusConflict:
		wantProblem(t, "remove key "+accessKeyID, resp.HTTPResponse, resp.ApplicationproblemJSON409, status, typ)
	case http.StatusNotFound:
		wantProblem(t, "remove key "+accessKeyID, resp.HTTPResponse, resp.ApplicationproblemJSON404, status, typ)
	default:
		t.Fatalf("removeKey: unexpected status %d asked for", status)
	}
}

func contractKeyIDs(t *testing.T, c contractapi.ClientWithResponsesInterface, contractID string) []string {
	t.Helper()
	resp, err := c.GetContractWithResponse(t.Context(), contractID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetContract: %v %s", err, resp.Body)
	}
	var ids []string
	for _, k := range resp.JSON200.AccessKeys {
		ids = append(ids, k.AccessKeyId)
	}
	return ids
}
