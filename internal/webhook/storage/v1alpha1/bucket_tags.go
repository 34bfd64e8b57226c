package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// S3 takes at most 50 tags on a bucket; the operator keeps two of its own (whose bucket it is).
const (
	maxBucketTags   = 50 - 2
	maxTagKeyLength = 128
	maxTagValLength = 256
)

// reservedTagPrefixes are the tag keys a spec may not use: the operator's own, and what S3
// keeps for AWS.
var reservedTagPrefixes = []string{storagev1alpha1.GroupVersion.Group + "/", "aws:"}

// validateTags checks spec.tags: at most maxBucketTags, each key 1 to 128 characters and not
// reserved, each value at most 256 characters. Each problem is reported at spec.tags[key].
func validateTags(path *field.Path, tags map[string]string) field.ErrorList {
	var errs field.ErrorList
	if len(tags) > maxBucketTags {
		errs = append(errs, field.TooMany(path, len(tags), maxBucketTags))
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		p := path.Key(k)
		switch {
		case k == "" || len(k) > maxTagKeyLength:
			errs = append(errs, field.Invalid(p, k, fmt.Sprintf("a tag key has 1 to %d characters", maxTagKeyLength)))
		case slices.ContainsFunc(reservedTagPrefixes, func(r string) bool { return strings.HasPrefix(k, r) }):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf(
				"tag keys under %s are the operator's own (they say whose bucket it is), and aws: is reserved by S3", reservedTagPrefixes[0])))
		}
		if len(tags[k]) > maxTagValLength {
			errs = append(errs, field.TooLong(p, tags[k], maxTagValLength))
		}
	}
	return errs
}
