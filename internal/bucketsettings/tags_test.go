package bucketsettings

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

func TestOwnerTagsWinOverTheSpecs(t *testing.T) {
	got := WithOwnerTags(map[string]string{"team": "a", "storage.osm.dev/bucket": "someone-else"},
		map[string]string{"storage.osm.dev/bucket": "ns/b"})
	if want := map[string]string{"team": "a", "storage.osm.dev/bucket": "ns/b"}; !maps.Equal(got, want) {
		t.Errorf("WithOwnerTags = %v, want %v", got, want)
	}
}

func TestTagsAreReadOnlyWhileTheSpecOrStatusHasSome(t *testing.T) {
	in, store := fixture(t)
	in.Bucket.Spec.Tags = nil
	before := len(store.Calls())
	o := Of[map[string]string](Tags{}).bring(context.Background(), in, func(string, string, string) {}, &sync.Mutex{})
	if o.err != nil || o.record != nil || len(store.Calls()) != before {
		t.Errorf("a Bucket without tags in spec or status: outcome %+v, calls %v; want nothing done", o, store.Calls()[before:])
	}
}

func TestTagsMadeAtCreationAreInSyncAtOnce(t *testing.T) {
	in, store := fixture(t)
	store.TagsOnCreate = true
	want := WithOwnerTags(in.Bucket.Spec.Tags, in.OwnerTags)
	if _, err := store.CreateBucket(context.Background(), "tagged", objectStoreCreate(want)); err != nil {
		t.Fatal(err)
	}
	in.Bucket.Spec.BucketName = "tagged"
	o := Of[map[string]string](Tags{}).bring(context.Background(), in, func(string, string, string) {}, &sync.Mutex{})
	if o.err != nil {
		t.Fatal(o.err)
	}
	for _, c := range store.Calls() {
		if c == "PutBucketTags" {
			t.Errorf("a bucket made with its tags was tagged again")
		}
	}
	o.record(&in.Bucket.Status)
	if !maps.Equal(in.Bucket.Status.Tags, map[string]string{"team": "data"}) {
		t.Errorf("status tags %v, want the spec's alone", in.Bucket.Status.Tags)
	}
}

func objectStoreCreate(tags map[string]string) objectstore.CreateOptions {
	return objectstore.CreateOptions{Tags: tags}
}
