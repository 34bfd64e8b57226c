package contractserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// A thousand rotations of one principal's key (add a key, revoke the old one) leave its record,
// the file and the work of a rotation as they were after a hundred: a revoked key leaves a
// tombstone in its principal's record only, and the record keeps the newest Limits.RevokedKeys.
// Schema 1 kept every revoked key, with its sealed secret, in the contract's record and
// rewrote the whole record on each change. The figures go to the test log (-v).
func TestRotationsKeepTheRecordsBounded(t *testing.T) {
	backend := &principalsBackend{}
	dir := t.TempDir()
	// Without rate limits: the rotations are as fast as the server goes.
	ts := startServer(t, Config{Backend: backend, DataDir: dir, RequestsPerSecond: -1, TenantRequestsPerSecond: -1})
	contract := createContract(t, ts.client, "uid-rotations", contractapi.ContractRequest{Plan: "standard"})
	p := createPrincipal(t, ts.client, contract.Id, "ba-rotating")
	current := p.Credentials.AccessKeyId

	type figures struct {
		record, file int64
		bytesWritten int64 // bytes of pages bbolt allocated, per rotation
		took         time.Duration
	}
	const rotations, batch = 1000, 100
	var by []figures
	var sum figures
	for i := 1; i <= rotations; i++ {
		before := pageAlloc(ts.srv)
		start := time.Now()
		added := addPrincipalKey(t, ts.client, contract.Id, p.Id, fmt.Sprintf("rotation-%04d", i), http.StatusCreated)
		removePrincipalKey(t, ts.client, contract.Id, p.Id, current, http.StatusNoContent, "")
		sum.took += time.Since(start)
		sum.bytesWritten += pageAlloc(ts.srv) - before
		current = added.Credentials.AccessKeyId
		if i%batch == 0 {
			by = append(by, figures{record: principalRecordSize(t, ts.srv, contract.Id, p.Id), file: fileSize(t, filepath.Join(dir, "contracts.db")),
				bytesWritten: sum.bytesWritten / batch, took: sum.took / batch})
			sum = figures{}
		}
	}
	for i, f := range by {
		t.Logf("after %4d rotations: principal record %5d bytes, contracts.db %7d bytes, %6d bytes written and %s a rotation",
			(i+1)*batch, f.record, f.file, f.bytesWritten, f.took.Round(10*time.Microsecond))
	}
	first, last := by[0], by[len(by)-1]
	if last.record != first.record {
		t.Errorf("the principal's record grew from %d bytes after %d rotations to %d after %d", first.record, batch, last.record, rotations)
	}
	if half := by[len(by)/2-1]; last.file > half.file {
		t.Errorf("contracts.db grew from %d bytes after %d rotations to %d after %d", half.file, rotations/2, last.file, rotations)
	}
	// The first batch's figure is lower: its record had not yet reached its bound.
	if warm := by[1]; last.bytesWritten > warm.bytesWritten {
		t.Errorf("a rotation wrote %d bytes after %d rotations, %d after %d: the work of a request grows", warm.bytesWritten, 2*batch, last.bytesWritten, rotations)
	}
	if n := backend.keyCount(contract.Id, p.Id); n != 1 {
		t.Errorf("the backend holds %d keys of the principal, want 1", n)
	}
	// The newest tombstones answer a replay as the first answer did.
	replayed := addPrincipalKey(t, ts.client, contract.Id, p.Id, fmt.Sprintf("rotation-%04d", rotations-1), http.StatusOK)
	if replayed.Credentials.AccessKeyId == current || !cmp.Equal(replayed.AccessKeyIds, []string{current}) {
		t.Errorf("replay of the last revoked key: key %s, keys in effect %v; want the revoked key and only %s in effect",
			replayed.Credentials.AccessKeyId, replayed.AccessKeyIds, current)
	}
}

// pageAlloc is how many bytes of pages bbolt allocated (to write them) since it opened.
func pageAlloc(s *Server) int64 {
	st := s.store.db.Stats()
	return st.TxStats.GetPageAlloc()
}

