package v1alpha1

import (
	"fmt"
	neturl "net/url"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// The CRD's rules refuse a malformed website (a redirect of every request beside an index
// document, a routing rule without a redirect) and a notification to an endpoint that is not
// http(s). What they cannot say is checked here: what S3 refuses across notifications, and an
// endpoint that would carry a password into status and into the provider's topic.

// validateNotifications checks the notifications when they changed.
func validateNotifications(spec, old *storagev1alpha1.BucketSpec) field.ErrorList {
	if old != nil && apiequality.Semantic.DeepEqual(spec.Notifications, old.Notifications) {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("spec", "notifications")
	for i, n := range spec.Notifications {
		if shown, msg := endpointProblem(n.Endpoint); msg != "" {
			errs = append(errs, field.Invalid(path.Index(i).Child("endpoint"), shown, msg))
		}
		if f := n.Filter; f != nil {
			errs = append(errs, printable(path.Index(i).Child("filter", "prefix"), f.Prefix)...)
			errs = append(errs, printable(path.Index(i).Child("filter", "suffix"), f.Suffix)...)
		}
		for j := range i {
			if overlap(spec.Notifications[j], n) {
				errs = append(errs, field.Invalid(path.Index(i), n.Name, fmt.Sprintf(
					"shares an event type with %s and their filters overlap, which S3 refuses (an object would be sent twice): "+
						"give them different events, or prefixes or suffixes that do not overlap", path.Index(j))))
			}
		}
	}
	return errs
}

// checkNotificationEndpoints refuses a notification endpoint that is new and not on the
// platform's list: the provider pushes events there from inside its own network.
func (v *BucketValidator) checkNotificationEndpoints(spec, old *storagev1alpha1.BucketSpec) field.ErrorList {
	had := map[string]bool{}
	if old != nil {
		for _, n := range old.Notifications {
			had[n.Endpoint] = true
		}
	}
	var errs field.ErrorList
	for i, n := range spec.Notifications {
		if had[n.Endpoint] {
			continue
		}
		if _, msg := endpointProblem(n.Endpoint); msg != "" {
			continue // validateNotifications says what is wrong with it
		}
		if err := v.NotificationEndpoints.CheckURL(n.Endpoint); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "notifications").Index(i).Child("endpoint"),
				endpointRefusal(err, v.NotificationEndpoints, egress.NotificationEndpointsFlag)))
		}
	}
	return errs
}

// endpointProblem says what is wrong with a notification's endpoint ("" when nothing), and the
// endpoint as the message may show it: without a password.
func endpointProblem(endpoint string) (shown, problem string) {
	u, err := neturl.Parse(endpoint)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return endpoint, "must be an http:// or https:// URL: http://receiver.example:8080/events"
	case u.User != nil:
		return u.Redacted(), "must not hold a user or password: the endpoint is kept in the Bucket's status and in the provider's topic, " +
			"where anyone who can read them would see it"
	case u.Fragment != "":
		return endpoint, "must not have a #fragment, which is never sent"
	}
	return endpoint, ""
}

// overlap says whether S3 would refuse a and b side by side: an event type in common
// (s3:ObjectCreated:* covers every s3:ObjectCreated:...) and filters some key matches both.
func overlap(a, b storagev1alpha1.BucketNotification) bool {
	shared := false
	for _, x := range a.Events {
		for _, y := range b.Events {
			shared = shared || eventsOverlap(string(x), string(y))
		}
	}
	if !shared {
		return false
	}
	var fa, fb storagev1alpha1.NotificationFilter
	if a.Filter != nil {
		fa = *a.Filter
	}
	if b.Filter != nil {
		fb = *b.Filter
	}
	return (strings.HasPrefix(fa.Prefix, fb.Prefix) || strings.HasPrefix(fb.Prefix, fa.Prefix)) &&
		(strings.HasSuffix(fa.Suffix, fb.Suffix) || strings.HasSuffix(fb.Suffix, fa.Suffix))
}

func eventsOverlap(x, y string) bool {
	family := func(e string) string { return e[:strings.LastIndex(e, ":")] }
	return x == y || family(x) == family(y) && (strings.HasSuffix(x, ":*") || strings.HasSuffix(y, ":*"))
}

// websiteWarnings: a website serves only objects everyone may read; one whose spec lets no one
// read them answers 403 to every request.
func websiteWarnings(spec, old *storagev1alpha1.BucketSpec) admission.Warnings {
	w := spec.Website
	if w == nil || w.IndexDocument == "" || old != nil && apiequality.Semantic.DeepEqual(spec.Website, old.Website) &&
		spec.CannedACL == old.CannedACL && apiequality.Semantic.DeepEqual(spec.Policy, old.Policy) {
		return nil
	}
	if objectstore.IsPublicCanned(string(spec.CannedACL)) || spec.Policy != nil && bucketpolicy.IsPublic(string(spec.Policy.Raw)) {
		return nil
	}
	return admission.Warnings{"spec.website: a website serves only objects everyone may read, and this spec lets no one read them " +
		"(every request would get 403): add a policy statement that allows s3:GetObject to every principal"}
}
