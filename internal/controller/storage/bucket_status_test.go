package storage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

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

func TestEffectivePolicyKeepsTheOwnerInControlWhereTheServerNeedsIt(t *testing.T) {
	spec := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/downloads/*"}]}`
	bucket := &storagev1alpha1.Bucket{Spec: storagev1alpha1.BucketSpec{BucketName: "b", Policy: &runtime.RawExtension{Raw: []byte(spec)}}}
	withOwner := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/downloads/*"},
		{"Sid":"OSMOwnerAccess","Effect":"Allow","Principal":{"AWS":["AK1"]},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}]}`
	judgesOwner := &storagev1alpha1.BucketPolicyForm{ResourcePrefix: "arn:aws:s3:::", OwnerPrincipal: map[string]string{"AWS": "AK1"}, OwnerNeedsAllow: true}
	asAWS := &storagev1alpha1.BucketPolicyForm{ResourcePrefix: "arn:aws:s3:::", OwnerPrincipal: map[string]string{"AWS": "arn:aws:iam:::user/u"}}

	tests := []struct {
		name   string
		bucket *storagev1alpha1.Bucket
		form   *storagev1alpha1.BucketPolicyForm
		want   string
	}{
		{"a server that judges the owner by the policy gets the owner's statement", bucket, judgesOwner, withOwner},
		{"a server that keeps the owner in control, as AWS does, gets the spec", bucket, asAWS, spec},
		{"a provider that says nothing is taken to work as AWS", bucket, nil, spec},
		{"no policy denies no one, and needs no statement", &storagev1alpha1.Bucket{Spec: storagev1alpha1.BucketSpec{BucketName: "b"}}, judgesOwner, ""},
	}
	for _, tt := range tests {
		got := effectivePolicy(tt.bucket, tt.form, nil)
		if !samePolicy(got, tt.want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