func principalRecordSize(t *testing.T, s *Server, contractID, principalID string) int64 {
	t.Helper()
	var n int
	if err := s.store.db.View(func(tx *bolt.Tx) error {
		n = len(tx.Bucket(bucketPrincipals).Get(principalKey(contractID, principalID)))
		return nil
	}); err != nil || n == 0 {
		t.Fatalf("reading the record of principal %s: %d bytes, %v", principalID, n, err)
	}
	return int64(n)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// What a deleted principal and a revoked key leave behind answers replays for the retention,
// then is forgotten: the records keep no trace, and a call that names what was forgotten is
// refused (404), never answered by making it again.
func TestTombstonesAreForgottenAfterTheRetention(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	contract := createContract(t, ts.client, "uid-tombstones", contractapi.ContractRequest{Plan: "standard"})
	kept := createPrincipal(t, ts.client, contract.Id, "ba-kept")
	added := addPrincipalKey(t, ts.client, contract.Id, kept.Id, "rotation-1", http.StatusCreated)
	removePrincipalKey(t, ts.client, contract.Id, kept.Id, kept.Credentials.AccessKeyId, http.StatusNoContent, "")
	deleted := createPrincipal(t, ts.client, contract.Id, "ba-deleted")
	deletePrincipal(t, ts.client, contract.Id, deleted.Id, http.StatusNoContent)

	replays := func(when string) {
		t.Helper()
		resp, err := ts.client.CreatePrincipalWithResponse(t.Context(), contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-deleted"})
		if err != nil {
			t.Fatal(err)
		}
		wantProblem(t, when+": replay of a deleted principal's creation", resp.HTTPResponse, resp.ApplicationproblemJSON410, http.StatusGone, contractapi.ProblemPrincipalDeleted)
		deletePrincipal(t, ts.client, contract.Id, deleted.Id, http.StatusNoContent)
		again := addPrincipalKey(t, ts.client, contract.Id, kept.Id, "rotation-1", http.StatusOK)
		if again.Credentials != added.Credentials {
			t.Errorf("%s: replay of the key's adding answered key %s, want %s", when, again.Credentials.AccessKeyId, added.Credentials.AccessKeyId)
		}
		removePrincipalKey(t, ts.client, contract.Id, kept.Id, kept.Credentials.AccessKeyId, http.StatusNoContent, "")
	}
	replays("at once")
	ts.srv.store.now = func() time.Time { return time.Now().Add(DefaultTombstoneRetention - time.Minute) }
	replays("a minute before the retention ends")

	// Past the retention, the next change of a principal forgets its expired tombstones, and
	// the next principal made in the contract the expired deleted ones.
	ts.srv.store.now = func() time.Time { return time.Now().Add(DefaultTombstoneRetention + time.Minute) }
	addPrincipalKey(t, ts.client, contract.Id, kept.Id, "rotation-2", http.StatusCreated)
	createPrincipal(t, ts.client, contract.Id, "ba-later")
	audit, err := ts.srv.Principals()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range audit {
		if p.ID == deleted.Id {
			t.Errorf("the deleted principal is still recorded past the retention: %+v", p)
		}
	}
	if p, err := ts.srv.store.principal(contract.Id, kept.Id); err != nil || len(p.Revoked) != 0 {
		t.Errorf("the principal keeps the tombstones %+v past the retention (%v)", p.Revoked, err)
	}
	if err := ts.srv.store.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketPrincipalIdempotency).Get(principalIdempotencyKey(contract.Id, "ba-deleted")) != nil {
			t.Errorf("the idempotency key of the forgotten principal is still indexed")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	deletePrincipal(t, ts.client, contract.Id, deleted.Id, http.StatusNotFound)
	removePrincipalKey(t, ts.client, contract.Id, kept.Id, kept.Credentials.AccessKeyId, http.StatusNotFound, contractapi.ProblemNotFound)
	resp, err := ts.client.AddPrincipalKeyWithResponse(t.Context(), contract.Id, deleted.Id, &contractapi.AddPrincipalKeyParams{IdempotencyKey: "rotation-1"})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "a key for the forgotten principal", resp.HTTPResponse, resp.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)
}

// A contract holds at most Limits.Principals principals (422 limit-exceeded past it), and
// remembers as many deleted ones: creating and deleting in a loop is answered 429 with the wait
// until the oldest tombstone is forgotten, rather than forgetting one early.
func TestAContractsPrincipalsAreBudgeted(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw), Limits: Limits{Principals: 2}})
	contract := createContract(t, ts.client, "uid-budget", contractapi.ContractRequest{Plan: "standard"})
	create := func(key string) *contractapi.CreatePrincipalResponse {
		t.Helper()
		resp, err := ts.client.CreatePrincipalWithResponse(t.Context(), contract.Id, &contractapi.CreatePrincipalParams{IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	a, b := createPrincipal(t, ts.client, contract.Id, "ba-a"), createPrincipal(t, ts.client, contract.Id, "ba-b")
	third := create("ba-c")
	wantProblem(t, "a third principal", third.HTTPResponse, third.ApplicationproblemJSON422, http.StatusUnprocessableEntity, contractapi.ProblemLimitExceeded)
	if got := create("ba-a"); got.StatusCode() != http.StatusOK {
		t.Errorf("a replay at the limit: %s, want 200", got.Status())
	}

	deletePrincipal(t, ts.client, contract.Id, a.Id, http.StatusNoContent)
	c := createPrincipal(t, ts.client, contract.Id, "ba-c")
	deletePrincipal(t, ts.client, contract.Id, b.Id, http.StatusNoContent)
	fourth := create("ba-d")
	wantProblem(t, "a principal after two deletions", fourth.HTTPResponse, fourth.ApplicationproblemJSON429, http.StatusTooManyRequests, contractapi.ProblemRateLimited)
	if h := fourth.Headers429; h == nil || time.Duration(h.RetryAfter)*time.Second < DefaultTombstoneRetention-time.Minute ||
		time.Duration(h.RetryAfter)*time.Second > DefaultTombstoneRetention+time.Minute {
		t.Errorf("Retry-After %+v, want about the retention, %s", h, DefaultTombstoneRetention)
	}
	for _, key := range []string{"ba-a", "ba-b"} {
		resp := create(key)
		wantProblem(t, "replay of "+key, resp.HTTPResponse, resp.ApplicationproblemJSON410, http.StatusGone, contractapi.ProblemPrincipalDeleted)
	}

	ts.srv.store.now = func() time.Time { return time.Now().Add(DefaultTombstoneRetention + time.Minute) }
	createPrincipal(t, ts.client, contract.Id, "ba-d")
	deletePrincipal(t, ts.client, contract.Id, c.Id, http.StatusNoContent)
}

// A principal, and a contract, hold at most Limits.Keys keys; a contract at most Limits.Topics
// topics. Changing a topic that exists is no new one.
func TestKeysAndTopicsAreBudgeted(t *testing.T) {
	backend := &principalsBackend{fakeBackend: fakeBackend{multiKey: true}}
	ts := startServer(t, Config{Backend: backend, Limits: Limits{Keys: 2}})
	contract := createContract(t, ts.client, "uid-keys", contractapi.ContractRequest{Plan: "standard"})
	p := createPrincipal(t, ts.client, contract.Id, "ba")
	addPrincipalKey(t, ts.client, contract.Id, p.Id, "rotation-1", http.StatusCreated)
	resp, err := ts.client.AddPrincipalKeyWithResponse(t.Context(), contract.Id, p.Id, &contractapi.AddPrincipalKeyParams{IdempotencyKey: "rotation-2"})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "a principal's third key", resp.HTTPResponse, resp.ApplicationproblemJSON422, http.StatusUnprocessableEntity, contractapi.ProblemLimitExceeded)
	addPrincipalKey(t, ts.client, contract.Id, p.Id, "rotation-1", http.StatusOK)

	addKey(t, ts.client, contract.Id, "contract-rotation-1", http.StatusCreated)
	third, err := ts.client.AddKeyWithResponse(t.Context(), contract.Id, &contractapi.AddKeyParams{IdempotencyKey: "contract-rotation-2"})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "a contract's third key", third.HTTPResponse, third.ApplicationproblemJSON422, http.StatusUnprocessableEntity, contractapi.ProblemLimitExceeded)

	topics := &topicsBackend{}
	tts := startServer(t, Config{Backend: topics, Limits: Limits{Topics: 1}, PushEndpoints: allow(t, "http://127.0.0.1:1")})
	tc := createContract(t, tts.client, "uid-topics", contractapi.ContractRequest{Plan: "standard"})
	if got := putTopic(t, tts.client, tc.Id, "first", "http://127.0.0.1:1/a"); got.StatusCode() != http.StatusCreated {
		t.Fatalf("first topic: %s", got.Status())
	}
	if got := putTopic(t, tts.client, tc.Id, "first", "http://127.0.0.1:1/b"); got.StatusCode() != http.StatusOK {
		t.Errorf("changing the topic at the limit: %s, want 200", got.Status())
	}
	second := putTopic(t, tts.client, tc.Id, "second", "http://127.0.0.1:1/a")
	wantProblem(t, "a second topic", second.HTTPResponse, second.ApplicationproblemJSON422, http.StatusUnprocessableEntity, contractapi.ProblemLimitExceeded)
}

