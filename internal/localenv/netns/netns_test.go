package netns

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestForwardAndProxy: a server on a namespace's own loopback is reached from the host's through
// a Forward and through the Proxy; the Proxy refuses an address outside; deleting the namespace
// leaves the host's interfaces as they were. Needs root, as make dev's real node does.
func TestForwardAndProxy(t *testing.T) {
	before := ipLink(t)
	ns, err := Create(fmt.Sprintf("osm-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ns.Delete(); err != nil {
			t.Error(err)
		}
		if after := ipLink(t); after != before {
			t.Errorf("the host's interfaces changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	// A server inside, on an address only the namespace has (as the node's bridge has 10.244.0.1).
	for _, args := range [][]string{
		{"link", "add", "d0", "type", "bridge"}, {"addr", "add", "10.253.0.1/24", "dev", "d0"}, {"link", "set", "d0", "up"},
	} {
		if err := ns.IP(args...); err != nil {
			t.Fatal(err)
		}
	}
	var l net.Listener
	if err := ns.Do(func() (err error) { l, err = net.Listen("tcp", "10.253.0.1:0"); return err }); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "inside\n") })}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	inside := l.Addr().String()
	if c, err := net.DialTimeout("tcp", inside, time.Second); err == nil {
		_ = c.Close()
		t.Fatalf("%s answers on the host: the listener is not in the namespace", inside)
	}

	f, err := Forward(Side{Addr: "127.0.0.1:0"}, Side{NS: &ns, Addr: inside})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if got := get(t, http.DefaultClient, "http://"+f.Addr()+"/"); got != "inside\n" {
		t.Errorf("through the forward: %q, want %q", got, "inside\n")
	}

	// The proxy reaches a range it is told is inside.
	p := &Proxy{Inside: []netip.Prefix{netip.MustParsePrefix("10.253.0.0/24")}}
	p.SetNamespace(&ns)
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Serve(pl)
	t.Cleanup(func() { _ = p.Close() })
	proxyURL, _ := url.Parse("http://" + pl.Addr().String())
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	if got := get(t, c, "http://"+inside+"/"); got != "inside\n" {
		t.Errorf("through the proxy: %q, want %q", got, "inside\n")
	}
	// CONNECT, as the API server's egress uses it.
	conn, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", inside, inside); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT through the proxy: %v %v", resp, err)
	}
	if _, err := fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(br)
	if !strings.HasSuffix(string(all), "inside\n") {
		t.Errorf("GET through the CONNECT tunnel:\n%s", all)
	}
	// An address neither loopback nor inside is refused, without a connection.
	if _, err := p.Dial(context.Background(), "192.0.2.1:80"); err == nil {
		t.Error("the proxy dialled 192.0.2.1, outside the namespace's ranges")
	}
}

func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func ipLink(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ip", "link").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
