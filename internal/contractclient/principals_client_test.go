package contractclient_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The client's principal calls against the reference server over a real versitygw: what the
// BucketAccess controller will see, including which refusals are success for it.
func TestClientPrincipals(t *testing.T) {
	c := startContractAPI(t)
	ctx := t.Context()
	contract, _, err := c.Buy(ctx, "uid-contract", contractclient.Request{Plan: "standard"})
	if err != nil {
		t.Fatalf("Buy: %v", err)
	}

	p, created, err := c.CreatePrincipal(ctx, contract.ID, "uid-access")
	if err != nil || !created {
		t.Fatalf("CreatePrincipal: created %v, %v; want a new principal", created, err)
	}
	first := p.Credentials
	if first == nil || first.SecretAccessKey == "" || !cmp.Equal(p.AccessKeyIDs, []string{first.AccessKeyID}) ||
		!cmp.Equal(p.PolicyPrincipal, map[string]any{"AWS": first.AccessKeyID}) {
		t.Fatalf("CreatePrincipal: %+v with credentials %v, want one key named in policyPrincipal", p, first != nil)
	}
	again, created, err := c.CreatePrincipal(ctx, contract.ID, "uid-access")
	if err != nil || created || again.ID != p.ID || again.Credentials == nil || *again.Credentials != *first {
		t.Fatalf("CreatePrincipal replay: %s created %v, %v; want %s with the same key pair", again.ID, created, err, p.ID)
	}
	got, err := c.GetPrincipal(ctx, contract.ID, p.ID)
	if err != nil {
		t.Fatalf("GetPrincipal: %v", err)
	}
	if diff := cmp.Diff(contractclient.Principal{ID: p.ID, PolicyPrincipal: p.PolicyPrincipal, AccessKeyIDs: p.AccessKeyIDs}, got); diff != "" {
		t.Errorf("GetPrincipal (-want +got):\n%s", diff)
	}

	rotated, second, err := c.AddPrincipalKey(ctx, contract.ID, p.ID, "rotation-1")
	if err != nil {
		t.Fatalf("AddPrincipalKey: %v", err)
	}
	if !cmp.Equal(rotated.AccessKeyIDs, []string{first.AccessKeyID, second.AccessKeyID}) || rotated.Credentials != nil ||
		!cmp.Equal(rotated.PolicyPrincipal, map[string]any{"AWS": []any{first.AccessKeyID, second.AccessKeyID}}) {
		t.Errorf("AddPrincipalKey: %+v, want both keys, oldest first, in accessKeyIds and policyPrincipal", rotated)
	}
	if _, replayed, err := c.AddPrincipalKey(ctx, contract.ID, p.ID, "rotation-1"); err != nil || replayed != second {
		t.Errorf("AddPrincipalKey replay: key %s, %v; want the same key pair %s", replayed.AccessKeyID, err, second.AccessKeyID)
	}

	for _, key := range []string{first.AccessKeyID, first.AccessKeyID, "OSMPNOSUCHKEY"} {
		if err := c.RemovePrincipalKey(ctx, contract.ID, p.ID, key); err != nil {
			t.Errorf("RemovePrincipalKey(%s): %v, want success for a key that is gone", key, err)
		}
	}
	err = c.RemovePrincipalKey(ctx, contract.ID, p.ID, second.AccessKeyID)
	if !errors.Is(err, contractclient.ErrLastKey) {
		t.Errorf("RemovePrincipalKey of the last key: %v, want ErrLastKey", err)
	}
	if e, ok := contractclient.AsError(err); !ok || e.Retryable() {
		t.Errorf("the last-key refusal must not be retried: %v", err)
	}

	for _, id := range []string{p.ID, p.ID, "nosuchprincipal"} {
		if err := c.DeletePrincipal(ctx, contract.ID, id); err != nil {
			t.Errorf("DeletePrincipal(%s): %v, want success for a principal that is gone", id, err)
		}
	}
	if _, err := c.GetPrincipal(ctx, contract.ID, p.ID); !errors.Is(err, contractclient.ErrNotFound) {
		t.Errorf("GetPrincipal of a deleted principal: %v, want ErrNotFound", err)
	}
	_, _, err = c.CreatePrincipal(ctx, contract.ID, "uid-access")
	if !errors.Is(err, contractclient.ErrPrincipalDeleted) {
		t.Errorf("CreatePrincipal with the key of a deleted principal: %v, want ErrPrincipalDeleted", err)
	}
	for _, secret := range []string{first.SecretAccessKey, second.SecretAccessKey} {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("an error holds a secret key: %v", err)
		}
	}
}

// startContractAPI runs the reference contract server over a versitygw on 127.0.0.1 and
// returns the operator's client for it; configure changes the server's Config first.
func startContractAPI(t *testing.T, configure ...func(*contractserver.Config)) *contractclient.Client {
	t.Helper()
	gw, err := localenv.StartVersityGW(t.Context(), localenv.VersityGWOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(func() { _ = gw.Stop() })
	backend, err := contractserver.NewVersityGWBackend(contractserver.VersityGWConfig{
		S3Endpoint: gw.Endpoint, Region: gw.Region, AdminEndpoint: gw.AdminEndpoint,
		AdminAccessKey: gw.RootAccessKey, AdminSecretKey: gw.RootSecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := contractserver.Config{
		Token: "token", DataDir: t.TempDir(), Backend: backend,
		EncryptionKey: []byte(strings.Repeat("k", contractserver.EncryptionKeySize)),
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, c := range configure {
		c(&cfg)
	}
	srv, err := contractserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); _ = srv.Close() })
	gen, err := contractapi.NewClientWithResponses(hs.URL, contractapi.WithBearerToken("token"))
	if err != nil {
		t.Fatal(err)
	}
	return contractclient.New(gen)
}
