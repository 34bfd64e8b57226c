package v1alpha1

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestTagsAreRefusedWithTheKeyThatIsWrong(t *testing.T) {
	many := map[string]string{}
	for i := range maxBucketTags + 1 {
		many[fmt.Sprintf("k%02d", i)] = "v"
	}
	tests := []struct {
		name string
		tags map[string]string
		want []string // "field: type", in order
	}{
		{"ordinary tags", map[string]string{"team": "data", "cost-center": "4711", "empty": ""}, nil},
		{"the operator's own key", map[string]string{"storage.osm.dev/bucket": "ns/other"}, []string{"spec.tags[storage.osm.dev/bucket]: FieldValueForbidden"}},
		{"a key S3 keeps for AWS", map[string]string{"aws:createdBy": "me"}, []string{"spec.tags[aws:createdBy]: FieldValueForbidden"}},
		{"a key too long", map[string]string{strings.Repeat("k", 129): "v"}, []string{"spec.tags[" + strings.Repeat("k", 129) + "]: FieldValueInvalid"}},
		{"a value too long", map[string]string{"k": strings.Repeat("v", 257)}, []string{"spec.tags[k]: FieldValueTooLong"}},
		{"more than S3 takes beside the owner's two", many, []string{"spec.tags: FieldValueTooMany"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range validateTags(field.NewPath("spec", "tags"), tt.tags) {
				got = append(got, fmt.Sprintf("%s: %s", e.Field, string(e.Type)))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors %q, want %q", got, tt.want)
			}
		})
	}
}
