package bucketsettings

import (
	"maps"
	"slices"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// ClaimOtherThan returns a tag of tags by which the operator (or its COSI driver) says the
// bucket is someone's that mine does not take as its own, as "key=value"; "" when every such
// tag is mine, or there is none. A bucket with such a tag is never adopted, observed, or made a
// logging target: it holds another tenant's data, or COSI's grants to other namespaces.
func ClaimOtherThan(tags map[string]string, mine func(key, value string) bool) string {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if strings.HasPrefix(k, storagev1alpha1.OperatorTagPrefix) && !mine(k, tags[k]) {
			return k + "=" + tags[k]
		}
	}
	return ""
}
