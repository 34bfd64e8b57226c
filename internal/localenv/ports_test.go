package localenv

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortIsBelowTheEphemeralRangeAndBindable(t *testing.T) {
	low, ok := ephemeralLow()
	if !ok || low <= minFreePort+1000 {
		t.Fatalf("this machine's ephemeral range starts at %d (%v): the test needs Linux with the usual range", low, ok)
	}
	for range 20 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < minFreePort || port >= low {
			t.Fatalf("port %d: want one in [%d, %d), which no outgoing connection can take", port, minFreePort, low)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		_ = l.Close()
	}
}

func TestFreePortNeverHandsOutAPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
}
