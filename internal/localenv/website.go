package localenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// GetWebsite fetches path from a bucket's website at endpoint (a status.websiteEndpoint such
// as http://photos.localhost:17072), as a browser would: the name under .localhost is dialled
// at 127.0.0.1, whatever the resolver makes of it, and sent as the Host header. It returns the
// status code and the body.
func GetWebsite(ctx context.Context, endpoint, path string) (int, string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return 0, "", err
	}
	if !strings.HasSuffix(u.Hostname(), ".localhost") {
		return 0, "", fmt.Errorf("website endpoint %s is not under .localhost", endpoint)
	}
	loopback := net.JoinHostPort("127.0.0.1", u.Port())
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	c := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, loopback)
		}},
		// A redirect is an answer of the website's own (routing rules), not something to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body), err
}
