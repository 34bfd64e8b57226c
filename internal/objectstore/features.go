package objectstore

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// LifecycleRule is one lifecycle rule in a normal form: what the operator writes and what a
// server answers compare equal when they mean the same, whatever filter shape the server echoes
// (a legacy rule prefix, a filter prefix, a single tag, or an And of them).
type LifecycleRule struct {
	ID     string
	Prefix string
	// Tags is nil when the rule filters on none.
	Tags map[string]string
	// Enabled is false for a rule the server keeps but does not apply.
	Enabled bool
	// ExpirationDays and ExpirationDate ("2006-01-02", midnight UTC): at most one is set.
	ExpirationDays int32
	ExpirationDate string
	// NoncurrentDays expires versions that many days after they became noncurrent.
	NoncurrentDays int32
	// AbortMultipartDays aborts uploads that many days after they started.
	AbortMultipartDays int32
}

// NormalizeLifecycle sorts rules by id and gives empty tag sets one form, so two configurations
// that mean the same compare equal. nil and empty are both "no rules".
func NormalizeLifecycle(rules []LifecycleRule) []LifecycleRule {
	if len(rules) == 0 {
		return nil
	}
	out := slices.Clone(rules)
	for i := range out {
		if len(out[i].Tags) == 0 {
			out[i].Tags = nil
		}
	}
	slices.SortFunc(out, func(a, b LifecycleRule) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// LifecyclesEqual reports whether two rule sets mean the same.
func LifecyclesEqual(a, b []LifecycleRule) bool {
	return slices.EqualFunc(NormalizeLifecycle(a), NormalizeLifecycle(b), func(x, y LifecycleRule) bool {
		return x.ID == y.ID && x.Prefix == y.Prefix && maps.Equal(x.Tags, y.Tags) && x.Enabled == y.Enabled &&
			x.ExpirationDays == y.ExpirationDays && x.ExpirationDate == y.ExpirationDate &&
			x.NoncurrentDays == y.NoncurrentDays && x.AbortMultipartDays == y.AbortMultipartDays
	})
}

// ExpirationDate turns a spec date (2027-01-01, or 2027-01-01T00:00:00Z) into the normal form
// 2027-01-01; ok is false when it is neither.
func ExpirationDate(s string) (date string, ok bool) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Format(time.DateOnly), true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.UTC().Truncate(24*time.Hour) != t.UTC() {
		return "", false
	}
	return t.UTC().Format(time.DateOnly), true
}

func toSDKLifecycleRule(r LifecycleRule) types.LifecycleRule {
	out := types.LifecycleRule{ID: aws.String(r.ID), Status: types.ExpirationStatusDisabled, Filter: &types.LifecycleRuleFilter{}}
	if r.Enabled {
		out.Status = types.ExpirationStatusEnabled
	}
	// S3 takes a lone prefix or tag as it is, and anything more as an And.
	switch {
	case len(r.Tags) == 0:
		out.Filter.Prefix = aws.String(r.Prefix)
	case len(r.Tags) == 1 && r.Prefix == "":
		for k, v := range r.Tags {
			out.Filter.Tag = &types.Tag{Key: aws.String(k), Value: aws.String(v)}
		}
	default:
		and := &types.LifecycleRuleAndOperator{}
		if r.Prefix != "" {
			and.Prefix = aws.String(r.Prefix)
		}
		for _, k := range slices.Sorted(maps.Keys(r.Tags)) {
			and.Tags = append(and.Tags, types.Tag{Key: aws.String(k), Value: aws.String(r.Tags[k])})
		}
		out.Filter.And = and
	}
	if r.ExpirationDays > 0 {
		out.Expiration = &types.LifecycleExpiration{Days: aws.Int32(r.ExpirationDays)}
	}
	if r.ExpirationDate != "" {
		if t, err := time.Parse(time.DateOnly, r.ExpirationDate); err == nil {
			out.Expiration = &types.LifecycleExpiration{Date: aws.Time(t)}
		}
	}
	if r.NoncurrentDays > 0 {
		out.NoncurrentVersionExpiration = &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(r.NoncurrentDays)}
	}
	if r.AbortMultipartDays > 0 {
		out.AbortIncompleteMultipartUpload = &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(r.AbortMultipartDays)}
	}
	return out
}

