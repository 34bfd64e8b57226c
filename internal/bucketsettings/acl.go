package bucketsettings

import (
	"context"
	"fmt"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// ACL is the bucket's ACL: the canned ACL expanded into grants, plus the spec's grant lists,
// the owner always keeping FULL_CONTROL. It is read on every pass.
type ACL struct{}

func (ACL) Info() Info {
	return Info{Field: "cannedAcl", Title: "bucket ACLs", Event: "ACL", Unsupported: storagev1alpha1.ReasonACLUnsupported}
}

func (ACL) Wanted(*Input) bool { return true }

func (ACL) Observe(ctx context.Context, in *Input) (objectstore.ACL, error) {
	return in.Store.ACL(ctx, in.Name())
}

// Desired keeps the owner the server shows: the spec cannot name it.
func (ACL) Desired(in *Input, observed objectstore.ACL) objectstore.ACL {
	return objectstore.DesiredACL(observed.Owner, string(in.Bucket.Spec.CannedACL), specGrants(&in.Bucket.Spec))
}

func (ACL) Equal(a, b objectstore.ACL) bool { return a.Equal(b) }

func (ACL) Write(ctx context.Context, in *Input, acl objectstore.ACL) error {
	return in.Store.PutACL(ctx, in.Name(), acl)
}

func (ACL) Describe(in *Input, acl objectstore.ACL) string {
	return fmt.Sprintf("Set the ACL of bucket %s to its spec (%d grants)", in.Name(), len(acl.Grants))
}

func (ACL) Recorded(in *Input) (objectstore.ACL, bool) {
	st := in.Bucket.Status.ACL
	if st == nil {
		return objectstore.ACL{}, false
	}
	acl := objectstore.ACL{Owner: st.Owner}
	for _, g := range st.Grants {
		acl.Grants = append(acl.Grants, objectstore.Grant{
			Grantee:    objectstore.Grantee{Type: objectstore.GranteeType(g.Grantee.Type), Value: g.Grantee.Value},
			Permission: objectstore.Permission(g.Permission),
		})
	}
	return acl, true
}

func (ACL) Record(_ *Input, st *storagev1alpha1.BucketStatus, acl objectstore.ACL, ok bool) {
	st.ACL = nil
	if ok {
		st.ACL = ObservedACL(acl)
	}
}

// ObservedACL is the status form of an observed ACL.
func ObservedACL(acl objectstore.ACL) *storagev1alpha1.ObservedACL {
	out := &storagev1alpha1.ObservedACL{Owner: acl.Owner}
	for _, g := range objectstore.Normalize(acl).Grants {
		out.Grants = append(out.Grants, storagev1alpha1.ObservedGrant{
			Grantee:    storagev1alpha1.Grantee{Type: storagev1alpha1.GranteeType(g.Grantee.Type), Value: g.Grantee.Value},
			Permission: string(g.Permission),
		})
	}
	return out
}

// specGrants turns the spec's grant lists into grants, each list with its permission.
func specGrants(spec *storagev1alpha1.BucketSpec) []objectstore.Grant {
	lists := []struct {
		grantees   []storagev1alpha1.Grantee
		permission objectstore.Permission
	}{
		{spec.FullControl, objectstore.PermissionFullControl},
		{spec.GrantRead, objectstore.PermissionRead},
		{spec.GrantWrite, objectstore.PermissionWrite},
		{spec.GrantReadACP, objectstore.PermissionReadACP},
		{spec.GrantWriteACP, objectstore.PermissionWriteACP},
	}
	var grants []objectstore.Grant
	for _, l := range lists {
		for _, g := range l.grantees {
			grants = append(grants, objectstore.Grant{
				Grantee:    objectstore.Grantee{Type: objectstore.GranteeType(g.Type), Value: g.Value},
				Permission: l.permission,
			})
		}
	}
	return grants
}
