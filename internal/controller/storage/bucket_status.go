package storage

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

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

// effectivePolicy is the policy the bucket must have: the spec's, then the statements generated
// for the BucketAccesses granted (each Sid starting objectstore.AccessStatementPrefix, a pair per
// access mode), and, on a server that judges the owner by the policy alone
// (form.OwnerNeedsAllow), a statement marked objectstore.OwnerStatementID that keeps the owner
// in control as AWS and Ceph do. "" is none. A spec policy that is no JSON object goes to the
// server as it is, which refuses it with its own message.
func effectivePolicy(b *storagev1alpha1.Bucket, form *storagev1alpha1.BucketPolicyForm, grants []objectstore.AccessGrant) string {
	spec := ""
	if b.Spec.Policy != nil && len(b.Spec.Policy.Raw) > 0 {
		spec = string(b.Spec.Policy.Raw)
	}
	prefix := "arn:aws:s3:::"
	if form != nil && form.ResourcePrefix != "" {
		prefix = form.ResourcePrefix
	}
	policy, err := objectstore.WithStatements(spec, objectstore.AccessStatements(grants, prefix, b.Spec.BucketName))
	if err != nil {
		return spec
	}
	if form == nil || !form.OwnerNeedsAllow {
		return policy
	}
	withOwner, err := objectstore.WithOwnerStatement(policy, form.OwnerPrincipal, form.ResourcePrefix, b.Spec.BucketName)
	if err != nil {
		return policy
	}
	return withOwner
}

// specLifecycle is the normal form of the spec's lifecycle rules, each enabled; nil for none.
// effectiveLifecycle is the spec's lifecycle with the generated rules added after its own; nil
// when there are none at all.
func effectiveLifecycle(spec *storagev1alpha1.BucketLifecycle, generated []storagev1alpha1.LifecycleRule) *storagev1alpha1.BucketLifecycle {
	if len(generated) == 0 {
		return spec
	}
	out := &storagev1alpha1.BucketLifecycle{}
	if spec != nil {
		out.Rules = append(out.Rules, spec.Rules...)
	}
	out.Rules = append(out.Rules, generated...)
	return out
}

// generatedRecorded reports whether the rules status shows with the generated prefix are
// exactly the generated ones.
func generatedRecorded(generated []storagev1alpha1.LifecycleRule, status *storagev1alpha1.BucketLifecycle) bool {
	var recorded []storagev1alpha1.LifecycleRule
	if status != nil {
		for _, r := range status.Rules {
			if strings.HasPrefix(r.ID, storagev1alpha1.GeneratedLifecycleRulePrefix) {
				recorded = append(recorded, r)
			}
		}
	}
	if len(recorded) == 0 && len(generated) == 0 {
		return true
	}
	return objectstore.LifecyclesEqual(specLifecycle(&storagev1alpha1.BucketLifecycle{Rules: generated}),
		specLifecycle(&storagev1alpha1.BucketLifecycle{Rules: recorded}))
}

func specLifecycle(l *storagev1alpha1.BucketLifecycle) []objectstore.LifecycleRule {
	if l == nil {
		return nil
	}
	rules := make([]objectstore.LifecycleRule, 0, len(l.Rules))
	for _, r := range l.Rules {
		rule := objectstore.LifecycleRule{ID: r.ID, Prefix: r.Prefix, Enabled: true,
			NoncurrentDays:     ptr.Deref(r.NoncurrentVersionExpirationDays, 0),
			AbortMultipartDays: ptr.Deref(r.AbortIncompleteMultipartUploadDays, 0)}
		for _, t := range r.Tags {
			if rule.Tags == nil {
				rule.Tags = map[string]string{}
			}
			rule.Tags[t.Key] = t.Value
		}
		if e := r.Expiration; e != nil {
			rule.ExpirationDays = ptr.Deref(e.Days, 0)
			// The webhook and the CRD refuse any other form; one that slips through is sent as
			// no date, and the server's answer shows the difference.
			rule.ExpirationDate, _ = objectstore.ExpirationDate(e.Date)
		}
		rules = append(rules, rule)
	}
	return objectstore.NormalizeLifecycle(rules)
}

