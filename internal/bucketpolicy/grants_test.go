package bucketpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The bucket's policy is the record of its grants: what the COSI driver writes it reads back, on
// both policy forms, and removing one principal leaves the others.
func TestGrantsReadBackFromThePolicy(t *testing.T) {
	grants := []AccessGrant{
		{Name: "p-1", Access: ReadOnly, Principal: map[string]any{"AWS": "p-1"}},
		{Name: "p-2", Access: ReadOnly, Principal: map[string]any{"AWS": "p-2"}},
		{Name: "p-3", Access: WriteOnly, Principal: map[string]any{"AWS": "p-3"}},
		{Name: "p-4", Access: ReadWrite, Principal: map[string]any{"AWS": "p-4"}},
	}
	for _, form := range []Form{
		{},
		{ResourcePrefix: "arn:aws:s3:::", Owner: map[string]string{"AWS": "owner"}, OwnerNeedsAllow: true},
	} {
		policy := Compose("", "photos", grants, form)
		got := GrantsIn(policy)
		want := []AccessGrant{grants[0], grants[1], grants[3], grants[2]} // in mode order
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("form %+v: grants read back (-want +got):\n%s", form, d)
		}
		left := WithoutPrincipal(got, map[string]any{"AWS": "p-2"})
		if d := cmp.Diff([]AccessGrant{grants[0], grants[3], grants[2]}, left); d != "" {
			t.Errorf("without p-2 (-want +got):\n%s", d)
		}
	}
	if got := GrantsIn(`{"Statement":[{"Sid":"Mine","Effect":"Allow","Principal":{"AWS":"x"},"Action":"s3:*","Resource":"*"}]}`); got != nil {
		t.Errorf("a statement no grant wrote read as grants: %v", got)
	}
}
