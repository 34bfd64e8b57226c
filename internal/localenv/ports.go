package localenv

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// FreePort returns a TCP port on 127.0.0.1 that is free and reserved for this process: while it
// lives, FreePort hands the port out nowhere else, in this process or in any other.
//
// Being free now is not enough. A server is handed its port long before it binds it (osm-dev
// builds its binaries and starts the stack in order, for tens of seconds; the manager binds its
// webhook port last), and meanwhile test packages, osm-dev instances and their stacks all pick
// ports at once. The port is taken below the kernel's ephemeral range where it can, because a
// port from that range may become the source port of any outgoing connection in that time.
func FreePort() (int, error) {
	if low, ok := ephemeralLow(); ok && low > minFreePort+1000 {
		for range 100 {
			port := minFreePort + rand.IntN(low-minFreePort)
			if reserve(port) && bindable(port) {
				return port, nil
			}
		}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if reserve(port) {
			return port, nil
		}
	}
	return 0, errors.New("finding a free port: every port tried is reserved by a process of the harness")
}

// minFreePort is the lowest port FreePort hands out, above the well-known and most registered
// servers' ports.
const minFreePort = 20000

func bindable(port int) bool {
	l, err := net.Listen("tcp", hostPort(port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// reservations are this process's ports. Other processes see them as write locks on byte `port`
// of one shared file, which the kernel drops when the process ends, however it ends: no
// reservation outlives its owner, and there is nothing to clean up.
var reservations struct {
	sync.Mutex
	ports  map[int]bool
	file   *os.File // nil when the file cannot be opened: reservations are then this process's only
	opened bool
}

// reserve takes port for this process, and says whether it could.
func reserve(port int) bool {
	r := &reservations
	r.Lock()
	defer r.Unlock()
	if r.ports[port] {
		return false
	}
	if !r.opened {
		r.opened = true
		r.ports = map[int]bool{}
		// Per user, so that nobody else's file (or its permissions) is in the way. The file is
		// never closed: closing any descriptor of it would drop all of this process's locks.
		name := filepath.Join(os.TempDir(), "osm-ports-"+strconv.Itoa(os.Getuid())+".lock")
		if f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
			r.file = f
		}
	}
	if r.file != nil {
		lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: int64(port), Len: 1}
		err := syscall.FcntlFlock(r.file.Fd(), syscall.F_SETLK, &lock)
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return false // another process holds it
		}
		// Any other error means locks do not work here (a file system without them): fall back
		// to this process's own reservations rather than refuse every port.
	}
	r.ports[port] = true
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux only).
func ephemeralLow() (int, bool) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	return low, err == nil
}
