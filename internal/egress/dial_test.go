package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestInternalAddresses(t *testing.T) {
	for _, c := range []struct {
		ip       string
		internal bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.96.0.1", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fd00::1", true}, {"0.0.0.0", true}, {"::", true},
		{"100.64.0.1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:169.254.169.254", true}, {"64:ff9b::a9fe:a9fe", true},
		{"224.0.0.1", true}, {"255.255.255.255", true},
		{"52.95.110.1", false}, {"8.8.8.8", false}, {"2600:1f18::1", false},
	} {
		if got := Internal(netip.MustParseAddr(c.ip)); got != c.internal {
			t.Errorf("Internal(%s) = %v, want %v", c.ip, got, c.internal)
		}
	}
}

// A server on loopback, and a Dialer whose names resolve as the test says.
func dialerTo(t *testing.T, patterns string, names map[string]string) *Dialer {
	t.Helper()
	allow, err := ParseList(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return &Dialer{Allow: allow, Lookup: func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if ip, ok := names[host]; ok {
			return []netip.Addr{netip.MustParseAddr(ip)}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
}

func TestDialerConnectsOnlyWhereAllowedAfterDNS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	names := map[string]string{"s3.named.example": "127.0.0.1", "rebind.wild.example": "127.0.0.1", "metadata.wild.example": "169.254.169.254"}
	d := dialerTo(t, fmt.Sprintf("http://127.0.0.1:%[1]s, http://s3.named.example:%[1]s, http://*.wild.example:%[1]s", port), names)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []struct {
		addr string
		ok   bool
		why  string
	}{
		{"127.0.0.1:" + port, true, ""},
		{"s3.named.example:" + port, true, ""},            // named: may be internal
		{"rebind.wild.example:" + port, false, "private"}, // a wildcard's name on loopback
		{"metadata.wild.example:" + port, false, "private"},
		{"127.0.0.1:1", false, "not on the platform's list"},
		{"localhost:" + port, false, "not on the platform's list"},
	} {
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if conn != nil {
			_ = conn.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("DialContext(%s) = %v, want allowed %v", c.addr, err, c.ok)
			continue
		}
		if err != nil && (!errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), c.why)) {
			t.Errorf("DialContext(%s) = %q, want ErrNotAllowed saying %q", c.addr, err, c.why)
		}
	}
}

func TestClientFollowsNoRedirectToAnotherHost(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"internal":"secret"}`)
	}))
	defer target.Close()
	var redirector *httptest.Server
	redirector = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, redirector.URL+"/final", http.StatusFound)
		case "/final":
			_, _ = io.WriteString(w, "same host")
		case "/loop":
			http.Redirect(w, r, redirector.URL+"/loop", http.StatusFound)
		default:
			http.Redirect(w, r, target.URL+"/metadata", http.StatusFound)
		}
	}))
	defer redirector.Close()
	c := NewClient(ClientConfig{Timeout: 5 * time.Second})

	resp, err := c.Get(redirector.URL + "/same")
	if err != nil {
		t.Fatalf("a redirect to the same host: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(body) != "same host" {
		t.Errorf("a redirect to the same host read %q", body)
	}
	for _, path := range []string{"/elsewhere", "/loop"} {
		resp, err := c.Get(redirector.URL + path)
		if err == nil {
			_ = resp.Body.Close()
			t.Errorf("GET %s followed the redirect", path)
			continue
		}
		if !errors.Is(err, ErrRedirect) || !Refused(err) {
			t.Errorf("GET %s = %v, want ErrRedirect", path, err)
		}
	}
}

func TestAnswersAreReadUpToTheirLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 100
		if r.URL.Path == "/big" {
			n = 101
		}
		if r.URL.Query().Has("chunked") {
			w.(http.Flusher).Flush() // no Content-Length: only reading finds the size
		}
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	defer srv.Close()
	c := NewClient(ClientConfig{Timeout: 5 * time.Second, MaxAnswer: 100})
	for _, c := range []struct {
		client *http.Client
		path   string
		ctx    context.Context
		ok     bool
	}{
		{c, "/exact", context.Background(), true},
		{c, "/exact?chunked", context.Background(), true},
		{c, "/big", context.Background(), false},
		{c, "/big?chunked", context.Background(), false},
		{c, "/big", WithAnswerLimit(context.Background(), 200), true},
		{c, "/exact", WithAnswerLimit(context.Background(), 50), false},
	} {
		req, _ := http.NewRequestWithContext(c.ctx, http.MethodGet, srv.URL+c.path, nil)
		resp, err := c.client.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("GET %s = %v, want read whole %v", c.path, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrAnswerTooLarge) {
			t.Errorf("GET %s = %v, want ErrAnswerTooLarge", c.path, err)
		}
	}
}

func TestClientWithAnAllowlistRefusesBeforeConnecting(t *testing.T) {
	allow, err := ParseList("https://s3.example.com")
	if err != nil {
		t.Fatal(err)
	}
	connected := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { connected = true }))
	defer srv.Close()
	c := NewClient(ClientConfig{Allow: &allow, Timeout: 5 * time.Second})
	resp, err := c.Get(srv.URL)
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, ErrNotAllowed) || connected {
		t.Errorf("GET %s = %v (connected %v), want ErrNotAllowed without connecting", srv.URL, err, connected)
	}
}
