package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// Dialer connects only to hosts and ports its Allowlist allows, and only to addresses they may
// reach once resolved: a host the list names may be anywhere, a host matched by a wildcard only
// on a public address. The address it checked is the one it connects to, so a name that
// resolves again to somewhere else (DNS rebinding) changes nothing.
type Dialer struct {
	Allow Allowlist
	// Lookup resolves a name; nil is net.DefaultResolver's LookupNetIP.
	Lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// Dial connects to a checked address; nil is a net.Dialer's.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// proxies are the HTTP proxies the environment names: the platform's, so reachable.
	proxies map[string]bool
}

// DialContext is net.Dialer.DialContext, held to the Allowlist.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &NotAllowedError{What: addr, Why: "it is not host:port"}
	}
	named, ok := d.Allow.matchHostPort(host, port)
	if d.proxies[strings.ToLower(addr)] {
		named, ok = true, true
	}
	if !ok {
		return nil, &NotAllowedError{What: addr}
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	dial := d.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var errs []error
	for _, ip := range addrs {
		if !named && Internal(ip) {
			errs = append(errs, &NotAllowedError{What: addr, Why: "its name resolves to a private, loopback or link-local address, " +
				"which only an endpoint the platform lists by its own name (not by a wildcard) may reach"})
			continue
		}
		conn, err := dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (d *Dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	lookup := d.Lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	return lookup(ctx, "ip", host)
}

// matchHostPort finds whether a connection to host:port is allowed, and whether the host is
// named by a rule (rather than matched by a wildcard). A name one label under a named host is
// allowed as a wildcard would be: that is how S3 addresses a bucket virtual-hosted style
// (<bucket>.s3.eu-west-1.amazonaws.com).
func (a Allowlist) matchHostPort(host, port string) (named, ok bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	_, parent, _ := strings.Cut(host, ".")
	for _, r := range a.rules {
		if !r.portMatches(port) {
			continue
		}
		switch {
		case !r.wildcard && r.host == host:
			return true, true
		case r.hostMatches(host), !r.wildcard && parent != "" && r.host == parent && net.ParseIP(r.host) == nil:
			ok = true
		}
	}
	return false, ok
}

// reservedPrefixes are the addresses, besides those netip classifies (loopback, private,
// link-local, multicast, unspecified), that are no public host's: shared address space (which
// some clusters give pods), this network, documentation, benchmarking, reserved, and the IPv6
// translations of IPv4 addresses.
var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// Internal reports whether ip is not a public host's address: loopback, private (RFC 1918, IPv6
// unique local), link-local (cloud metadata services answer on 169.254.169.254), multicast,
// unspecified, or reserved. A cluster's pod and service networks are among these.
func Internal(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// proxyFor is the environment's proxy for a request (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), read
// once, and the proxies' host:port, which a Dialer lets through: a proxy is the platform's. A
// request that goes through a proxy is checked against allow here, by host and port, since the
// Dialer then sees only the proxy; the proxy resolves the name, and applies the platform's own
// rules to where it leads.
func proxyFor(allow *Allowlist) (func(*http.Request) (*url.URL, error), map[string]bool) {
	cfg := httpproxy.FromEnvironment()
	proxies := map[string]bool{}
	for _, p := range []string{cfg.HTTPProxy, cfg.HTTPSProxy} {
		if u, err := url.Parse(p); err == nil && p != "" && u.Host != "" {
			host := u.Host
			if u.Port() == "" {
				host = net.JoinHostPort(u.Hostname(), defaultPort(u.Scheme))
			}
			proxies[strings.ToLower(host)] = true
		}
	}
	proxy := cfg.ProxyFunc()
	return func(req *http.Request) (*url.URL, error) {
		via, err := proxy(req.URL)
		if err != nil || via == nil || allow == nil {
			return via, err
		}
		if _, ok := allow.matchHostPort(req.URL.Hostname(), portOf(req.URL)); !ok {
			return nil, &NotAllowedError{What: req.URL.Host}
		}
		return via, nil
	}, proxies
}
