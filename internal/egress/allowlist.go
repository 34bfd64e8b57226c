// Package egress decides where the manager may connect for a tenant, and bounds what it reads
// back. A tenant writes URLs (an existing account's S3 endpoint, a notification receiver); the
// platform decides which are reachable, with an Allowlist of URL patterns given to the manager
// by flags. The same list is checked twice: at admission, with the field path (CheckURL), and
// before every connection, after DNS (Dialer), so a URL that reaches the manager by another way
// (a Secret's AWS_ENDPOINT_URL) or a name that resolves somewhere new is held to it too.
//
// What is read back is bounded as well: no redirect to another host (CheckRedirect), and at most
// a fixed number of bytes per answer (LimitAnswers).
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Allowlist is the set of URL patterns the platform lets tenants name. The zero value allows
// nothing.
//
// A pattern is scheme://host[:port][/path]:
//   - scheme is http or https;
//   - host is a name or an IP address, matched whole, or "*." and a domain, which matches every
//     name under that domain (not the domain itself);
//   - port is a number or "*"; absent, the scheme's default (80, 443);
//   - path, when given, is a prefix the URL's path must start with at a "/" boundary; absent,
//     any path.
//
// A host matched by its own name (a pattern without "*") is "named": it may resolve to a private,
// loopback or link-local address, such as an in-cluster S3 service. A host matched only by a
// wildcard may not: a wildcard never reaches the cluster's own network (see Dialer).
type Allowlist struct {
	rules []rule
}

type rule struct {
	pattern  string
	scheme   string
	host     string // lower case; for a wildcard, the domain after "*."
	wildcard bool
	port     string // "*" for any
	path     string // "" for none
}

// Parse reads patterns, as the manager's flags give them; blanks are skipped.
func Parse(patterns []string) (Allowlist, error) {
	var a Allowlist
	for _, p := range patterns {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		r, err := parseRule(p)
		if err != nil {
			return Allowlist{}, fmt.Errorf("allowed endpoint %q: %w", p, err)
		}
		a.rules = append(a.rules, r)
	}
	return a, nil
}

// ParseList reads a comma-separated list of patterns.
func ParseList(list string) (Allowlist, error) { return Parse(strings.Split(list, ",")) }

func parseRule(p string) (rule, error) {
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return rule{}, errors.New("must start with http:// or https://")
	}
	hostport, path, _ := strings.Cut(rest, "/")
	if path != "" {
		path = "/" + strings.TrimSuffix(path, "/")
	}
	host, port := hostport, ""
	if h, pt, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, pt
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1] // an IPv6 address without a port
	}
	r := rule{pattern: p, scheme: scheme, path: path, port: port}
	if port == "" {
		r.port = defaultPort(scheme)
	} else if port != "*" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return rule{}, fmt.Errorf("port %q is not a port number or *", port)
		}
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if d, ok := strings.CutPrefix(host, "*."); ok {
		r.wildcard, host = true, d
	}
	if host == "" || strings.ContainsAny(host, "*@?#[]") || !printable(host) {
		return rule{}, errors.New("needs a host: a name, an IP address, or *. and a domain")
	}
	if r.wildcard && net.ParseIP(host) != nil {
		return rule{}, errors.New("a wildcard needs a domain, not an IP address")
	}
	if r.wildcard && !strings.Contains(host, ".") {
		return rule{}, errors.New("a wildcard must stand under a domain of at least two labels (*.example.com), not a top-level domain")
	}
	if strings.ContainsAny(path, "*?#") || !printable(path) {
		return rule{}, errors.New("the path may hold no *, ? or # (a path is a prefix already)")
	}
	r.host = host
	return r, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// printable reports whether s holds no control or other non-printable characters.
func printable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// Empty reports whether the list allows nothing.
func (a Allowlist) Empty() bool { return len(a.rules) == 0 }

// String lists the patterns, comma-separated, as a message names them.
func (a Allowlist) String() string {
	patterns := make([]string, len(a.rules))
	for i, r := range a.rules {
		patterns[i] = r.pattern
	}
	return strings.Join(patterns, ", ")
}

// ErrNotAllowed says a URL, or a connection, is not on the platform's list.
var ErrNotAllowed = errors.New("not on the platform's list of allowed endpoints")