// toStatusLifecycle is the status form of observed lifecycle rules; nil for none.
func toStatusLifecycle(rules []objectstore.LifecycleRule) *storagev1alpha1.BucketLifecycle {
	rules = objectstore.NormalizeLifecycle(rules)
	if len(rules) == 0 {
		return nil
	}
	out := &storagev1alpha1.BucketLifecycle{}
	for _, r := range rules {
		rule := storagev1alpha1.LifecycleRule{ID: r.ID, Prefix: r.Prefix}
		for _, k := range slices.Sorted(maps.Keys(r.Tags)) {
			rule.Tags = append(rule.Tags, storagev1alpha1.Tag{Key: k, Value: r.Tags[k]})
		}
		if r.ExpirationDays > 0 || r.ExpirationDate != "" {
			rule.Expiration = &storagev1alpha1.LifecycleExpiration{Date: r.ExpirationDate}
			if r.ExpirationDays > 0 {
				rule.Expiration.Days = ptr.To(r.ExpirationDays)
			}
		}
		if r.NoncurrentDays > 0 {
			rule.NoncurrentVersionExpirationDays = ptr.To(r.NoncurrentDays)
		}
		if r.AbortMultipartDays > 0 {
			rule.AbortIncompleteMultipartUploadDays = ptr.To(r.AbortMultipartDays)
		}
		out.Rules = append(out.Rules, rule)
	}
	return out
}

// specCORS is the spec's CORS rules in the Store's form; nil for none.
func specCORS(c *storagev1alpha1.BucketCORS) []objectstore.CORSRule {
	if c == nil {
		return nil
	}
	rules := make([]objectstore.CORSRule, 0, len(c.Rules))
	for _, r := range c.Rules {
		rule := objectstore.CORSRule{AllowedOrigins: r.AllowedOrigins, AllowedHeaders: r.AllowedHeaders,
			ExposeHeaders: r.ExposeHeaders, MaxAgeSeconds: ptr.Deref(r.MaxAgeSeconds, 0)}
		for _, m := range r.AllowedMethods {
			rule.AllowedMethods = append(rule.AllowedMethods, string(m))
		}
		rules = append(rules, rule)
	}
	return rules
}

// toStatusCORS is the status form of observed CORS rules, in their order; nil for none.
func toStatusCORS(rules []objectstore.CORSRule) *storagev1alpha1.BucketCORS {
	rules = objectstore.NormalizeCORS(rules)
	if len(rules) == 0 {
		return nil
	}
	out := &storagev1alpha1.BucketCORS{}
	for _, r := range rules {
		rule := storagev1alpha1.CORSRule{AllowedOrigins: r.AllowedOrigins, AllowedHeaders: r.AllowedHeaders,
			ExposeHeaders: r.ExposeHeaders}
		for _, m := range r.AllowedMethods {
			rule.AllowedMethods = append(rule.AllowedMethods, storagev1alpha1.CORSMethod(m))
		}
		if r.MaxAgeSeconds > 0 {
			rule.MaxAgeSeconds = ptr.To(r.MaxAgeSeconds)
		}
		out.Rules = append(out.Rules, rule)
	}
	return out
}

// specObjectLock is the object lock the spec asks for (Enabled false: none).
func specObjectLock(l *storagev1alpha1.ObjectLock) objectstore.ObjectLock {
	if l == nil {
		return objectstore.ObjectLock{}
	}
	out := objectstore.ObjectLock{Enabled: true}
	if d := l.DefaultRetention; d != nil {
		out.Mode, out.Days = string(d.Mode), d.Days
	}
	return out
}

// toStatusObjectLock is the status form of an observed object lock; nil when it is off.
func toStatusObjectLock(l objectstore.ObjectLock) *storagev1alpha1.ObjectLock {
	if !l.Enabled {
		return nil
	}
	out := &storagev1alpha1.ObjectLock{}
	if l.Mode != "" {
		out.DefaultRetention = &storagev1alpha1.DefaultRetention{Mode: storagev1alpha1.RetentionMode(l.Mode), Days: l.Days}
	}
	return out
}
