package cosidriver

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
)

// The bucket's policy is the record of its grants: what the driver writes it reads back, on
// both policy forms, and removing one principal leaves the others.
func TestGrantsReadBackFromThePolicy(t *testing.T) {
	grants := []bucketpolicy.AccessGrant{
		{Name: "p-1", Access: bucketpolicy.ReadOnly, Principal: map[string]any{"AWS": "p-1"}},
		{Name: "p-2", Access: bucketpolicy.ReadOnly, Principal: map[string]any{"AWS": "p-2"}},
		{Name: "p-3", Access: bucketpolicy.WriteOnly, Principal: map[string]any{"AWS": "p-3"}},
		{Name: "p-4", Access: bucketpolicy.ReadWrite, Principal: map[string]any{"AWS": "p-4"}},
	}
	for _, form := range []bucketpolicy.Form{
		{},
		{ResourcePrefix: "arn:aws:s3:::", Owner: map[string]string{"AWS": "owner"}, OwnerNeedsAllow: true},
	} {
		policy := bucketpolicy.Compose("", "photos", grants, form)
		got := grantsIn(policy)
		want := []bucketpolicy.AccessGrant{grants[0], grants[1], grants[3], grants[2]} // in mode order
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("form %+v: grants read back (-want +got):\n%s", form, d)
		}
		left := withoutPrincipal(got, map[string]any{"AWS": "p-2"})
		if d := cmp.Diff([]bucketpolicy.AccessGrant{grants[0], grants[3], grants[2]}, left); d != "" {
			t.Errorf("without p-2 (-want +got):\n%s", d)
		}
	}
	if got := grantsIn(`{"Statement":[{"Sid":"Mine","Effect":"Allow","Principal":{"AWS":"x"},"Action":"s3:*","Resource":"*"}]}`); got != nil {
		t.Errorf("a statement the driver did not write read as grants: %v", got)
	}
}
