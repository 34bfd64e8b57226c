package bucketsettings

import (
	"context"
	"fmt"

	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// CORS is the bucket's CORS rules, read while the spec has some; deleted when the spec drops
// them, and left alone on a Bucket that never had any.
type CORS struct{}

func (CORS) Info() Info {
	return Info{Field: "cors", Title: "CORS rules", Event: "CORS", Unsupported: storagev1alpha1.ReasonCORSUnsupported}
}

func (CORS) Wanted(in *Input) bool { return in.Bucket.Spec.CORS != nil }

func (CORS) Observe(ctx context.Context, in *Input) ([]objectstore.CORSRule, error) {
	return in.Store.CORS(ctx, in.Name())
}

func (CORS) Desired(in *Input, _ []objectstore.CORSRule) []objectstore.CORSRule {
	return SpecCORS(in.Bucket.Spec.CORS)
}

func (CORS) Equal(a, b []objectstore.CORSRule) bool { return objectstore.CORSEqual(a, b) }

func (CORS) Write(ctx context.Context, in *Input, rules []objectstore.CORSRule) error {
	return in.Store.PutCORS(ctx, in.Name(), rules)
}

func (CORS) Describe(in *Input, rules []objectstore.CORSRule) string {
	return fmt.Sprintf("Set the CORS rules of bucket %s to its spec (%s)", in.Name(), plural(len(rules), "rule"))
}

func (CORS) Remove(ctx context.Context, in *Input) error { return in.Store.DeleteCORS(ctx, in.Name()) }

func (CORS) Removed(in *Input) string {
	return fmt.Sprintf("Deleted the CORS rules of bucket %s, which its spec no longer has", in.Name())
}

func (CORS) Recorded(in *Input) ([]objectstore.CORSRule, bool) {
	return SpecCORS(in.Bucket.Status.CORS), in.Bucket.Status.CORS != nil
}

func (CORS) Record(_ *Input, st *storagev1alpha1.BucketStatus, rules []objectstore.CORSRule, _ bool) {
	st.CORS = StatusCORS(rules)
}

// SpecCORS is CORS rules as a spec (or status) writes them, in the Store's form; nil for none.
func SpecCORS(c *storagev1alpha1.BucketCORS) []objectstore.CORSRule {
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

// StatusCORS is the status form of observed CORS rules, in their order; nil for none.
func StatusCORS(rules []objectstore.CORSRule) *storagev1alpha1.BucketCORS {
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
