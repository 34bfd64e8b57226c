package operator

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// AllowInsecureHTTPFlag is the name of the flag (cmd/manager) that accepts a plain http
// contract API URL to another machine; the error names it, so the way out is in the message.
const AllowInsecureHTTPFlag = "contract-api-allow-insecure-http"

// checkContractAPIURL refuses a contract API URL the operator cannot use, or would send its
// bearer token and the contracts' secret keys over in the clear: a plain http URL whose host
// is not a loopback address (127.0.0.0/8, ::1 or localhost), unless allowInsecureHTTP.
func checkContractAPIURL(raw string, allowInsecureHTTP bool) error {
	if raw == "" {
		return fmt.Errorf("the contract API URL is not set (--contract-api-url)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the contract API URL (--contract-api-url) %q: %w", raw, err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("the contract API URL (--contract-api-url) %q is not an https:// or http:// URL with a host", raw)
	}
	if u.Scheme == "http" && !allowInsecureHTTP && !isLoopback(u.Hostname()) {
		return fmt.Errorf("the contract API URL (--contract-api-url) %s is plain http to %s, which is not this machine: "+
			"the bearer token and every secret key the API returns would cross the network unencrypted. "+
			"Use https, or set --%s to accept that", raw, u.Hostname(), AllowInsecureHTTPFlag)
	}
	return nil
}

// isLoopback reports whether host names this machine only: a loopback IP, or localhost.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