// A contract written by the server before principals had records of their own (schema 1: its
// principals, deleted ones and revoked keys inside the contract's record) loads, and answers
// every replay as it did.
func TestSchemaOneRecordsAreMigrated(t *testing.T) {
	dir := t.TempDir()
	box, err := newSecretBox(testEncryptionKey)
	if err != nil {
		t.Fatal(err)
	}
	const id = "schemaonecontrac"
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	deletedAt := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	firstKey, rotated := newCredentials(newPrincipalAccessKeyID()), newCredentials(newPrincipalAccessKeyID())
	contractKey, contractFirst := newCredentials(newAccessKeyID()), newCredentials(FirstAccessKeyID(id))
	key := func(c Credentials, idem, state string, sealed []byte) map[string]any {
		return map[string]any{"accessKeyId": c.AccessKeyID, "idempotencyKey": idem, "state": state, "sealedSecret": sealed, "createdAt": created}
	}
	legacy := map[string]any{
		"id": id, "idempotencyKey": "uid-schema-one", "request": map[string]any{"plan": "standard"}, "state": stateActive,
		"endpoint": "http://127.0.0.1:1", "region": "us-east-1",
		"firstKey": map[string]any{"AccessKeyID": contractFirst.AccessKeyID, "sealedSecret": box.seal(id, contractFirst.SecretAccessKey)},
		"keys": []map[string]any{
			key(contractFirst, "", keyActive, nil),
			key(contractKey, "contract-rotation-1", keyRemoved, nil),
		},
		"createdAt": created,
		"principals": []map[string]any{
			{"id": "activeprincipal0", "idempotencyKey": "ba-active", "state": principalActive, "createdAt": created, "keys": []map[string]any{
				key(firstKey, "", keyRemoved, box.sealPrincipalKey(id, "activeprincipal0", firstKey.AccessKeyID, firstKey.SecretAccessKey)),
				key(rotated, "rotation-1", keyActive, box.sealPrincipalKey(id, "activeprincipal0", rotated.AccessKeyID, rotated.SecretAccessKey)),
			}},
			{"id": "deletedprincipal", "idempotencyKey": "ba-deleted", "state": principalDeleted, "createdAt": created, "deletedAt": deletedAt},
		},
	}
	writeSchemaOne(t, filepath.Join(dir, "contracts.db"), id, "uid-schema-one", legacy)

	backend := &principalsBackend{}
	ts := startServer(t, Config{Backend: backend, DataDir: dir})
	if got := getPrincipal(t, ts.client, id, "activeprincipal0"); !cmp.Equal(got.AccessKeyIds, []string{rotated.AccessKeyID}) {
		t.Errorf("the migrated principal has keys %v, want [%s]", got.AccessKeyIds, rotated.AccessKeyID)
	}
	replay, err := ts.client.CreatePrincipalWithResponse(t.Context(), id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-active"})
	if err != nil || replay.JSON200 == nil {
		t.Fatalf("replay of the migrated principal's creation: %v %s %s", err, replay.Status(), replay.Body)
	}
	if c := replay.JSON200.Credentials; c.AccessKeyId != firstKey.AccessKeyID || c.SecretAccessKey != firstKey.SecretAccessKey {
		t.Errorf("replay of the creation answered key %s, want the first key %s with its secret", c.AccessKeyId, firstKey.AccessKeyID)
	}
	if got := addPrincipalKey(t, ts.client, id, "activeprincipal0", "rotation-1", http.StatusOK); got.Credentials.SecretAccessKey != rotated.SecretAccessKey {
		t.Errorf("replay of the key's adding answered key %s, want %s with its secret", got.Credentials.AccessKeyId, rotated.AccessKeyID)
	}
	removePrincipalKey(t, ts.client, id, "activeprincipal0", firstKey.AccessKeyID, http.StatusNoContent, "")
	gone, err := ts.client.CreatePrincipalWithResponse(t.Context(), id, &contractapi.CreatePrincipalParams{IdempotencyKey: "ba-deleted"})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "replay of the migrated deleted principal", gone.HTTPResponse, gone.ApplicationproblemJSON410, http.StatusGone, contractapi.ProblemPrincipalDeleted)
	deletePrincipal(t, ts.client, id, "deletedprincipal", http.StatusNoContent)
	revoked, err := ts.client.AddKeyWithResponse(t.Context(), id, &contractapi.AddKeyParams{IdempotencyKey: "contract-rotation-1"})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "replay of the migrated revoked contract key", revoked.HTTPResponse, revoked.ApplicationproblemJSON410, http.StatusGone, contractapi.ProblemKeyRevoked)
	if got := contractKeyIDs(t, ts.client, id); !cmp.Equal(got, []string{contractFirst.AccessKeyID}) {
		t.Errorf("the migrated contract has keys %v, want [%s]", got, contractFirst.AccessKeyID)
	}
	audit, err := ts.srv.Principals()
	if err != nil {
		t.Fatal(err)
	}
	want := []PrincipalSummary{
		{ContractID: id, ID: "activeprincipal0", IdempotencyKey: "ba-active", State: principalActive, AccessKeyIDs: []string{rotated.AccessKeyID}},
		{ContractID: id, ID: "deletedprincipal", IdempotencyKey: "ba-deleted", State: principalDeleted, AccessKeyIDs: []string{}},
	}
	if diff := cmp.Diff(want, audit); diff != "" {
		t.Errorf("Principals after the migration (-want +got):\n%s", diff)
	}
	ts.stop()

	// The contract's record no longer holds them; a second start finds nothing to migrate.
	raw := readContractJSON(t, filepath.Join(dir, "contracts.db"), id)
	if _, ok := raw["principals"]; ok || strings.Contains(string(raw["keys"]), keyRemoved) {
		t.Errorf("the contract's record still holds principals or revoked keys: %s", raw)
	}
	var logged syncBuffer
	again := startServer(t, Config{Backend: backend, DataDir: dir, Logger: slogTo(&logged)})
	getPrincipal(t, again.client, id, "activeprincipal0")
	if strings.Contains(logged.String(), "older server") {
		t.Errorf("the second start migrated again: %s", logged.String())
	}
}

