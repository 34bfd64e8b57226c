package contractserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// The operator's client pointed at this server under a prefix it does not serve (an ingress
// that does not strip /api) never reads a contract, key or principal as gone, which would make
// Bucket deletion skip its bucket, a Delete-policy Contract delete its keys and BucketAccess
// deletion forget its principal. Each call fails, is retried, and says the URL is probably
// wrong. Behind a proxy that strips the prefix, the API's not-found is believed again.
func TestAWrongURLPrefixNeverReadsAsGone(t *testing.T) {
	ts := startServer(t, Config{Backend: &fakeBackend{multiKey: true}})
	c := createContract(t, ts.client, "uid-1", contractapi.ContractRequest{Plan: "standard"})
	key := c.Credentials.AccessKeyId

	wrong := contractclient.New(newClient(t, ts.http.URL+"/api", testToken))
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"Get":                              func() error { _, err := wrong.Get(ctx, c.Id); return err },
		"Get of an unknown contract":       func() error { _, err := wrong.Get(ctx, "nosuchcontract"); return err },
		"Cancel":                           func() error { return wrong.Cancel(ctx, c.Id) },
		"RemoveKey":                        func() error { return wrong.RemoveKey(ctx, c.Id, key) },
		"RemoveKey of an unknown key":      func() error { return wrong.RemoveKey(ctx, c.Id, "NOSUCHKEY") },
		"AddKey":                           func() error { _, err := wrong.AddKey(ctx, c.Id, "rotation-1"); return err },
		"GetPrincipal":                     func() error { _, err := wrong.GetPrincipal(ctx, c.Id, "p1"); return err },
		"DeletePrincipal":                  func() error { return wrong.DeletePrincipal(ctx, c.Id, "p1") },
		"RemovePrincipalKey":               func() error { return wrong.RemovePrincipalKey(ctx, c.Id, "p1", "AKP1") },
		"DeletePrincipal of an unknown id": func() error { return wrong.DeletePrincipal(ctx, "nosuchcontract", "p1") },
	} {
		err := call()
		if err == nil {
			t.Errorf("%s under a wrong prefix succeeded, want an error (a delete taken as done forgets what still exists)", name)
			continue
		}
		if errors.Is(err, contractclient.ErrNotFound) {
			t.Errorf("%s under a wrong prefix: %v, which reads as gone", name, err)
		}
		v := contractclient.Classify(err)
		if v.Action != contractclient.Backoff || v.Err == nil || !strings.Contains(v.Err.Summary(), "contract API URL") {
			t.Errorf("%s under a wrong prefix: %v (action %d), want a retried error whose summary points at the contract API URL", name, err, v.Action)
		}
	}
	got, err := ts.client.GetContractWithResponse(ctx, c.Id)
	if err != nil || got.JSON200 == nil || got.JSON200.State != contractapi.Active || len(got.JSON200.AccessKeys) != 1 {
		t.Fatalf("the contract after the calls: %v %v, want it active with its key", err, got.Status())
	}

	stripping := httptest.NewServer(http.StripPrefix("/api", ts.srv.Handler()))
	t.Cleanup(stripping.Close)
	proxied := contractclient.New(newClient(t, stripping.URL+"/api", testToken))
	if _, err := proxied.Get(ctx, "nosuchcontract"); !errors.Is(err, contractclient.ErrNotFound) {
		t.Errorf("Get of an unknown contract behind a proxy that strips the prefix: %v, want ErrNotFound", err)
	}
	if err := proxied.Cancel(ctx, "nosuchcontract"); !errors.Is(err, contractclient.ErrNotFound) {
		t.Errorf("Cancel of an unknown contract behind a proxy that strips the prefix: %v, want ErrNotFound", err)
	}
	if err := proxied.RemoveKey(ctx, c.Id, "NOSUCHKEY"); err != nil {
		t.Errorf("RemoveKey of an unknown key behind a proxy that strips the prefix: %v, want success (it is gone)", err)
	}
	if _, err := proxied.Get(ctx, c.Id); err != nil {
		t.Errorf("Get behind a proxy that strips the prefix: %v", err)
	}
}
