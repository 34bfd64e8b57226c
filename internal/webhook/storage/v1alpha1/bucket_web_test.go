package v1alpha1

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

const privateWebsiteWarning = "spec.website: a website serves only objects everyone may read, and this spec lets no one read them " +
	"(every request would get 403): add a policy statement that allows s3:GetObject to every principal"

func notification(name, endpoint, prefix, suffix string, events ...storagev1alpha1.NotificationEvent) storagev1alpha1.BucketNotification {
	n := storagev1alpha1.BucketNotification{Name: name, Endpoint: endpoint, Events: events}
	if prefix != "" || suffix != "" {
		n.Filter = &storagev1alpha1.NotificationFilter{Prefix: prefix, Suffix: suffix}
	}
	return n
}

func TestNotificationsS3WouldRefuseAreRefusedAndAWebsiteNobodyMayReadIsWarnedAbout(t *testing.T) {
	const hook = "http://receiver.example:8080/events"
	tests := []struct {
		name     string
		modify   func(*storagev1alpha1.Bucket)
		want     []string
		warnings []string
	}{
		{name: "a public website, and notifications that cannot both match a key", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Website = &storagev1alpha1.BucketWebsite{IndexDocument: "index.html"}
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
			b.Spec.Notifications = []storagev1alpha1.BucketNotification{
				notification("jpg", hook, "images/", ".jpg", "s3:ObjectCreated:*"),
				notification("png", hook, "images/", ".png", "s3:ObjectCreated:Put"),
				notification("docs", hook, "docs/", "", "s3:ObjectCreated:*"),
				notification("gone", "https://hooks.example.com", "", "", "s3:ObjectRemoved:*"),
			}
		}},
		{name: "a website that redirects every request needs no readers", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Website = &storagev1alpha1.BucketWebsite{RedirectAllRequestsTo: &storagev1alpha1.WebsiteRedirectAll{HostName: "www.example.com"}}
		}},
		{name: "a website nobody may read", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Website = &storagev1alpha1.BucketWebsite{IndexDocument: "index.html"}
		}, warnings: []string{privateWebsiteWarning}},
		{name: "a notification pushing where the platform does not allow", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Notifications = []storagev1alpha1.BucketNotification{
				notification("all", hook, "", "", "s3:ObjectCreated:*"),
				notification("metadata", "http://169.254.169.254/latest/api/token", "", "", "s3:ObjectRemoved:*"),
			}
		}, want: []string{
			`spec.notifications[1].endpoint: Forbidden: http://169.254.169.254/latest/api/token is not on the platform's list of allowed endpoints; ` +
				`the platform allows http://receiver.example:8080/events, http://hooks.example.com, https://hooks.example.com`,
		}},
		{name: "overlapping notifications and endpoints S3 or the status cannot take", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Notifications = []storagev1alpha1.BucketNotification{
				notification("all", hook, "", "", "s3:ObjectCreated:*"),
				notification("images", hook, "images/", "", "s3:ObjectCreated:Put"),
				notification("secret", "https://user:pw@hooks.example.com/", "", "", "s3:ObjectRemoved:Delete"),
				notification("ftp", "ftp://hooks.example.com/", "x/", "", "s3:ObjectRemoved:DeleteMarkerCreated"),
			}
		}, want: []string{
			`spec.notifications[1]: Invalid value: "images": shares an event type with spec.notifications[0] and their filters overlap, ` +
				`which S3 refuses (an object would be sent twice): give them different events, or prefixes or suffixes that do not overlap`,
			`spec.notifications[2].endpoint: Invalid value: "https://user:xxxxx@hooks.example.com/": must not hold a user or password: ` +
				`the endpoint is kept in the Bucket's status and in the provider's topic, where anyone who can read them would see it`,
			`spec.notifications[3].endpoint: Invalid value: "ftp://hooks.example.com/": must be an http:// or https:// URL: http://receiver.example:8080/events`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBucket()
			tt.modify(b)
			warnings, err := bucketValidator(readerWith()).ValidateCreate(context.Background(), b)
			if diff := cmp.Diff(tt.warnings, []string(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnchangedNotificationsAreNotCheckedAgain(t *testing.T) {
	old := validBucket()
	old.Spec.Notifications = []storagev1alpha1.BucketNotification{
		notification("a", "http://h.example/", "", "", "s3:ObjectCreated:*"),
		notification("b", "http://h.example/", "", "", "s3:ObjectCreated:Put"),
	}
	b := old.DeepCopy()
	b.Spec.Tags = map[string]string{"team": "a"}
	_, err := bucketValidator(readerWith()).ValidateUpdate(context.Background(), old, b)
	if causes := webhooktest.Causes(t, err); len(causes) > 0 {
		t.Errorf("an update that left the notifications alone was refused: %v", causes)
	}
}

func TestKeyPrefixesAndSuffixesRefuseControlCharacters(t *testing.T) {
	b := validBucket()
	b.Spec.Notifications = []storagev1alpha1.BucketNotification{
		notification("images", "http://receiver.example:8080/events", "images/\n", ".jpg\t", "s3:ObjectCreated:*")}
	b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
		{ID: "tmp", Prefix: "tmp/\r\n[default]", AbortIncompleteMultipartUploadDays: ptr.To(int32(1))}}}
	b.Spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "team-a-data", TargetPrefix: "logs/\x00"}
	_, err := bucketValidator(readerWith()).ValidateCreate(context.Background(), b)
	want := []string{
		`spec.notifications[0].filter.prefix: Invalid value: "images/\n": may not contain control characters (a newline, a tab, ...)`,
		`spec.notifications[0].filter.suffix: Invalid value: ".jpg\t": may not contain control characters (a newline, a tab, ...)`,
		`spec.lifecycle.rules[0].prefix: Invalid value: "tmp/\r\n[default]": may not contain control characters (a newline, a tab, ...)`,
		`spec.logging.targetPrefix: Invalid value: "logs/\x00": may not contain control characters (a newline, a tab, ...)`,
	}
	if diff := cmp.Diff(want, webhooktest.Causes(t, err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
