package bucketsettings

import (
	"context"
	"fmt"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Website is the bucket's static website configuration, read while the spec sets one; when the
// spec drops it, the bucket's is deleted.
type Website struct{}

// site is a website configuration and the URL the provider serves it at (status.websiteEndpoint).
// The URL is part of the value, so a provider that comes to say where its websites are, or moves
// them, changes status without a write to the bucket.
type site struct {
	objectstore.Website
	Endpoint string
}

func (Website) Info() Info {
	return Info{Field: "website", Title: "static website hosting", Event: "Website", Unsupported: storagev1alpha1.ReasonWebsiteUnsupported}
}

func (Website) Wanted(in *Input) bool { return in.Bucket.Spec.Website != nil }

func (Website) Observe(ctx context.Context, in *Input) (site, error) {
	w, err := in.Store.Website(ctx, in.Name())
	return siteOf(in, w), err
}

func (Website) Desired(in *Input, _ site) site {
	return siteOf(in, specWebsite(in.Bucket.Spec.Website))
}

func (Website) Equal(a, b site) bool {
	return objectstore.WebsiteEqual(a.Website, b.Website) && a.Endpoint == b.Endpoint
}

func (Website) Write(ctx context.Context, in *Input, w site) error {
	return in.Store.PutWebsite(ctx, in.Name(), w.Website)
}

func (Website) Describe(in *Input, w site) string {
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

func (Website) Recorded(in *Input) (site, bool) {
	st := in.Bucket.Status
	return site{specWebsite(st.Website), st.WebsiteEndpoint}, st.Website != nil
}

func (Website) Record(_ *Input, st *storagev1alpha1.BucketStatus, w site, _ bool) {
	st.Website, st.WebsiteEndpoint = nil, ""
	if !w.IsZero() {
		st.Website, st.WebsiteEndpoint = statusWebsite(w.Website), w.Endpoint
	}
}

// siteOf is w with the URL the provider serves it at: none without a website, or when the
// provider does not say.
func siteOf(in *Input, w objectstore.Website) site {
	if w.IsZero() || in.WebsiteEndpoint == "" {
		return site{Website: w}
	}
	return site{Website: w, Endpoint: strings.ReplaceAll(in.WebsiteEndpoint, "{bucket}", in.Name())}
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
