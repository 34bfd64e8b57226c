package bucketsettings

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

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

func TestTheACLStatusRecordedReadsBackAsTheSameObservation(t *testing.T) {
	observed := objectstore.ACL{Owner: "o", Grants: []objectstore.Grant{
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeGroup, Value: "all-users"}, Permission: objectstore.PermissionRead},
		{Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: "o"}, Permission: objectstore.PermissionFullControl},
	}}
	in := &Input{Bucket: &storagev1alpha1.Bucket{}}
	if _, ok := (ACL{}).Recorded(in); ok {
		t.Error("a status without an ACL recorded one")
	}
	ACL{}.Record(in, &in.Bucket.Status, observed, true)
	recorded, ok := ACL{}.Recorded(in)
	if !ok || !(ACL{}).Equal(recorded, observed) {
		t.Errorf("the ACL status recorded reads back as %+v, want the same observation %+v", recorded, observed)
	}
	changed := observed
	changed.Grants = observed.Grants[1:]
	if (ACL{}).Equal(recorded, changed) {
		t.Error("a removed grant must count as a change")
	}
}

func TestPoliciesCompareByMeaningAndEmptyIsNone(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"", `{"Statement":[]}`, false},
		{`{"Statement":[],"Version":"2012-10-17"}`, `{ "Version": "2012-10-17", "Statement": [] }`, true},
	}
	for _, tt := range tests {
		if got := (Policy{}).Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Policy.Equal(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestANeverVersionedBucketIsSuspended(t *testing.T) {
	tests := []struct {
		desired, observed string
		want              bool
	}{
		{"Enabled", "Enabled", true},
		{"Enabled", "", false},
		{"Enabled", "Suspended", false},
		{"Suspended", "Suspended", true},
		{"Suspended", "", true}, // never versioned: nothing new is versioned, as Suspended asks
		{"Suspended", "Enabled", false},
	}
	for _, tt := range tests {
		if got := (Versioning{}).Equal(tt.desired, tt.observed); got != tt.want {
			t.Errorf("Versioning.Equal(%q, %q) = %v, want %v", tt.desired, tt.observed, got, tt.want)
		}
	}
}

func TestSpecLifecycleAndItsStatusFormMeanTheSame(t *testing.T) {
	spec := &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
		{ID: "z-backups", Prefix: "backups/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)},
			NoncurrentVersionExpirationDays: ptr.To[int32](7)},
		{ID: "a-end", Tags: []storagev1alpha1.Tag{{Key: "b", Value: "2"}, {Key: "a", Value: "1"}},
			Expiration: &storagev1alpha1.LifecycleExpiration{Date: "2027-01-01T00:00:00Z"}},
		{ID: "m-uploads", AbortIncompleteMultipartUploadDays: ptr.To[int32](1)},
	}}
	rules := SpecLifecycle(spec.Rules)
	if !slices.IsSortedFunc(rules, func(a, b objectstore.LifecycleRule) int { return strings.Compare(a.ID, b.ID) }) {
		t.Errorf("rules not in normal form: %+v", rules)
	}
	if rules[0].ExpirationDate != "2027-01-01" || !rules[0].Enabled {
		t.Errorf("the date rule became %+v", rules[0])
	}
	status := StatusLifecycle(rules)
	if !objectstore.LifecyclesEqual(SpecLifecycle(status.Rules), rules) {
		t.Errorf("status form %+v reads back as %+v, want %+v", status, SpecLifecycle(status.Rules), rules)
	}
	if diff := cmp.Diff([]storagev1alpha1.Tag{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}, status.Rules[0].Tags); diff != "" {
		t.Errorf("status tags (-want +got):\n%s", diff)
	}
}