// NotAllowedError is a URL refused, with why, in words fit for a condition message or an
// admission error. It is never retried: the list changes only with the manager's flags.
type NotAllowedError struct {
	// What is the URL or the host:port refused.
	What string
	// Why is what is wrong with it; "" when it is simply not on the list.
	Why string
}

func (e *NotAllowedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("%s is not allowed: %s", e.What, e.Why)
	}
	return fmt.Sprintf("%s is %s", e.What, ErrNotAllowed)
}

func (e *NotAllowedError) Unwrap() error { return ErrNotAllowed }

// RetryableError tells the AWS SDK's retryer that trying again changes nothing.
func (e *NotAllowedError) RetryableError() bool { return false }

// CheckURL checks a URL a tenant wrote: an http or https URL, with no user, query or fragment
// and no control characters, that a pattern of the list matches. The error says why not.
func (a Allowlist) CheckURL(raw string) error {
	u, err := ParseURL(raw)
	if err != nil {
		return err
	}
	if _, ok := a.match(u.Scheme, u.Hostname(), portOf(u), u.EscapedPath()); !ok {
		return &NotAllowedError{What: raw}
	}
	return nil
}

// ParseURL parses an endpoint URL a tenant wrote, refusing what no endpoint needs and what could
// smuggle something past a check: a user, a query, a fragment, control characters, a
// missing host.
func ParseURL(raw string) (*url.URL, error) {
	if !printable(raw) {
		return nil, &NotAllowedError{What: strconv.Quote(raw), Why: "it holds a control character"}
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, &NotAllowedError{What: raw, Why: "it is not a URL"}
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, &NotAllowedError{What: raw, Why: "it must be an http:// or https:// URL"}
	case u.Host == "" || u.Hostname() == "":
		return nil, &NotAllowedError{What: raw, Why: "it has no host"}
	case u.User != nil:
		return nil, &NotAllowedError{What: raw, Why: "it may not carry a user or password"}
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, &NotAllowedError{What: raw, Why: "it may not have a query or a fragment"}
	}
	return u, nil
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return defaultPort(u.Scheme)
}

// match finds the rule that allows a URL of scheme, host, port and path.
func (a Allowlist) match(scheme, host, port, path string) (rule, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	path = strings.TrimSuffix(path, "/")
	for _, r := range a.rules {
		if r.scheme == scheme && r.hostMatches(host) && r.portMatches(port) && r.pathMatches(path) {
			return r, true
		}
	}
	return rule{}, false
}

func (r rule) hostMatches(host string) bool {
	if r.wildcard {
		return strings.HasSuffix(host, "."+r.host)
	}
	return host == r.host
}

func (r rule) portMatches(port string) bool { return r.port == "*" || r.port == port }

func (r rule) pathMatches(path string) bool {
	if r.path == "" {
		return true
	}
	return path == r.path || strings.HasPrefix(path, r.path+"/")
}

// Set adds the comma-separated patterns of one flag value: an Allowlist is a flag.Value, and
// the manager and the COSI driver read it the same way. The flag may be given more than once.
func (a *Allowlist) Set(list string) error {
	more, err := ParseList(list)
	if err != nil {
		return err
	}
	a.rules = append(a.rules, more.rules...)
	return nil
}

// EndpointsFlag and NotificationEndpointsFlag name the flags that set the two lists, as the
// manager and the COSI driver take them and as messages point to them.
const (
	EndpointsFlag             = "allowed-endpoints"
	NotificationEndpointsFlag = "allowed-notification-endpoints"
)

// EndpointsUsage and NotificationEndpointsUsage are the flags' help.
const (
	EndpointsUsage = "S3 endpoints a tenant may name for an account of its own (Contract spec.credentials), as URL patterns " +
		"scheme://host[:port][/path], comma-separated or repeated: https://*.amazonaws.com, https://minio.example.com:9000. " +
		"A host matched by a wildcard is reached only on a public address; name an in-cluster or private host exactly. " +
		"Empty (the default) allows none. Endpoints the contract API reports for the accounts it sells need no listing."
	NotificationEndpointsUsage = "URLs a Bucket's notifications may push events to, as URL patterns like " + EndpointsFlag +
		"'s: https://events.example.com/hooks. Empty (the default) allows none."
)
