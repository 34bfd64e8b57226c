package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"sync"
	"time"
)

// Proxy is an HTTP proxy (CONNECT, and plain requests in absolute form) whose connections to
// addresses in Inside are opened inside the namespace, and to loopback addresses on the host.
// Anything else is refused: what goes through it stays on this machine. The API server reaches
// the kubelet and pods through it (its egress to the cluster), and so can a user's terminal:
//
//	curl -x http://127.0.0.1:PORT http://<a Service's cluster IP>/
type Proxy struct {
	// Inside are the ranges reached in the namespace: the pods', the node's, the Services'.
	Inside []netip.Prefix

	mu      sync.Mutex
	ns      *Namespace // nil while there is none: then only loopback is reached
	servers []*http.Server
}

// SetNamespace sets the namespace the Inside ranges are reached in; nil reaches loopback only.
func (p *Proxy) SetNamespace(ns *Namespace) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ns = ns
}

// Serve answers on l until Close.
func (p *Proxy) Serve(l net.Listener) {
	s := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	p.mu.Lock()
	p.servers = append(p.servers, s)
	p.mu.Unlock()
	go func() { _ = s.Serve(l) }()
}

// Close stops every listener and ends the tunnels in flight.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.servers {
		_ = s.Close()
	}
	p.servers = nil
	return nil
}

// Dial opens a connection to addr ("ip:port") on the side it belongs to.
func (p *Proxy) Dial(ctx context.Context, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: only IP addresses are reached through this proxy", addr)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	if ap.Addr().IsLoopback() {
		return d.DialContext(ctx, "tcp", addr)
	}
	p.mu.Lock()
	ns := p.ns
	p.mu.Unlock()
	for _, pfx := range p.Inside {
		if ns != nil && pfx.Contains(ap.Addr()) {
			var c net.Conn
			err := ns.Do(func() (err error) {
				c, err = d.DialContext(ctx, "tcp", addr)
				return err
			})
			return c, err
		}
	}
	return nil, fmt.Errorf("%s is neither loopback nor inside the node's network namespace", addr)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "this is a proxy: ask for an absolute URL, or CONNECT", http.StatusBadRequest)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.Out.URL = r.URL },
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return p.Dial(ctx, addr) },
		},
	}
	rp.ServeHTTP(w, r)
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	out, err := p.Dial(r.Context(), r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	defer func() { _ = out.Close() }()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cannot tunnel on this connection", http.StatusInternalServerError)
		return
	}
	in, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer func() { _ = in.Close() }()
	if _, err := in.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// What the client sent after its CONNECT may already sit in the buffer.
		_, _ = io.Copy(out, buf)
		if tc, ok := out.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(in, out)
		// The far end is done: closing the client's side ends the copy above too.
		_ = in.Close()
		done <- struct{}{}
	}()
	<-done
	<-done
}
