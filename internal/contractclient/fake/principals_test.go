package fake

import (
	"context"
	"errors"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// The fake keeps the reference server's rules, so unit tests built on it mean what they say.
func TestPrincipalsFollowTheServersRules(t *testing.T) {
	ctx := context.Background()
	api := &API{}
	c, _, err := api.Buy(ctx, "uid-1", contractclient.Request{Plan: "standard"})
	if err != nil {
		t.Fatal(err)
	}

	p, created, err := api.CreatePrincipal(ctx, c.ID, "ba-uid")
	if err != nil || !created || p.Credentials == nil {
		t.Fatalf("CreatePrincipal = %+v, %v, %v", p, created, err)
	}
	again, created, err := api.CreatePrincipal(ctx, c.ID, "ba-uid")
	if err != nil || created || again.ID != p.ID || *again.Credentials != *p.Credentials {
		t.Errorf("a replay made something new or other keys: %+v, %v, %v", again, created, err)
	}

	_, k2, err := api.AddPrincipalKey(ctx, c.ID, p.ID, "rotation-1")
	if err != nil {
		t.Fatal(err)
	}
	_, k2again, _ := api.AddPrincipalKey(ctx, c.ID, p.ID, "rotation-1")
	if k2again != k2 {
		t.Errorf("a replayed AddPrincipalKey issued another key: %s, then %s", k2.AccessKeyID, k2again.AccessKeyID)
	}
	if err := api.RemovePrincipalKey(ctx, c.ID, p.ID, p.Credentials.AccessKeyID); err != nil {
		t.Fatal(err)
	}
	if err := api.RemovePrincipalKey(ctx, c.ID, p.ID, k2.AccessKeyID); !errors.Is(err, contractclient.ErrLastKey) {
		t.Errorf("removing the last key: %v, want ErrLastKey", err)
	}

	if err := api.DeletePrincipal(ctx, c.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := api.GetPrincipal(ctx, c.ID, p.ID); !errors.Is(err, contractclient.ErrNotFound) {
		t.Errorf("GetPrincipal after delete: %v, want ErrNotFound", err)
	}
	if _, _, err := api.CreatePrincipal(ctx, c.ID, "ba-uid"); !errors.Is(err, contractclient.ErrPrincipalDeleted) {
		t.Errorf("a replay after delete: %v, want ErrPrincipalDeleted", err)
	}
}
