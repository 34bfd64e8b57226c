package bucketsettings

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Lifecycle is the bucket's lifecycle rules: the spec's, then those the Bucket's users ask for
// (Input.LifecycleRules, ids under storagev1alpha1.GeneratedLifecycleRulePrefix). Read while
// there are any; the rules are deleted when the last goes, and rules made outside the operator
// on a Bucket that never had any are left alone.
type Lifecycle struct{}

func (Lifecycle) Info() Info {
	return Info{Field: "lifecycle", Title: "lifecycle rules", Event: "Lifecycle", Unsupported: storagev1alpha1.ReasonLifecycleUnsupported}
}

func (Lifecycle) Wanted(in *Input) bool { return len(wantedRules(in)) > 0 }

func (Lifecycle) Observe(ctx context.Context, in *Input) ([]objectstore.LifecycleRule, error) {
	return in.Store.Lifecycle(ctx, in.Name())
}

func (Lifecycle) Desired(in *Input, _ []objectstore.LifecycleRule) []objectstore.LifecycleRule {
	return wantedRules(in)
}

func wantedRules(in *Input) []objectstore.LifecycleRule {
	var rules []storagev1alpha1.LifecycleRule
	if l := in.Bucket.Spec.Lifecycle; l != nil {
		rules = append(rules, l.Rules...)
	}
	return SpecLifecycle(append(rules, in.LifecycleRules...))
}

func (Lifecycle) Equal(a, b []objectstore.LifecycleRule) bool {
	return objectstore.LifecyclesEqual(a, b)
}

func (Lifecycle) Write(ctx context.Context, in *Input, rules []objectstore.LifecycleRule) error {
	return in.Store.PutLifecycle(ctx, in.Name(), rules)
}

func (Lifecycle) Describe(in *Input, rules []objectstore.LifecycleRule) string {
	return fmt.Sprintf("Set the lifecycle rules of bucket %s to its spec (%s)", in.Name(), plural(len(rules), "rule"))
}

func (Lifecycle) Remove(ctx context.Context, in *Input) error {
	return in.Store.DeleteLifecycle(ctx, in.Name())
}

func (Lifecycle) Removed(in *Input) string {
	return fmt.Sprintf("Deleted the lifecycle rules of bucket %s, which its spec no longer has", in.Name())
}

// StillApplied: the generated rules change without the Bucket's generation; what was applied
// counts only while status shows them as they are now.
func (Lifecycle) StillApplied(recorded, desired []objectstore.LifecycleRule) bool {
	return objectstore.LifecyclesEqual(generatedOnly(recorded), generatedOnly(desired))
}

func generatedOnly(rules []objectstore.LifecycleRule) []objectstore.LifecycleRule {
	var out []objectstore.LifecycleRule
	for _, r := range rules {
		if strings.HasPrefix(r.ID, storagev1alpha1.GeneratedLifecycleRulePrefix) {
			out = append(out, r)
		}
	}
	return out
}

func (Lifecycle) Recorded(in *Input) ([]objectstore.LifecycleRule, bool) {
	st := in.Bucket.Status.Lifecycle
	if st == nil {
		return nil, false
	}
	return SpecLifecycle(st.Rules), true
}

func (Lifecycle) Record(_ *Input, st *storagev1alpha1.BucketStatus, rules []objectstore.LifecycleRule, _ bool) {
	st.Lifecycle = StatusLifecycle(rules)
}

// SpecLifecycle is the normal form of lifecycle rules as a spec (or status) writes them, each
// enabled; nil for none.
func SpecLifecycle(in []storagev1alpha1.LifecycleRule) []objectstore.LifecycleRule {
	if len(in) == 0 {
		return nil
	}
	rules := make([]objectstore.LifecycleRule, 0, len(in))
	for _, r := range in {
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

// StatusLifecycle is the status form of observed lifecycle rules; nil for none.
func StatusLifecycle(rules []objectstore.LifecycleRule) *storagev1alpha1.BucketLifecycle {
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
