package bucketsettings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

const topicARN = "arn:aws:sns:default::c1-uid-images"

// web is the fixture's Bucket with a website and a notification whose topic the provider made.
func web(t *testing.T) (*Input, *fakes3.Store) {
	t.Helper()
	in, store := fixture(t)
	in.Bucket.Spec.Website = &storagev1alpha1.BucketWebsite{IndexDocument: "index.html", ErrorDocument: "404.html",
		RoutingRules: []storagev1alpha1.WebsiteRoutingRule{{
			Condition: &storagev1alpha1.WebsiteRoutingCondition{KeyPrefixEquals: "docs/"},
			Redirect:  storagev1alpha1.WebsiteRoutingRedirect{ReplaceKeyPrefixWith: new(""), HTTPRedirectCode: "302"}}}}
	in.Bucket.Spec.Notifications = []storagev1alpha1.BucketNotification{{Name: "images", Endpoint: "http://h.example/",
		Events: []storagev1alpha1.NotificationEvent{"s3:ObjectRemoved:*", "s3:ObjectCreated:*"},
		Filter: &storagev1alpha1.NotificationFilter{Prefix: "images/", Suffix: ".jpg"}}}
	in.WebsiteEndpoint = "http://{bucket}.s3-website.example.com"
	in.TopicARNs = map[string]string{"images": topicARN}
	return in, store
}

func TestAWebsiteAndNotificationsAreAppliedObservedAndThenOnlyRead(t *testing.T) {
	in, store := web(t)
	before := len(store.Calls())
	if failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed; len(failed) > 0 {
		t.Fatalf("Sync failed: %+v", failed)
	}
	for _, w := range []string{"PutWebsite", "PutNotifications"} {
		if !slices.Contains(writes(store.Calls()[before:]), w) {
			t.Errorf("writes %v lack %s", writes(store.Calls()[before:]), w)
		}
	}
	got := store.Bucket("b")
	if got.Website.IndexDocument != "index.html" || len(got.Website.RoutingRules) != 1 || *got.Website.RoutingRules[0].ReplaceKeyPrefixWith != "" {
		t.Errorf("the server's website is %+v", got.Website)
	}
	st := in.Bucket.Status
	if diff := cmp.Diff(in.Bucket.Spec.Website, st.Website); diff != "" {
		t.Errorf("status.website (-spec +status):\n%s", diff)
	}
	if st.WebsiteEndpoint != "http://b.s3-website.example.com" {
		t.Errorf("status.websiteEndpoint is %q", st.WebsiteEndpoint)
	}
	want := []storagev1alpha1.ObservedNotification{{Name: "images", TopicARN: topicARN,
		Events: []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}, Filter: in.Bucket.Spec.Notifications[0].Filter}}
	if diff := cmp.Diff(want, st.Notifications); diff != "" {
		t.Errorf("status.notifications (-want +got):\n%s", diff)
	}

	in.Applied = true
	before = len(store.Calls())
	Sync(context.Background(), in, func(string, string, string) {}, All)
	if w := writes(store.Calls()[before:]); len(w) > 0 {
		t.Errorf("a bucket in sync was written: %v", w)
	}
}

func TestDriftInTheWebsiteAndNotificationsIsRestoredWithOneWarningEach(t *testing.T) {
	in, store := web(t)
	ctx := context.Background()
	Sync(ctx, in, func(string, string, string) {}, All)
	in.Applied = true
	_ = store.DeleteWebsite(ctx, "b")
	_ = store.PutNotifications(ctx, "b", []objectstore.Notification{{ID: "images", TopicARN: topicARN, Events: []string{"s3:ObjectCreated:Put"}}})
	ev := &events{}
	Sync(ctx, in, ev.emit, All)
	slices.Sort(ev.got)
	if want := []string{"Warning NotificationsDriftCorrected", "Warning WebsiteDriftCorrected"}; !slices.Equal(ev.got, want) {
		t.Errorf("events %v, want %v", ev.got, want)
	}
	if got := store.Bucket("b"); got.Website.IndexDocument != "index.html" || len(got.Notifications) != 1 || len(got.Notifications[0].Events) != 2 {
		t.Errorf("drift not restored: website %+v, notifications %+v", got.Website, got.Notifications)
	}
}