// writeSchemaOne writes one contract record as servers before schema 2 stored it.
func writeSchemaOne(t *testing.T, path, id, key string, rec map[string]any) {
	t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
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

func readContractJSON(t *testing.T, path, id string) map[string]json.RawMessage {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var raw map[string]json.RawMessage
	if err := db.View(func(tx *bolt.Tx) error {
		return json.Unmarshal(tx.Bucket(bucketContracts).Get([]byte(id)), &raw)
	}); err != nil {
		t.Fatal(err)
	}
	return raw
}

// One tenant's churn at its budget leaves another tenant answered at once: each tenant
// (OSM-Tenant) has a budget of its own within the client's, and a request refused for its
// tenant takes nothing from the client's.
func TestATenantAtItsLimitLeavesTheOthersAnswered(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw), RequestsPerSecond: 5, Burst: 20, TenantRequestsPerSecond: 1, TenantBurst: 5})
	contract := createContract(t, ts.client, "uid-tenants", contractapi.ContractRequest{Plan: "standard"})
	get := func(tenant string) (*contractapi.GetContractResponse, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := ts.client.GetContractWithResponse(t.Context(), contract.Id, func(_ context.Context, req *http.Request) error {
			req.Header.Set(contractapi.TenantHeader, tenant)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp, time.Since(start)
	}
	// Tenant a churns: its burst is answered, then every request is refused for it, however
	// many it sends, while the client's budget stays for the others.
	answered := 0
	for range 40 {
		resp, _ := get("tenant-a")
		switch resp.StatusCode() {
		case http.StatusOK:
			answered++
		case http.StatusTooManyRequests:
			if d := ptrValue(resp.ApplicationproblemJSON429.Detail); !strings.Contains(d, `tenant "tenant-a"`) {
				t.Errorf("429 for tenant a says %q, want it to name the tenant", d)
			}
			if resp.Headers429 == nil || resp.Headers429.RetryAfter < 1 {
				t.Errorf("429 without Retry-After: %+v", resp.Headers429)
			}
		default:
			t.Fatalf("tenant a: %s %s", resp.Status(), resp.Body)
		}
	}
	if answered < 5 || answered > 7 {
		t.Errorf("tenant a had %d of 40 requests answered, want its burst of 5 (and a refill or two)", answered)
	}
	for i := range 5 {
		resp, took := get("tenant-b")
		if resp.StatusCode() != http.StatusOK || took > time.Second {
			t.Errorf("tenant b's request %d while a is at its limit: %s after %s, want 200 at once", i+1, resp.Status(), took)
		}
	}

	bad, _ := get("Not_A_Namespace")
	wantProblem(t, "a tenant that is no namespace", bad.HTTPResponse, bad.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
}

// Requests without a tenant share one tenant's budget: leaving the header out is no way
// around it.
func TestRequestsWithoutATenantShareOneBudget(t *testing.T) {
	ts := startServer(t, Config{Backend: &fakeBackend{}, TenantRequestsPerSecond: 0.01, TenantBurst: 2})
	statuses := map[int]int{}
	for range 4 {
		resp, err := ts.client.GetContractWithResponse(t.Context(), "none")
		if err != nil {
			t.Fatal(err)
		}
		statuses[resp.StatusCode()]++
	}
	if statuses[http.StatusNotFound] != 2 || statuses[http.StatusTooManyRequests] != 2 {
		t.Errorf("four requests without a tenant: %v, want 2 answered and 2 refused", statuses)
	}
}