func fromSDKLifecycleRule(r types.LifecycleRule) LifecycleRule {
	out := LifecycleRule{ID: aws.ToString(r.ID), Enabled: r.Status == types.ExpirationStatusEnabled,
		Prefix: aws.ToString(r.Prefix)} //nolint:staticcheck // servers still answer with the legacy rule prefix
	addTag := func(t types.Tag) {
		if out.Tags == nil {
			out.Tags = map[string]string{}
		}
		out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	if f := r.Filter; f != nil {
		if f.Prefix != nil {
			out.Prefix = aws.ToString(f.Prefix)
		}
		if f.Tag != nil {
			addTag(*f.Tag)
		}
		if f.And != nil {
			if f.And.Prefix != nil {
				out.Prefix = aws.ToString(f.And.Prefix)
			}
			for _, t := range f.And.Tags {
				addTag(t)
			}
		}
	}
	if e := r.Expiration; e != nil {
		out.ExpirationDays = aws.ToInt32(e.Days)
		if e.Date != nil {
			out.ExpirationDate = e.Date.UTC().Format(time.DateOnly)
		}
	}
	if n := r.NoncurrentVersionExpiration; n != nil {
		out.NoncurrentDays = aws.ToInt32(n.NoncurrentDays)
	}
	if a := r.AbortIncompleteMultipartUpload; a != nil {
		out.AbortMultipartDays = aws.ToInt32(a.DaysAfterInitiation)
	}
	return out
}

// CORSRule is one CORS rule in a normal form. Rules keep their order (a browser's request is
// answered by the first that matches); within a rule, origins, methods and headers are sets,
// and header names are compared without regard to case.
type CORSRule struct {
	AllowedOrigins []string
	AllowedMethods []string
	AllowedHeaders []string
	ExposeHeaders  []string
	MaxAgeSeconds  int32
}

// NormalizeCORS sorts the sets of each rule and lowercases header names; nil and empty are both
// "no rules".
func NormalizeCORS(rules []CORSRule) []CORSRule {
	if len(rules) == 0 {
		return nil
	}
	set := func(s []string, lower bool) []string {
		out := make([]string, 0, len(s))
		for _, v := range s {
			if lower {
				v = strings.ToLower(v)
			}
			out = append(out, v)
		}
		slices.Sort(out)
		out = slices.Compact(out)
		if len(out) == 0 {
			return nil
		}
		return out
	}
	out := make([]CORSRule, len(rules))
	for i, r := range rules {
		out[i] = CORSRule{
			AllowedOrigins: set(r.AllowedOrigins, false),
			AllowedMethods: set(r.AllowedMethods, false),
			AllowedHeaders: set(r.AllowedHeaders, true),
			ExposeHeaders:  set(r.ExposeHeaders, true),
			MaxAgeSeconds:  r.MaxAgeSeconds,
		}
	}
	return out
}

// CORSEqual reports whether two CORS configurations mean the same.
func CORSEqual(a, b []CORSRule) bool {
	return slices.EqualFunc(NormalizeCORS(a), NormalizeCORS(b), func(x, y CORSRule) bool {
		return slices.Equal(x.AllowedOrigins, y.AllowedOrigins) && slices.Equal(x.AllowedMethods, y.AllowedMethods) &&
			slices.Equal(x.AllowedHeaders, y.AllowedHeaders) && slices.Equal(x.ExposeHeaders, y.ExposeHeaders) &&
			x.MaxAgeSeconds == y.MaxAgeSeconds
	})
}

func toSDKCORSRule(r CORSRule) types.CORSRule {
	out := types.CORSRule{AllowedOrigins: r.AllowedOrigins, AllowedMethods: r.AllowedMethods,
		AllowedHeaders: r.AllowedHeaders, ExposeHeaders: r.ExposeHeaders}
	if r.MaxAgeSeconds > 0 {
		out.MaxAgeSeconds = aws.Int32(r.MaxAgeSeconds)
	}
	return out
}

func fromSDKCORSRule(r types.CORSRule) CORSRule {
	return CORSRule{AllowedOrigins: r.AllowedOrigins, AllowedMethods: r.AllowedMethods,
		AllowedHeaders: r.AllowedHeaders, ExposeHeaders: r.ExposeHeaders, MaxAgeSeconds: aws.ToInt32(r.MaxAgeSeconds)}
}

// ObjectLock is a bucket's object lock: whether it is on, and the default retention (Mode ""
// for none). Default retentions given in years are counted in days of 365.
type ObjectLock struct {
	Enabled bool
	Mode    string
	Days    int32
}

func fromSDKObjectLock(c *types.ObjectLockConfiguration) ObjectLock {
	if c == nil {
		return ObjectLock{}
	}
	out := ObjectLock{Enabled: c.ObjectLockEnabled == types.ObjectLockEnabledEnabled}
	if c.Rule != nil && c.Rule.DefaultRetention != nil {
		d := c.Rule.DefaultRetention
		out.Mode = string(d.Mode)
		out.Days = aws.ToInt32(d.Days) + 365*aws.ToInt32(d.Years)
	}
	return out
}

func toSDKObjectLock(l ObjectLock) *types.ObjectLockConfiguration {
	out := &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}
	if l.Mode != "" {
		out.Rule = &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionMode(l.Mode), Days: aws.Int32(l.Days)}}
	}
	return out
}
