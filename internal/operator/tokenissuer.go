package operator

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	storagecontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/storage"
)

// DefaultTokenAudience is the audience a keyless BucketAccess's ServiceAccount token is minted
// for when --oidc-audience is not set: one of its own, so a token meant for the provider's STS
// is good for nothing else (the API server's own audience would make it one).
const DefaultTokenAudience = "sts.osm.dev"

// Flags of the token issuer (ServiceAccount authentication of BucketAccesses).
const (
	OIDCIssuerURLFlag   = "oidc-issuer-url"
	OIDCAudienceFlag    = "oidc-audience"
	OIDCThumbprintsFlag = "oidc-thumbprints"
)

// As the contract API takes them (openapi/contract.yaml, OIDCProviderRequest).
var (
	tokenAudience   = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)
	tokenThumbprint = regexp.MustCompile(`^[0-9A-Fa-f]{40}$`)
)

// TokenIssuer checks the --oidc-* flags and returns what the BucketAccess controller makes
// contracts' accounts trust. No issuer URL is no issuer: BucketAccesses with authentication
// ServiceAccount are then refused (AuthenticationUnsupported); thumbprints without an issuer
// are a mistake, refused at start.
func TokenIssuer(opts Options) (storagecontroller.TokenIssuer, error) {
	if opts.OIDCIssuerURL == "" {
		if len(opts.OIDCThumbprints) > 0 {
			return storagecontroller.TokenIssuer{}, fmt.Errorf("--%s is set without --%s", OIDCThumbprintsFlag, OIDCIssuerURLFlag)
		}
		return storagecontroller.TokenIssuer{}, nil
	}
	u, err := url.Parse(opts.OIDCIssuerURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return storagecontroller.TokenIssuer{}, fmt.Errorf("--%s %q is not an issuer URL: http(s)://host[/path], without query, fragment or user, "+
			"exactly as the ServiceAccount tokens' iss says it", OIDCIssuerURLFlag, opts.OIDCIssuerURL)
	}
	audience := opts.OIDCAudience
	if audience == "" {
		audience = DefaultTokenAudience
	}
	if !tokenAudience.MatchString(audience) {
		return storagecontroller.TokenIssuer{}, fmt.Errorf("--%s %q: an audience is 1 to 255 printable ASCII characters without spaces", OIDCAudienceFlag, audience)
	}
	if n := len(opts.OIDCThumbprints); n < 1 || n > 5 {
		return storagecontroller.TokenIssuer{}, fmt.Errorf("--%s: the provider needs 1 to 5 SHA-1 fingerprints of the certificates serving %s's keys, got %d",
			OIDCThumbprintsFlag, opts.OIDCIssuerURL, n)
	}
	for _, t := range opts.OIDCThumbprints {
		if !tokenThumbprint.MatchString(t) {
			return storagecontroller.TokenIssuer{}, fmt.Errorf("--%s: %q is not a SHA-1 fingerprint of 40 hex digits", OIDCThumbprintsFlag, t)
		}
	}
	return storagecontroller.TokenIssuer{URL: strings.TrimSuffix(opts.OIDCIssuerURL, "/"), Audience: audience,
		Thumbprints: opts.OIDCThumbprints}, nil
}

// applicationTokenAudience is the audience a keyless Application's pods get their token for: the issuer's,
// DefaultTokenAudience without one (its BucketAccesses are then AuthenticationUnsupported, and
// no pod is written for them).
func applicationTokenAudience(issuer storagecontroller.TokenIssuer) string {
	if issuer.Audience == "" {
		return DefaultTokenAudience
	}
	return issuer.Audience
}
