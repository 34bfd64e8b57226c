package v1alpha1

import (
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"unicode"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// validateBucketFeatures checks versioning, lifecycle, CORS, object lock and tags. With old set
// (an update) it refuses any change to objectLock and checks only what changed.
func validateBucketFeatures(spec, old *storagev1alpha1.BucketSpec) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	if old == nil || !apiequality.Semantic.DeepEqual(spec.Tags, old.Tags) {
		errs = append(errs, validateTags(specPath.Child("tags"), spec.Tags)...)
	}

	lockPath := specPath.Child("objectLock")
	if old != nil && !apiequality.Semantic.DeepEqual(spec.ObjectLock, old.ObjectLock) {
		errs = append(errs, field.Forbidden(lockPath,
			"cannot be set, changed or removed after creation: S3 sets object lock only when the bucket is created"))
	}
	if spec.ObjectLock != nil && spec.Versioning == storagev1alpha1.VersioningSuspended &&
		(old == nil || spec.Versioning != old.Versioning) {
		errs = append(errs, field.Invalid(specPath.Child("versioning"), spec.Versioning,
			"a bucket with objectLock is always versioned: use Enabled, or leave versioning out"))
	}
	if spec.ObjectLock != nil && old == nil {
		if d := spec.ObjectLock.DefaultRetention; d != nil {
			p := lockPath.Child("defaultRetention")
			if d.Mode != storagev1alpha1.RetentionGovernance && d.Mode != storagev1alpha1.RetentionCompliance {
				errs = append(errs, field.NotSupported(p.Child("mode"), d.Mode,
					[]storagev1alpha1.RetentionMode{storagev1alpha1.RetentionGovernance, storagev1alpha1.RetentionCompliance}))
			}
			if d.Days < 1 {
				errs = append(errs, field.Invalid(p.Child("days"), d.Days, "must be at least 1"))
			}
		}
	}
	if spec.Lifecycle != nil && (old == nil || !apiequality.Semantic.DeepEqual(spec.Lifecycle, old.Lifecycle)) {
		errs = append(errs, validateLifecycle(specPath.Child("lifecycle", "rules"), spec.Lifecycle.Rules)...)
	}
	if l := spec.Logging; l != nil && (old == nil || old.Logging == nil || l.TargetPrefix != old.Logging.TargetPrefix) {
		errs = append(errs, printable(specPath.Child("logging", "targetPrefix"), l.TargetPrefix)...)
	}
	if spec.CORS != nil && (old == nil || !apiequality.Semantic.DeepEqual(spec.CORS, old.CORS)) {
		errs = append(errs, validateCORS(specPath.Child("cors", "rules"), spec.CORS.Rules)...)
	}
	return errs
}

// printable refuses a value with a control character (a newline, a tab): a key prefix or suffix
// goes into XML documents, bucket policies and Secret formats, where one could end a line and
// start another.
func printable(path *field.Path, value string) field.ErrorList {
	if strings.IndexFunc(value, unicode.IsControl) < 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, value, "may not contain control characters (a newline, a tab, ...)")}
}

// validateLifecycle checks what S3 would refuse in lifecycle rules: repeated ids, days below
// one, a date that is not midnight UTC, both days and a date, a rule without action, and an
// abort of multipart uploads in a rule filtered by tags.
func validateLifecycle(path *field.Path, rules []storagev1alpha1.LifecycleRule) field.ErrorList {
	var errs field.ErrorList
	if len(rules) == 0 {
		errs = append(errs, field.Required(path, "give at least one rule, or remove lifecycle to delete the bucket's rules"))
	}
	seen := map[string]bool{}
	for i, r := range rules {
		p := path.Index(i)
		switch {
		case strings.TrimSpace(r.ID) == "":
			errs = append(errs, field.Required(p.Child("id"), "name the rule"))
		case seen[r.ID]:
			errs = append(errs, field.Duplicate(p.Child("id"), r.ID))
		case strings.HasPrefix(r.ID, storagev1alpha1.GeneratedLifecycleRulePrefix):
			errs = append(errs, field.Invalid(p.Child("id"), r.ID, fmt.Sprintf(
				"ids that start with %q are the operator's own (an Application's backup retention); choose another id",
				storagev1alpha1.GeneratedLifecycleRulePrefix)))
		}
		seen[r.ID] = true
		errs = append(errs, printable(p.Child("prefix"), r.Prefix)...)
		tagKeys := map[string]bool{}
		for j, t := range r.Tags {
			if tagKeys[t.Key] {
				errs = append(errs, field.Duplicate(p.Child("tags").Index(j).Child("key"), t.Key))
			}
			tagKeys[t.Key] = true
		}
		if e := r.Expiration; e != nil {
			ep := p.Child("expiration")
			switch {
			case e.Days != nil && e.Date != "":
				errs = append(errs, field.Invalid(ep, fmt.Sprintf("days: %d, date: %s", *e.Days, e.Date), "set exactly one of days and date"))
			case e.Days == nil && e.Date == "":
				errs = append(errs, field.Required(ep, "set days or date"))
			}
			errs = append(errs, positiveDays(ep.Child("days"), e.Days)...)
			if _, ok := objectstore.ExpirationDate(e.Date); e.Date != "" && !ok {
				errs = append(errs, field.Invalid(ep.Child("date"), e.Date,
					"must be a date (2027-01-01) or midnight UTC (2027-01-01T00:00:00Z), as S3 requires"))
			}
		}
		errs = append(errs, positiveDays(p.Child("noncurrentVersionExpirationDays"), r.NoncurrentVersionExpirationDays)...)
		errs = append(errs, positiveDays(p.Child("abortIncompleteMultipartUploadDays"), r.AbortIncompleteMultipartUploadDays)...)
		if r.Expiration == nil && r.NoncurrentVersionExpirationDays == nil && r.AbortIncompleteMultipartUploadDays == nil {
			errs = append(errs, field.Required(p, "a rule needs at least one action: expiration, noncurrentVersionExpirationDays or abortIncompleteMultipartUploadDays"))
		}
		if r.AbortIncompleteMultipartUploadDays != nil && len(r.Tags) > 0 {
			errs = append(errs, field.Invalid(p.Child("abortIncompleteMultipartUploadDays"), *r.AbortIncompleteMultipartUploadDays,
				"S3 does not allow it in a rule filtered by tags (uploads have no tags): put it in a rule of its own"))
		}
	}
	return errs
}

