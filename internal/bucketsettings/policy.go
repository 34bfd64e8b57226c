package bucketsettings

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
)

// Policy is the bucket policy: the spec's, with the statements of the Bucket's BucketAccesses
// and, where the server needs it, the owner's (bucketpolicy.Compose). "" is no policy. It is
// read on every pass, and compared in canonical form.
type Policy struct{}

func (Policy) Info() Info {
	return Info{Field: "policy", Title: "bucket policies", Event: "Policy", Unsupported: storagev1alpha1.ReasonPolicyUnsupported}
}

func (Policy) Wanted(*Input) bool { return true }

func (Policy) Observe(ctx context.Context, in *Input) (string, error) {
	return in.Store.Policy(ctx, in.Name())
}

func (Policy) Desired(in *Input, _ string) string {
	spec := ""
	if p := in.Bucket.Spec.Policy; p != nil && len(p.Raw) > 0 {
		spec = string(p.Raw)
	}
	var form bucketpolicy.Form
	if f := in.PolicyForm; f != nil {
		form = bucketpolicy.Form{ResourcePrefix: f.ResourcePrefix, Owner: f.OwnerPrincipal, OwnerNeedsAllow: f.OwnerNeedsAllow}
	}
	return bucketpolicy.Compose(spec, in.Name(), in.Grants, form)
}

// Equal compares by meaning; "" is no policy.
func (Policy) Equal(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	return bucketpolicy.PoliciesEqual(a, b)
}

func (Policy) Write(ctx context.Context, in *Input, policy string) error {
	if policy == "" {
		return in.Store.DeletePolicy(ctx, in.Name())
	}
	return in.Store.PutPolicy(ctx, in.Name(), policy)
}

func (Policy) Describe(in *Input, policy string) string {
	if policy == "" {
		return fmt.Sprintf("Deleted the policy of bucket %s, which its spec no longer has", in.Name())
	}
	return fmt.Sprintf("Set the policy of bucket %s to its spec", in.Name())
}

// StillApplied: the statements generated for BucketAccesses change without the spec; the policy
// last observed counts as applied only while it carries exactly the ones wanted now.
func (Policy) StillApplied(recorded, desired string) bool {
	return bucketpolicy.GeneratedStatements(recorded) == bucketpolicy.GeneratedStatements(desired)
}

func (Policy) Recorded(in *Input) (string, bool) {
	p := in.Bucket.Status.Policy
	if p == nil {
		return "", false
	}
	return string(p.Raw), true
}

func (Policy) Record(_ *Input, st *storagev1alpha1.BucketStatus, policy string, _ bool) {
	st.Policy = canonicalRaw(policy)
}

// canonicalRaw is the status form of an observed policy: canonical JSON, nil for none. What the
// Store read has the shape of a policy (bucketpolicy.CheckShape), so it always has one; what does
// not is never shown.
func canonicalRaw(policy string) *runtime.RawExtension {
	if policy == "" {
		return nil
	}
	canonical, err := bucketpolicy.CanonicalPolicy([]byte(policy))
	if err != nil {
		return nil
	}
	return &runtime.RawExtension{Raw: []byte(canonical)}
}
