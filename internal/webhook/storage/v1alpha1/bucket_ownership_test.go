package v1alpha1

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

const enforcedWhy = "spec.ownershipControls BucketOwnerEnforced turns ACLs off, and S3 refuses every ACL but private (AccessControlListNotSupported)"

func TestACLsUnderBucketOwnerEnforcedAreRefusedAtTheirFields(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*storagev1alpha1.Bucket)
		want   []string
	}{
		{name: "no canned ACL", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
		}},
		{name: "private", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
			b.Spec.CannedACL = storagev1alpha1.CannedACLPrivate
		}},
		{name: "a public canned ACL and two grant lists", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
			b.Spec.CannedACL = storagev1alpha1.CannedACLAuthenticatedRead
			b.Spec.GrantRead = []storagev1alpha1.Grantee{grantee(id, "reader")}
			b.Spec.FullControl = []storagev1alpha1.Grantee{grantee(id, "admin")}
		}, want: []string{
			`spec.cannedAcl: Invalid value: "authenticated-read": ` + enforcedWhy +
				`: use private and grant access with the policy, or choose ObjectWriter or BucketOwnerPreferred`,
			`spec.grantRead: Forbidden: ` + enforcedWhy + `: grant access with the policy instead, or choose ObjectWriter or BucketOwnerPreferred`,
			`spec.fullControl: Forbidden: ` + enforcedWhy + `: grant access with the policy instead, or choose ObjectWriter or BucketOwnerPreferred`,
		}},
		{name: "ACLs on under BucketOwnerPreferred", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerPreferred
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
			b.Spec.GrantWrite = []storagev1alpha1.Grantee{grantee(id, "writer")}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBucket()
			tt.modify(b)
			_, err := bucketValidator(readerWith()).ValidateCreate(context.Background(), b)
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurningACLsOffOverAGrantIsRefusedOnUpdate(t *testing.T) {
	old := validBucket()
	old.Spec.GrantWriteACP = []storagev1alpha1.Grantee{grantee(id, "auditor")}
	b := old.DeepCopy()
	b.Spec.OwnershipControls = storagev1alpha1.ObjectOwnershipBucketOwnerEnforced
	_, err := bucketValidator(readerWith()).ValidateUpdate(context.Background(), old, b)
	want := []string{`spec.grantWriteAcp: Forbidden: ` + enforcedWhy + `: grant access with the policy instead, or choose ObjectWriter or BucketOwnerPreferred`}
	if diff := cmp.Diff(want, webhooktest.Causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}
