package objectstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDesiredACLExpandsCannedACLsAndKeepsTheOwner(t *testing.T) {
	owner := Grant{Grantee{GranteeID, "owner"}, PermissionFullControl}
	allRead := Grant{Grantee{GranteeGroup, GroupAllUsers}, PermissionRead}
	tests := []struct {
		name     string
		canned   string
		explicit []Grant
		want     []Grant
	}{
		{name: "no canned ACL is private", want: []Grant{owner}},
		{name: "private", canned: CannedPrivate, want: []Grant{owner}},
		{name: "public-read", canned: CannedPublicRead, want: []Grant{owner, allRead}},
		{name: "public-read-write", canned: CannedPublicReadWrite, want: []Grant{
			owner, allRead, {Grantee{GranteeGroup, GroupAllUsers}, PermissionWrite},
		}},
		{name: "authenticated-read", canned: CannedAuthenticatedRead, want: []Grant{
			owner, {Grantee{GranteeGroup, GroupAuthenticatedUsers}, PermissionRead},
		}},
		{
			name:     "explicit grants add to the canned ACL, sorted by type, grantee, permission",
			canned:   CannedPublicRead,
			explicit: []Grant{{Grantee{GranteeEmail, "b@example.com"}, PermissionWrite}, {Grantee{GranteeID, "alice"}, PermissionReadACP}},
			want: []Grant{
				{Grantee{GranteeEmail, "b@example.com"}, PermissionWrite},
				{Grantee{GranteeID, "alice"}, PermissionReadACP},
				owner,
				allRead,
			},
		},
		{
			name:     "a grant repeating the canned ACL is not doubled",
			canned:   CannedPublicRead,
			explicit: []Grant{allRead},
			want:     []Grant{owner, allRead},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DesiredACL("owner", tt.canned, tt.explicit)
			if diff := cmp.Diff(ACL{Owner: "owner", Grants: tt.want}, got); diff != "" {
				t.Errorf("DesiredACL (-want +got):\n%s", diff)
			}
		})
	}
}

func TestACLEqualIgnoresOrderAndGroupSpelling(t *testing.T) {
	spec := DesiredACL("owner", CannedPublicRead, nil)
	tests := []struct {
		name     string
		observed ACL
		want     bool
	}{
		{name: "same grants in another order", want: true, observed: ACL{Owner: "owner", Grants: []Grant{
			{Grantee{GranteeGroup, GroupAllUsers}, PermissionRead},
			{Grantee{GranteeID, "owner"}, PermissionFullControl},
		}}},
		{name: "versitygw's name for AllUsers", want: true, observed: ACL{Owner: "owner", Grants: []Grant{
			{Grantee{GranteeID, "owner"}, PermissionFullControl},
			{Grantee{GranteeGroup, "all-users"}, PermissionRead},
		}}},
		{name: "a grant missing", want: false, observed: ACL{Owner: "owner", Grants: []Grant{
			{Grantee{GranteeID, "owner"}, PermissionFullControl},
		}}},
		{name: "a grant too many", want: false, observed: ACL{Owner: "owner", Grants: []Grant{
			{Grantee{GranteeID, "owner"}, PermissionFullControl},
			{Grantee{GranteeGroup, GroupAllUsers}, PermissionRead},
			{Grantee{GranteeGroup, GroupAllUsers}, PermissionWrite},
		}}},
		{name: "another owner", want: false, observed: ACL{Owner: "mallory", Grants: spec.Grants}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spec.Equal(tt.observed); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCannedFindsTheCannedACLThatMeansTheSame(t *testing.T) {
	tests := []struct {
		name      string
		acl       ACL
		want      string
		wantFound bool
	}{
		{name: "private", acl: DesiredACL("o", "", nil), want: CannedPrivate, wantFound: true},
		{name: "public-read", acl: DesiredACL("o", CannedPublicRead, nil), want: CannedPublicRead, wantFound: true},
		{name: "authenticated-read", acl: DesiredACL("o", CannedAuthenticatedRead, nil), want: CannedAuthenticatedRead, wantFound: true},
		{name: "explicit grants have no canned form", acl: DesiredACL("o", CannedPublicRead,
			[]Grant{{Grantee{GranteeID, "bob"}, PermissionRead}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := tt.acl.Canned()
			if got != tt.want || found != tt.wantFound {
				t.Errorf("Canned() = %q, %v; want %q, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}
