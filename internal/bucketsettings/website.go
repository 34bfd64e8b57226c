package bucketsettings

import (
	"context"
	"fmt"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Website is the bucket's static website configuration, read while the spec sets one; when the
// spec drops it, the bucket's is deleted. Recording it also records where the provider serves
// it (status.websiteEndpoint).
type Website struct{}

func (Website) Info() Info {
	return Info{Field: "website", Title: "static website hosting", Event: "Website", Unsupported: storagev1alpha1.ReasonWebsiteUnsupported}
}

func (Website) Wanted(in *Input) bool { return in.Bucket.Spec.Website != nil }

func (Website) Observe(ctx context.Context, in *Input) (objectstore.Website, error) {
	return in.Store.Website(ctx, in.Name())
}

func (Website) Desired(in *Input, _ objectstore.Website) objectstore.Website {
	return specWebsite(in.Bucket.Spec.Website)
}

func (Website) Equal(a, b objectstore.Website) bool { return objectstore.WebsiteEqual(a, b) }

func (Website) Write(ctx context.Context, in *Input, w objectstore.Website) error {
	return in.Store.PutWebsite(ctx, in.Name(), w)
}

func (Website) Describe(in *Input, w objectstore.Website) string {
	if w.RedirectAll != nil {
		return fmt.Sprintf("Made bucket %s a website that redirects every request to %s", in.Name(), w.RedirectAll.HostName)
	}
	return fmt.Sprintf("Made bucket %s a website with index document %s (%s)", in.Name(), w.IndexDocument, plural(len(w.RoutingRules), "routing rule"))
}

func (Website) Remove(ctx context.Context, in *Input) error {
	return in.Store.DeleteWebsite(ctx, in.Name())
}

func (Website) Removed(in *Input) string {
	return fmt.Sprintf("Deleted the website configuration of bucket %s, which its spec no longer has", in.Name())
}

func (Website) Recorded(in *Input) (objectstore.Website, bool) {
	return specWebsite(in.Bucket.Status.Website), in.Bucket.Status.Website != nil
}

func (Website) Record(in *Input, st *storagev1alpha1.BucketStatus, w objectstore.Website, _ bool) {
	st.Website, st.WebsiteEndpoint = nil, ""
	if w.IsZero() {
		return
	}
	st.Website = statusWebsite(w)
	if in.WebsiteEndpoint != "" {
		st.WebsiteEndpoint = strings.ReplaceAll(in.WebsiteEndpoint, "{bucket}", in.Name())
	}
}

// specWebsite is a website as a spec (or status) writes it, in the Store's form.
func specWebsite(w *storagev1alpha1.BucketWebsite) objectstore.Website {
	if w == nil {
		return objectstore.Website{}
	}
	out := objectstore.Website{IndexDocument: w.IndexDocument, ErrorDocument: w.ErrorDocument}
	if r := w.RedirectAllRequestsTo; r != nil {
		out.RedirectAll = &objectstore.WebsiteRedirect{HostName: r.HostName, Protocol: string(r.Protocol)}
	}
	for _, r := range w.RoutingRules {
		rule := objectstore.RoutingRule{HostName: r.Redirect.HostName, Protocol: string(r.Redirect.Protocol),
			HTTPRedirectCode: r.Redirect.HTTPRedirectCode, ReplaceKeyPrefixWith: r.Redirect.ReplaceKeyPrefixWith,
			ReplaceKeyWith: r.Redirect.ReplaceKeyWith}
		if c := r.Condition; c != nil {
			rule.KeyPrefixEquals, rule.HTTPErrorCodeReturnedEquals = c.KeyPrefixEquals, c.HTTPErrorCodeReturnedEquals
		}
		out.RoutingRules = append(out.RoutingRules, rule)
	}
	return out
}

// statusWebsite is the status form of an observed website.
func statusWebsite(w objectstore.Website) *storagev1alpha1.BucketWebsite {
	out := &storagev1alpha1.BucketWebsite{IndexDocument: w.IndexDocument, ErrorDocument: w.ErrorDocument}
	if r := w.RedirectAll; r != nil {
		out.RedirectAllRequestsTo = &storagev1alpha1.WebsiteRedirectAll{HostName: r.HostName, Protocol: storagev1alpha1.WebsiteProtocol(r.Protocol)}
	}
	for _, r := range w.RoutingRules {
		rule := storagev1alpha1.WebsiteRoutingRule{Redirect: storagev1alpha1.WebsiteRoutingRedirect{HostName: r.HostName,
			Protocol: storagev1alpha1.WebsiteProtocol(r.Protocol), HTTPRedirectCode: r.HTTPRedirectCode,
			ReplaceKeyPrefixWith: r.ReplaceKeyPrefixWith, ReplaceKeyWith: r.ReplaceKeyWith}}
		if r.KeyPrefixEquals != "" || r.HTTPErrorCodeReturnedEquals != "" {
			rule.Condition = &storagev1alpha1.WebsiteRoutingCondition{KeyPrefixEquals: r.KeyPrefixEquals,
				HTTPErrorCodeReturnedEquals: r.HTTPErrorCodeReturnedEquals}
		}
		out.RoutingRules = append(out.RoutingRules, rule)
	}
	return out
}
