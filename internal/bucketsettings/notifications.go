package bucketsettings

import (
	"context"
	"errors"
	"fmt"
	"slices"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Notifications are the bucket's event notifications, read while the spec has some; each
// publishes to the topic the provider made for it (Input.TopicARNs). When the spec drops them
// all, the bucket's are removed.
type Notifications struct{}

// ErrTopicsUnsupported wraps the provider's answer that it makes no topics: the notifications
// are then Unsupported, the rest of the spec applied.
var ErrTopicsUnsupported = errors.New("the provider makes no notification topics")

func (Notifications) Info() Info {
	return Info{Field: "notifications", Title: "event notifications", Event: "Notifications",
		Unsupported: storagev1alpha1.ReasonNotificationsUnsupported}
}

func (Notifications) Wanted(in *Input) bool { return len(in.Bucket.Spec.Notifications) > 0 }

func (Notifications) Observe(ctx context.Context, in *Input) ([]objectstore.Notification, error) {
	return in.Store.Notifications(ctx, in.Name())
}

// Desired is the spec's notifications, each with its topic's ARN ("" while the provider has
// not made it, which Write refuses). Observing, the operator makes no topic, so the spec says
// nothing of which one a notification publishes to: the bucket's own is taken.
func (Notifications) Desired(in *Input, observed []objectstore.Notification) []objectstore.Notification {
	out := make([]objectstore.Notification, 0, len(in.Bucket.Spec.Notifications))
	for _, n := range in.Bucket.Spec.Notifications {
		o := objectstore.Notification{ID: n.Name, TopicARN: in.TopicARNs[n.Name]}
		if i := slices.IndexFunc(observed, func(x objectstore.Notification) bool { return x.ID == n.Name }); in.Observe && i >= 0 {
			o.TopicARN = observed[i].TopicARN
		}
		for _, e := range n.Events {
			o.Events = append(o.Events, string(e))
		}
		if f := n.Filter; f != nil {
			o.Prefix, o.Suffix = f.Prefix, f.Suffix
		}
		out = append(out, o)
	}
	return objectstore.NormalizeNotifications(out)
}

func (Notifications) Equal(a, b []objectstore.Notification) bool {
	return objectstore.NotificationsEqual(a, b)
}

// Write points the bucket's notifications at their topics; without a topic for each (the
// provider could not make them) nothing is written and the reason is returned.
func (Notifications) Write(ctx context.Context, in *Input, ns []objectstore.Notification) error {
	if in.TopicsErr != nil {
		return in.TopicsErr
	}
	for _, n := range ns {
		if n.TopicARN == "" {
			return fmt.Errorf("notification %s of bucket %s has no topic yet", n.ID, in.Name())
		}
	}
	return in.Store.PutNotifications(ctx, in.Name(), ns)
}

func (Notifications) Describe(in *Input, ns []objectstore.Notification) string {
	return fmt.Sprintf("Set the event notifications of bucket %s to its spec (%s)", in.Name(), plural(len(ns), "notification"))
}

func (Notifications) Remove(ctx context.Context, in *Input) error {
	return in.Store.PutNotifications(ctx, in.Name(), nil)
}

func (Notifications) Removed(in *Input) string {
	return fmt.Sprintf("Removed the event notifications of bucket %s, which its spec no longer has", in.Name())
}

// Unsupported: besides a 501 from the S3 server, the provider's refusal to make topics.
func (Notifications) Unsupported(err error) bool { return errors.Is(err, ErrTopicsUnsupported) }

func (Notifications) Recorded(in *Input) ([]objectstore.Notification, bool) {
	return specNotifications(in.Bucket.Status.Notifications), in.Bucket.Status.Notifications != nil
}

func (Notifications) Record(_ *Input, st *storagev1alpha1.BucketStatus, ns []objectstore.Notification, _ bool) {
	st.Notifications = nil
	for _, n := range objectstore.NormalizeNotifications(ns) {
		o := storagev1alpha1.ObservedNotification{Name: n.ID, TopicARN: n.TopicARN, Events: n.Events}
		if n.Prefix != "" || n.Suffix != "" {
			o.Filter = &storagev1alpha1.NotificationFilter{Prefix: n.Prefix, Suffix: n.Suffix}
		}
		st.Notifications = append(st.Notifications, o)
	}
}

// specNotifications is the Store's form of notifications as status shows them.
func specNotifications(observed []storagev1alpha1.ObservedNotification) []objectstore.Notification {
	var out []objectstore.Notification
	for _, o := range observed {
		n := objectstore.Notification{ID: o.Name, TopicARN: o.TopicARN, Events: o.Events}
		if o.Filter != nil {
			n.Prefix, n.Suffix = o.Filter.Prefix, o.Filter.Suffix
		}
		out = append(out, n)
	}
	return out
}
