package contractserver

import (
	"errors"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The server retries backend calls after crashes, so each one must succeed when repeated.
func TestVersityGWBackendIsIdempotent(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	b := gatewayBackend(t, gw)
	ctx := t.Context()
	id := newContractID()
	creds := newCredentials(FirstAccessKeyID(id))
	plan := Plan{Name: "standard"}

	for i := range 2 {
		if err := b.CreateAccount(ctx, id, creds, plan); err != nil {
			t.Fatalf("CreateAccount, attempt %d: %v", i+1, err)
		}
	}
	other := newCredentials(creds.AccessKeyID)
	if err := b.CreateAccount(ctx, id, other, plan); err == nil {
		t.Errorf("CreateAccount with another secret for an existing user succeeded")
	}
	if err := b.CreateAccount(ctx, newContractID(), creds, plan); err == nil {
		t.Errorf("CreateAccount with a key not named after the contract succeeded")
	}
	if err := b.CreateAccount(ctx, newContractID(), creds, Plan{Name: "small", QuotaBytes: 1}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("CreateAccount with a quota: %v, want ErrNotSupported", err)
	}
	for i := range 2 {
		if err := b.DeleteAccount(ctx, id, false); err != nil {
			t.Fatalf("DeleteAccount, attempt %d: %v", i+1, err)
		}
	}
	users, err := b.admin.listUsers(ctx)
	if err != nil {
		t.Fatalf("list-users: %v", err)
	}
	for _, u := range users {
		if u.Access == creds.AccessKeyID {
			t.Errorf("user %q still exists after DeleteAccount", u.Access)
		}
	}
}