func positiveDays(path *field.Path, days *int32) field.ErrorList {
	if days != nil && *days < 1 {
		return field.ErrorList{field.Invalid(path, *days, "must be at least 1")}
	}
	return nil
}

var corsMethods = []storagev1alpha1.CORSMethod{"GET", "PUT", "POST", "DELETE", "HEAD"}

// validateCORS checks each rule's methods and origins: "*", or scheme://host[:port] with at
// most one "*", as S3 matches them.
func validateCORS(path *field.Path, rules []storagev1alpha1.CORSRule) field.ErrorList {
	var errs field.ErrorList
	if len(rules) == 0 {
		errs = append(errs, field.Required(path, "give at least one rule, or remove cors to delete the bucket's rules"))
	}
	for i, r := range rules {
		p := path.Index(i)
		if len(r.AllowedOrigins) == 0 {
			errs = append(errs, field.Required(p.Child("allowedOrigins"), "name at least one origin, or \"*\""))
		}
		for j, o := range r.AllowedOrigins {
			if msg := originProblem(o); msg != "" {
				errs = append(errs, field.Invalid(p.Child("allowedOrigins").Index(j), o, msg))
			}
		}
		if len(r.AllowedMethods) == 0 {
			errs = append(errs, field.Required(p.Child("allowedMethods"), "name at least one method"))
		}
		seen := map[storagev1alpha1.CORSMethod]bool{}
		for j, m := range r.AllowedMethods {
			mp := p.Child("allowedMethods").Index(j)
			switch {
			case !slices.Contains(corsMethods, m):
				errs = append(errs, field.NotSupported(mp, m, corsMethods))
			case seen[m]:
				errs = append(errs, field.Duplicate(mp, m))
			}
			seen[m] = true
		}
		for j, h := range r.AllowedHeaders {
			if strings.Count(h, "*") > 1 || strings.TrimSpace(h) == "" {
				errs = append(errs, field.Invalid(p.Child("allowedHeaders").Index(j), h, "must be a header name, with at most one \"*\""))
			}
		}
		for j, h := range r.ExposeHeaders {
			if strings.Contains(h, "*") || strings.TrimSpace(h) == "" {
				errs = append(errs, field.Invalid(p.Child("exposeHeaders").Index(j), h, "must be a header name, without \"*\""))
			}
		}
		if r.MaxAgeSeconds != nil && *r.MaxAgeSeconds < 0 {
			errs = append(errs, field.Invalid(p.Child("maxAgeSeconds"), *r.MaxAgeSeconds, "must not be negative"))
		}
	}
	return errs
}

// originProblem says what is wrong with a CORS origin, or "".
func originProblem(o string) string {
	const want = `must be "*" or an origin such as https://app.example.com, with at most one "*" (https://*.example.com)`
	if o == "*" {
		return ""
	}
	if strings.HasPrefix(o, "*") && strings.Count(o, "*") == 1 && !strings.ContainsAny(o, " \t/") {
		return "" // *.example.com: S3 matches it against the whole origin, scheme included
	}
	if strings.Count(o, "*") > 1 || strings.ContainsAny(o, " \t") {
		return want
	}
	u, err := neturl.Parse(strings.Replace(o, "*", "wildcard", 1))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return want
	}
	return ""
}