func TestDroppingTheWebsiteAndNotificationsRemovesThem(t *testing.T) {
	in, store := web(t)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	in.Bucket.Spec.Website, in.Bucket.Spec.Notifications = nil, nil
	ev := &events{}
	Sync(context.Background(), in, ev.emit, All)
	if got := store.Bucket("b"); !got.Website.IsZero() || len(got.Notifications) > 0 {
		t.Errorf("after the spec dropped them the server has website %+v, notifications %+v", got.Website, got.Notifications)
	}
	if st := in.Bucket.Status; st.Website != nil || st.WebsiteEndpoint != "" || st.Notifications != nil {
		t.Errorf("status still shows dropped settings: %+v %q %+v", st.Website, st.WebsiteEndpoint, st.Notifications)
	}
	slices.Sort(ev.got)
	if want := []string{"Normal NotificationsUpdated", "Normal WebsiteUpdated"}; !slices.Equal(ev.got, want) {
		t.Errorf("events %v, want %v", ev.got, want)
	}
}

func TestNotificationsWithoutTopicsAreUnsupportedAndTheRestApplied(t *testing.T) {
	for name, prepare := range map[string]func(*Input, *fakes3.Store){
		"the provider makes no topics": func(in *Input, _ *fakes3.Store) {
			in.TopicARNs, in.TopicsErr = nil, fmt.Errorf("%w: versitygw", ErrTopicsUnsupported)
		},
		"the server answers 501": func(_ *Input, store *fakes3.Store) {
			store.Fail("Notifications", fakes3.Failure{Err: fakes3.NotImplemented})
		},
	} {
		t.Run(name, func(t *testing.T) {
			in, store := web(t)
			prepare(in, store)
			failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed
			if len(failed) != 1 || !failed[0].Unsupported || failed[0].Info.Unsupported != storagev1alpha1.ReasonNotificationsUnsupported {
				t.Fatalf("failures %+v, want notifications alone, unsupported", failed)
			}
			if got := store.Bucket("b"); got.Website.IndexDocument != "index.html" || len(got.Notifications) > 0 {
				t.Errorf("website %+v, notifications %+v: want the website applied and no notification", got.Website, got.Notifications)
			}
		})
	}
	// A topic not made yet, for another reason, is a failure to retry, not an Unsupported.
	in, _ := web(t)
	in.TopicARNs = nil
	if failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed; len(failed) != 1 || failed[0].Unsupported ||
		errors.Is(failed[0].Err, ErrTopicsUnsupported) {
		t.Errorf("failures %+v, want notifications, not unsupported", failed)
	}
}

// The operator makes no topic for an Observe Bucket: which topic a notification publishes to is
// not the spec's to say, so a bucket whose notifications match the spec otherwise is in sync.
func TestObservingComparesNotificationsWithoutTheirTopic(t *testing.T) {
	in, store := web(t)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	_ = store.PutNotifications(context.Background(), "b", []objectstore.Notification{{ID: "images", TopicARN: "arn:aws:sns:us-east-1:1:theirs",
		Events: []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}, Prefix: "images/", Suffix: ".jpg"}})
	in.Observe, in.TopicARNs = true, nil
	before := len(store.Calls())
	res := Sync(context.Background(), in, func(string, string, string) {}, All)
	if slices.ContainsFunc(res.Differ, func(i Info) bool { return i.Field == "notifications" }) {
		t.Error("notifications that differ only in their topic count as differing")
	}
	if w := writes(store.Calls()[before:]); len(w) > 0 {
		t.Errorf("observing wrote %v", w)
	}
	in.Bucket.Spec.Notifications[0].Events = []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:*"}
	if res := Sync(context.Background(), in, func(string, string, string) {}, All); !slices.ContainsFunc(res.Differ, func(i Info) bool {
		return i.Field == "notifications"
	}) {
		t.Error("notifications with other events count as matching")
	}
}

// Where the provider serves websites is its to say, and may be said (or change) after the
// website was made: status follows without a write to the bucket, and without an event.
func TestTheWebsiteEndpointFollowsTheProviderWithoutAWrite(t *testing.T) {
	in, store := web(t)
	in.WebsiteEndpoint = ""
	Sync(context.Background(), in, func(string, string, string) {}, All)
	if in.Bucket.Status.WebsiteEndpoint != "" {
		t.Fatalf("a provider that does not say shows %q", in.Bucket.Status.WebsiteEndpoint)
	}
	in.Applied, in.WebsiteEndpoint = true, "https://{bucket}.web.example.com"
	before := len(store.Calls())
	ev := &events{}
	Sync(context.Background(), in, ev.emit, All)
	if got := in.Bucket.Status.WebsiteEndpoint; got != "https://b.web.example.com" {
		t.Errorf("status.websiteEndpoint is %q once the provider says where", got)
	}
	if w := writes(store.Calls()[before:]); len(w) > 0 || len(ev.got) > 0 {
		t.Errorf("the provider's endpoint caused writes %v and events %v", w, ev.got)
	}
}
