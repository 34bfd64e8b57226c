// Package netns makes the network namespace that make dev's real node lives in, and the TCP
// forwards that join it to this machine's loopback, so the node's bridge, routes, ip_forward and
// iptables rules never touch the host's network.
//
// A Namespace is named (ip netns add): its file under /run/netns is what the node's processes
// enter (nsenter --net=...), and what Delete removes, taking with it every interface, route and
// rule made inside. Nothing is added to the host's side: no veth, no route, no rule. What crosses
// goes through Forward, a small proxy with one end on each side, each socket opened in its own
// namespace by a goroutine locked to an OS thread that entered it (setns).
package netns

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// runDir is where ip netns keeps its names: a bind mount of each namespace.
const runDir = "/run/netns"

// Namespace is a named network namespace.
type Namespace struct {
	Name string
}

// Path is the namespace's file, for nsenter --net=PATH.
func (n Namespace) Path() string { return filepath.Join(runDir, n.Name) }

// Exists reports whether the namespace is there, as after an osm-dev that was killed.
func (n Namespace) Exists() bool {
	_, err := os.Stat(n.Path())
	return err == nil
}

// Create makes the namespace with its loopback up.
func Create(name string) (Namespace, error) {
	n := Namespace{Name: name}
	if err := run("ip", "netns", "add", name); err != nil {
		return n, err
	}
	if err := n.IP("link", "set", "lo", "up"); err != nil {
		_ = n.Delete()
		return n, err
	}
	return n, nil
}

// Delete removes the namespace. Its interfaces, routes and iptables rules go with it once no
// process holds it: the caller stops the processes inside first.
func (n Namespace) Delete() error {
	if !n.Exists() {
		return nil
	}
	return run("ip", "netns", "delete", n.Name)
}

// IP runs `ip ARGS...` inside the namespace.
func (n Namespace) IP(args ...string) error {
	return run("ip", append([]string{"-n", n.Name}, args...)...)
}

// Sysctl writes a sysctl under /proc/sys/net as seen from inside the namespace (those are kept
// per network namespace: net.ipv4.ip_forward there is not the host's).
func (n Namespace) Sysctl(key, value string) error {
	return n.Do(func() error {
		return os.WriteFile("/proc/sys/"+strings.ReplaceAll(key, ".", "/"), []byte(value), 0o644)
	})
}

// Command is cmd run inside the namespace: nsenter enters its network namespace only, so the
// program sees the host's files, mounts and cgroups as they are (ip netns exec would remount
// /sys, hiding the cgroup hierarchy the kubelet and runc need).
func (n Namespace) Command(bin string, args ...string) (string, []string) {
	return "nsenter", append([]string{"--net=" + n.Path(), "--", bin}, args...)
}

// Do runs f on an OS thread that has entered the namespace; sockets f opens stay in it.
func (n Namespace) Do(f func() error) error {
	target, err := os.Open(n.Path())
	if err != nil {
		return err
	}
	defer func() { _ = target.Close() }()
	return inNamespace(int(target.Fd()), f)
}

func inNamespace(fd int, f func() error) error {
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer func() { _ = self.Close() }()
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering the network namespace: %w", err)
	}
	ferr := f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays in the namespace: leave it locked, so it ends with this goroutine
		// instead of running other goroutines there.
		return errors.Join(ferr, fmt.Errorf("leaving the network namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return ferr
}

// Side is one end of a forward: an address in a namespace, or on the host when ns is nil.
type Side struct {
	NS   *Namespace
	Addr string
}

func (s Side) String() string {
	if s.NS == nil {
		return s.Addr + " (host)"
	}
	return s.Addr + " (netns " + s.NS.Name + ")"
}

func (s Side) listen() (net.Listener, error) {
	if s.NS == nil {
		return net.Listen("tcp", s.Addr)
	}
	var l net.Listener
	err := s.NS.Do(func() (err error) {
		l, err = net.Listen("tcp", s.Addr)
		return err
	})
	return l, err
}

func (s Side) dial(timeout time.Duration) (net.Conn, error) {
	if s.NS == nil {
		return net.DialTimeout("tcp", s.Addr, timeout)
	}
	var c net.Conn
	err := s.NS.Do(func() (err error) {
		c, err = net.DialTimeout("tcp", s.Addr, timeout)
		return err
	})
	return c, err
}

// A Forwarder accepts connections on one side and joins each to a new one to the other side.
type Forwarder struct {
	From, To Side
	l        net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
}

// Forward listens on from and forwards every connection to to, until Close.
func Forward(from, to Side) (*Forwarder, error) {
	l, err := from.listen()
	if err != nil {
		return nil, fmt.Errorf("forward %s → %s: %w", from, to, err)
	}
	f := &Forwarder{From: from, To: to, l: l, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	return f, nil
}

// Addr is where the forwarder listens (with port 0 asked, the one it got).
func (f *Forwarder) Addr() string { return f.l.Addr().String() }

func (f *Forwarder) serve() {
	defer f.wg.Done()
	for {
		in, err := f.l.Accept()
		if err != nil {
			return // closed
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			out, err := f.To.dial(5 * time.Second)
			if err != nil {
				_ = in.Close()
				return
			}
			if !f.track(in, out) {
				return
			}
			defer f.untrack(in, out)
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				// Half-close, so a request's end reaches the server while the answer flows back.
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go pipe(out, in)
			go pipe(in, out)
			<-done
			<-done
		}()
	}
}

// track records a pair of connections so Close can end them; false when already closed.
func (f *Forwarder) track(a, b net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		_, _ = a.Close(), b.Close()
		return false
	}
	f.conns[a], f.conns[b] = struct{}{}, struct{}{}
	return true
}

func (f *Forwarder) untrack(a, b net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = a.Close(), b.Close()
	delete(f.conns, a)
	delete(f.conns, b)
}

// Close stops listening, ends the connections in flight, and waits for them.
func (f *Forwarder) Close() error {
	err := f.l.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
	return err
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
