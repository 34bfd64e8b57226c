package storage

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

func TestSpecGrantsGivesEachListItsPermission(t *testing.T) {
	alice := storagev1alpha1.Grantee{Type: storagev1alpha1.GranteeTypeID, Value: "alice"}
	everyone := storagev1alpha1.Grantee{Type: storagev1alpha1.GranteeTypeURL, Value: objectstore.GroupAllUsers}
	bob := storagev1alpha1.Grantee{Type: storagev1alpha1.GranteeTypeEmailAddress, Value: "bob@example.com"}
	spec := &storagev1alpha1.BucketSpec{
		GrantRead:     []storagev1alpha1.Grantee{alice, everyone},
		GrantWrite:    []storagev1alpha1.Grantee{bob},
		GrantReadACP:  []storagev1alpha1.Grantee{alice},
		GrantWriteACP: []storagev1alpha1.Grantee{bob},
		FullControl:   []storagev1alpha1.Grantee{alice},
	}
	want := []objectstore.Grant{
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: "alice"}, Permission: objectstore.PermissionFullControl},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: "alice"}, Permission: objectstore.PermissionRead},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeGroup, Value: objectstore.GroupAllUsers}, Permission: objectstore.PermissionRead},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeEmail, Value: "bob@example.com"}, Permission: objectstore.PermissionWrite},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: "alice"}, Permission: objectstore.PermissionReadACP},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeEmail, Value: "bob@example.com"}, Permission: objectstore.PermissionWriteACP},
	}
	if diff := cmp.Diff(want, specGrants(spec)); diff != "" {
		t.Errorf("specGrants (-want +got):\n%s", diff)
	}
}

func TestObservedACLEqualComparesWithWhatStatusRecorded(t *testing.T) {
	observed := objectstore.ACL{Owner: "o", Grants: []objectstore.Grant{
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeGroup, Value: "all-users"}, Permission: objectstore.PermissionRead},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: "o"}, Permission: objectstore.PermissionFullControl},
	}}
	recorded := toObservedACL(observed)
	if !observedACLEqual(recorded, observed) {
		t.Error("the ACL status recorded must equal the same observation")
	}
	if observedACLEqual(nil, observed) {
		t.Error("nothing recorded equals no observation")
	}
	changed := observed
	changed.Grants = observed.Grants[1:]
	if observedACLEqual(recorded, changed) {
		t.Error("a removed grant must count as a change")
	}
}

func TestSamePolicy(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"", `{"Statement":[]}`, false},
		{`{"Statement":[],"Version":"2012-10-17"}`, `{ "Version": "2012-10-17", "Statement": [] }`, true},
	}
	for _, tt := range tests {
		if got := samePolicy(tt.a, tt.b); got != tt.want {
			t.Errorf("samePolicy(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
