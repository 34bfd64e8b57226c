package storage

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

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

// toObservedACL is the status form of an observed ACL.
func toObservedACL(acl objectstore.ACL) *storagev1alpha1.ObservedACL {
	out := &storagev1alpha1.ObservedACL{Owner: acl.Owner}
	for _, g := range objectstore.Normalize(acl).Grants {
		out.Grants = append(out.Grants, storagev1alpha1.ObservedGrant{
			Grantee:    storagev1alpha1.Grantee{Type: storagev1alpha1.GranteeType(g.Grantee.Type), Value: g.Grantee.Value},
			Permission: string(g.Permission),
		})
	}
	return out
}

// observedACLEqual reports whether the server still shows the ACL recorded in status.
func observedACLEqual(recorded *storagev1alpha1.ObservedACL, observed objectstore.ACL) bool {
	return recorded != nil && reflect.DeepEqual(recorded, toObservedACL(observed))
}

// samePolicy reports whether two policy documents mean the same; "" is no policy.
func samePolicy(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	return objectstore.PoliciesEqual(a, b)
}

// canonicalRaw is the status form of an observed policy: canonical JSON, nil for none.
func canonicalRaw(policy string) *runtime.RawExtension {
	if policy == "" {
		return nil
	}
	canonical, err := objectstore.CanonicalPolicy([]byte(policy))
	if err != nil {
		// Whatever the server returned, status shows it as it came, if it is JSON at all.
		return &runtime.RawExtension{Raw: []byte(policy)}
	}
	return &runtime.RawExtension{Raw: []byte(canonical)}
}

func rawString(r *runtime.RawExtension) string {
	if r == nil {
		return ""
	}
	return string(r.Raw)
}

// effectivePolicy is the policy the bucket must have: the spec's, and, on a server that judges
// the owner by the policy alone (form.OwnerNeedsAllow), a statement marked
// objectstore.OwnerStatementID that keeps the owner in control as AWS and Ceph do. "" is none.
// A spec policy that is no JSON object goes to the server as it is, which refuses it with its
// own message.
func effectivePolicy(b *storagev1alpha1.Bucket, form *storagev1alpha1.BucketPolicyForm) string {
	if b.Spec.Policy == nil || len(b.Spec.Policy.Raw) == 0 {
		return ""
	}
	spec := string(b.Spec.Policy.Raw)
	if form == nil || !form.OwnerNeedsAllow {
		return spec
	}
	withOwner, err := objectstore.WithOwnerStatement(spec, form.OwnerPrincipal, form.ResourcePrefix, b.Spec.BucketName)
	if err != nil {
		return spec
	}
	return withOwner
}
