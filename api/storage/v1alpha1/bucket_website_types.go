package v1alpha1

// BucketWebsite serves a bucket as a static website: either its own objects, with an index
// document (and optionally an error document and routing rules), or a redirect of every request
// to another host. The objects must be readable by everyone (a public-read policy or ACL) for
// the website to serve them.
// +kubebuilder:validation:XValidation:rule="has(self.indexDocument) != has(self.redirectAllRequestsTo)",message="set indexDocument to serve the bucket's objects, or redirectAllRequestsTo to send every request to another host, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.redirectAllRequestsTo) || (!has(self.errorDocument) && !has(self.routingRules))",message="a website that redirects every request has no errorDocument and no routingRules"
type BucketWebsite struct {
	// indexDocument is the object served for a request to the website's root or to a
	// "directory" (a key ending in /), for example index.html. It is a suffix, so it holds no
	// slash.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('/')",message="indexDocument is a suffix added to a directory's path, so it holds no slash: index.html"
	IndexDocument string `json:"indexDocument,omitempty"`

	// errorDocument is the key of the object served when a request fails with a 4xx error, for
	// example error.html.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	ErrorDocument string `json:"errorDocument,omitempty"`

	// redirectAllRequestsTo sends every request to another host, instead of serving objects.
	// +optional
	RedirectAllRequestsTo *WebsiteRedirectAll `json:"redirectAllRequestsTo,omitempty"`

	// routingRules redirect some requests: those whose key starts with a prefix, or that fail
	// with an HTTP error code. The first rule that matches applies.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	RoutingRules []WebsiteRoutingRule `json:"routingRules,omitempty"`
}

// WebsiteProtocol is the protocol of a redirect.
// +kubebuilder:validation:Enum=http;https
type WebsiteProtocol string

// WebsiteRedirectAll sends every request to another host.
type WebsiteRedirectAll struct {
	// hostName is the host requests go to: www.example.com.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') && !self.contains(':')",message="hostName is a host name alone, without a scheme, port or path: www.example.com"
	HostName string `json:"hostName"`

	// protocol of the redirect, http or https; absent, the protocol of the request.
	// +optional
	Protocol WebsiteProtocol `json:"protocol,omitempty"`
}

// WebsiteRoutingRule redirects the requests its condition matches.
type WebsiteRoutingRule struct {
	// condition selects the requests the rule redirects; absent, every request.
	// +optional
	Condition *WebsiteRoutingCondition `json:"condition,omitempty"`

	// redirect says where they go.
	// +required
	Redirect WebsiteRoutingRedirect `json:"redirect"`
}

// WebsiteRoutingCondition selects requests by key prefix, by the HTTP error they would get, or
// both.
// +kubebuilder:validation:XValidation:rule="has(self.keyPrefixEquals) || has(self.httpErrorCodeReturnedEquals)",message="a condition needs keyPrefixEquals, httpErrorCodeReturnedEquals, or both; leave condition out to match every request"
type WebsiteRoutingCondition struct {
	// keyPrefixEquals selects requests for keys that start with it: docs/.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	KeyPrefixEquals string `json:"keyPrefixEquals,omitempty"`

	// httpErrorCodeReturnedEquals selects requests that would fail with this HTTP error code:
	// "404".
	// +optional
	// +kubebuilder:validation:Pattern=`^[45][0-9][0-9]$`
	HTTPErrorCodeReturnedEquals string `json:"httpErrorCodeReturnedEquals,omitempty"`
}

// WebsiteRoutingRedirect is where a routing rule sends a request: another host, protocol, key
// or key prefix, with a 3xx code.
// +kubebuilder:validation:XValidation:rule="!(has(self.replaceKeyPrefixWith) && has(self.replaceKeyWith))",message="set replaceKeyPrefixWith or replaceKeyWith, not both"
// +kubebuilder:validation:XValidation:rule="has(self.hostName) || has(self.protocol) || has(self.replaceKeyPrefixWith) || has(self.replaceKeyWith) || has(self.httpRedirectCode)",message="a redirect needs at least one of hostName, protocol, replaceKeyPrefixWith, replaceKeyWith and httpRedirectCode"
type WebsiteRoutingRedirect struct {
	// hostName is the host the request goes to; absent, the website's own.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') && !self.contains(':')",message="hostName is a host name alone, without a scheme, port or path: www.example.com"
	HostName string `json:"hostName,omitempty"`

	// protocol of the redirect, http or https; absent, the protocol of the request.
	// +optional
	Protocol WebsiteProtocol `json:"protocol,omitempty"`

	// replaceKeyPrefixWith replaces the prefix the condition matched (keyPrefixEquals).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ReplaceKeyPrefixWith *string `json:"replaceKeyPrefixWith,omitempty"`

	// replaceKeyWith replaces the whole key.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ReplaceKeyWith *string `json:"replaceKeyWith,omitempty"`

	// httpRedirectCode is the 3xx code of the redirect: "301" (the default at the server),
	// "302", ...
	// +optional
	// +kubebuilder:validation:Pattern=`^3[0-9][0-9]$`
	HTTPRedirectCode string `json:"httpRedirectCode,omitempty"`
}
