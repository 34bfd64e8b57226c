package objectstore

import (
	"fmt"
	"testing"
)

// Every resync of every Bucket compares the server's ACL with the spec, so this comparison is
// part of the operator's steady-state CPU cost per Bucket (the policy's is in bucketpolicy).

func BenchmarkACLEqual(b *testing.B) {
	var explicit []Grant
	for i := range 20 {
		explicit = append(explicit, Grant{Grantee{GranteeID, fmt.Sprintf("account-%02d", i)}, PermissionRead})
	}
	desired := DesiredACL("owner", CannedPublicRead, explicit)
	observed := ACL{Owner: "owner", Grants: append([]Grant{{Grantee{GranteeGroup, "all-users"}, PermissionRead}}, desired.Grants...)}
	b.ReportAllocs()
	for b.Loop() {
		if !desired.Equal(observed) {
			b.Fatal("the ACLs differ")
		}
	}
}
