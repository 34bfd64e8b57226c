package bucketsettings

import (
	"context"
	"fmt"
	"maps"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Tags is the bucket's tags: the spec's, with the operator's owner tags (Input.OwnerTags), which
// the spec cannot set or override. Read while the spec has tags or status shows some; when the
// spec drops them, the bucket keeps only the owner tags. Status shows the user's tags alone.
type Tags struct{}

func (Tags) Info() Info {
	return Info{Field: "tags", Title: "bucket tagging", Event: "Tags", Unsupported: storagev1alpha1.ReasonTagsUnsupported}
}

func (Tags) Wanted(in *Input) bool {
	return len(in.Bucket.Spec.Tags) > 0 || len(in.Bucket.Status.Tags) > 0
}

func (Tags) Observe(ctx context.Context, in *Input) (map[string]string, error) {
	return in.Store.BucketTags(ctx, in.Name())
}

func (Tags) Desired(in *Input, _ map[string]string) map[string]string {
	return WithOwnerTags(in.Bucket.Spec.Tags, in.OwnerTags)
}

// WithOwnerTags is tags with the owner tags added; an owner tag wins over a tag of the same key.
func WithOwnerTags(tags, owner map[string]string) map[string]string {
	out := make(map[string]string, len(tags)+len(owner))
	maps.Copy(out, tags)
	maps.Copy(out, owner)
	return out
}

func (Tags) Equal(a, b map[string]string) bool { return maps.Equal(a, b) }

func (Tags) Write(ctx context.Context, in *Input, tags map[string]string) error {
	return in.Store.PutBucketTags(ctx, in.Name(), tags)
}

func (Tags) Describe(in *Input, tags map[string]string) string {
	return fmt.Sprintf("Set the tags of bucket %s to its spec (%s, and the operator's %d)",
		in.Name(), plural(len(tags)-len(in.OwnerTags), "tag"), len(in.OwnerTags))
}

func (Tags) Recorded(in *Input) (map[string]string, bool) {
	if in.Bucket.Status.Tags == nil {
		return nil, false
	}
	return WithOwnerTags(in.Bucket.Status.Tags, in.OwnerTags), true
}

func (Tags) Record(in *Input, st *storagev1alpha1.BucketStatus, tags map[string]string, _ bool) {
	st.Tags = nil
	for k, v := range tags {
		if _, owner := in.OwnerTags[k]; owner {
			continue
		}
		if st.Tags == nil {
			st.Tags = map[string]string{}
		}
		st.Tags[k] = v
	}
}
