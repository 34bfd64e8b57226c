package objectstore

import (
	"fmt"
	"testing"
)

// Every resync of every Bucket compares the server's ACL and policy with the spec, so these
// comparisons are the operator's steady-state CPU cost per Bucket.

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

func BenchmarkPoliciesEqual(b *testing.B) {
	spec := `{"Version":"2012-10-17","Statement":[` +
		`{"Sid":"Read","Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::b/*"]},` +
		`{"Sid":"Owner","Effect":"Allow","Principal":{"AWS":["OWNER"]},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}]}`
	observed := `{"Statement":[{"Action":"s3:GetObject","Effect":"Allow","Principal":{"AWS":"*"},"Resource":"arn:aws:s3:::b/*","Sid":"Read"},` +
		`{"Action":["s3:*"],"Effect":"Allow","Principal":{"AWS":"OWNER"},"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"],"Sid":"Owner"}],"Version":"2012-10-17"}`
	b.ReportAllocs()
	for b.Loop() {
		if !PoliciesEqual(spec, observed) {
			b.Fatal("the policies differ")
		}
	}
}
