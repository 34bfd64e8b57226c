package objectstore

import (
	"cmp"
	"slices"
)

// Permission is an S3 ACL permission.
type Permission string

const (
	PermissionFullControl Permission = "FULL_CONTROL"
	PermissionRead        Permission = "READ"
	PermissionWrite       Permission = "WRITE"
	PermissionReadACP     Permission = "READ_ACP"
	PermissionWriteACP    Permission = "WRITE_ACP"
)

// GranteeType says how a grantee is named; the values match the Bucket API's.
type GranteeType string

const (
	GranteeID    GranteeType = "id"
	GranteeEmail GranteeType = "emailAddress"
	GranteeGroup GranteeType = "url"
)

// The predefined groups, by their URIs.
const (
	GroupAllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	GroupAuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	GroupLogDelivery        = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

// groupAliases maps the names some servers use for the predefined groups to their URIs.
var groupAliases = map[string]string{
	"all-users":           GroupAllUsers,
	"authenticated-users": GroupAuthenticatedUsers,
	"log-delivery":        GroupLogDelivery,
}

// Grantee is who a grant is for.
type Grantee struct {
	Type  GranteeType
	Value string
}

// Grant gives a grantee a permission.
type Grant struct {
	Grantee    Grantee
	Permission Permission
}

// ACL is a bucket's owner and grants.
type ACL struct {
	Owner  string
	Grants []Grant
}

// Canned ACL names.
const (
	CannedPrivate           = "private"
	CannedPublicRead        = "public-read"
	CannedPublicReadWrite   = "public-read-write"
	CannedAuthenticatedRead = "authenticated-read"
)

// cannedGroupGrants are the grants each canned ACL adds to the owner's FULL_CONTROL.
var cannedGroupGrants = map[string][]Grant{
	CannedPrivate: nil,
	CannedPublicRead: {
		{Grantee{GranteeGroup, GroupAllUsers}, PermissionRead},
	},
	CannedPublicReadWrite: {
		{Grantee{GranteeGroup, GroupAllUsers}, PermissionRead},
		{Grantee{GranteeGroup, GroupAllUsers}, PermissionWrite},
	},
	CannedAuthenticatedRead: {
		{Grantee{GranteeGroup, GroupAuthenticatedUsers}, PermissionRead},
	},
}

// DesiredACL is the ACL a spec asks for: the canned ACL (private when empty) expanded into
// grants, the explicit grants added, and the owner's FULL_CONTROL always kept, in normal form.
func DesiredACL(owner, canned string, explicit []Grant) ACL {
	if canned == "" {
		canned = CannedPrivate
	}
	grants := []Grant{{Grantee{GranteeID, owner}, PermissionFullControl}}
	grants = append(grants, cannedGroupGrants[canned]...)
	grants = append(grants, explicit...)
	return Normalize(ACL{Owner: owner, Grants: grants})
}

// Normalize puts an ACL in the form ACLs are compared in: group aliases spelled as URIs, grants
// sorted, duplicates dropped.
func Normalize(acl ACL) ACL {
	out := ACL{Owner: acl.Owner, Grants: make([]Grant, 0, len(acl.Grants))}
	for _, g := range acl.Grants {
		if g.Grantee.Type == GranteeGroup {
			if uri, ok := groupAliases[g.Grantee.Value]; ok {
				g.Grantee.Value = uri
			}
		}
		out.Grants = append(out.Grants, g)
	}
	slices.SortFunc(out.Grants, compareGrants)
	out.Grants = slices.Compact(out.Grants)
	return out
}

func compareGrants(a, b Grant) int {
	return cmp.Or(
		cmp.Compare(a.Grantee.Type, b.Grantee.Type),
		cmp.Compare(a.Grantee.Value, b.Grantee.Value),
		cmp.Compare(a.Permission, b.Permission),
	)
}

// Equal reports whether two ACLs grant the same, whatever their order or spelling.
func (a ACL) Equal(b ACL) bool {
	na, nb := Normalize(a), Normalize(b)
	return na.Owner == nb.Owner && slices.Equal(na.Grants, nb.Grants)
}

// Canned returns the canned ACL that means exactly this ACL, if there is one. Writing a canned
// ACL (the x-amz-acl header) is understood by every server, including those that spell group
// grantees their own way.
func (a ACL) Canned() (string, bool) {
	for _, name := range []string{CannedPrivate, CannedPublicRead, CannedPublicReadWrite, CannedAuthenticatedRead} {
		if a.Equal(DesiredACL(a.Owner, name, nil)) {
			return name, true
		}
	}
	return "", false
}

// IsPublicACL says whether acl grants anything to everyone or to every AWS account, which is
// what AWS's public access block calls a public ACL.
func IsPublicACL(acl ACL) bool {
	for _, g := range Normalize(acl).Grants {
		if g.Grantee.Type == GranteeGroup && (g.Grantee.Value == GroupAllUsers || g.Grantee.Value == GroupAuthenticatedUsers) {
			return true
		}
	}
	return false
}

// IsPublicCanned says whether a canned ACL is public (see IsPublicACL).
func IsPublicCanned(canned string) bool {
	return IsPublicACL(ACL{Grants: cannedGroupGrants[canned]})
}
