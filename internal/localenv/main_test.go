package localenv_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// helperEnv makes this test binary, started again by a test, play a test process that starts a
// control plane and is then killed.
const helperEnv = "OSM_TESTENV_HELPER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(helperEnv); {
	case mode == "control-plane":
		os.Exit(startControlPlaneAndWait())
	case strings.HasPrefix(mode, "hold-port="):
		os.Exit(holdPortAndWait(strings.TrimPrefix(mode, "hold-port=")))
	}
	os.Exit(m.Run())
}

// startControlPlaneAndWait starts a control plane, says so, and waits to be killed (never stopping
// it itself, as a test that panics or is interrupted would not).
func startControlPlaneAndWait() int {
	if _, _, err := localenv.StartControlPlane(localenv.ControlPlaneOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	time.Sleep(3 * time.Minute) // bounded: the test kills it long before
	return 1
}

// holdPortAndWait reserves port, says so, and waits to be killed.
func holdPortAndWait(port string) int {
	p, err := strconv.Atoi(port)
	if err != nil || !localenv.Reserve(p) {
		fmt.Fprintf(os.Stderr, "cannot reserve port %s\n", port)
		return 1
	}
	fmt.Println("ready")
	time.Sleep(3 * time.Minute) // bounded: the test kills it long before
	return 1
}

// startHelper starts this test binary again as a helper in mode, and returns once it says it is
// ready. The caller kills it.
func startHelper(t *testing.T, mode string, within time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- strings.TrimSpace(line) == "ready"
	}()
	select {
	case ok := <-ready:
		if ok {
			return cmd
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the %s helper failed", mode)
	case <-time.After(within):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the %s helper was not ready within %s", mode, within)
	}
	return nil
}

// A port that another process of the harness reserved (a test binary, or an osm-dev that has not
// yet started the server it is for) is not handed out here, until that process ends.
func TestPortReservedByAnotherProcessIsNotHandedOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	holder := startHelper(t, "hold-port="+strconv.Itoa(port), 30*time.Second)
	if localenv.Reserve(port) {
		_ = holder.Process.Kill()
		t.Fatalf("port %d was reserved here while another process held it", port)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	if !localenv.Reserve(port) {
		t.Fatalf("port %d is still reserved after the process holding it ended", port)
	}
	if localenv.Reserve(port) {
		t.Fatalf("port %d reserved twice in one process", port)
	}
}

// A test process killed outright (a panic, `go test -timeout`, Ctrl-C) runs no clean-up code, and
// still leaves no etcd or kube-apiserver behind.
func TestControlPlaneStopsWhenItsTestProcessIsKilled(t *testing.T) {
	cmd := startHelper(t, "control-plane", 2*time.Minute)

	children, err := localenv.Children(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]int{}
	for _, c := range children {
		servers[c.Command] = c.PID
	}
	// Whatever this test finds, it leaves nothing running.
	t.Cleanup(func() {
		for _, pid := range servers {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, ok := servers[name]; !ok {
			t.Fatalf("no %s among the helper's children %v", name, children)
		}
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []string
		for name, pid := range servers {
			if running(pid) {
				alive = append(alive, fmt.Sprintf("%s (pid %d)", name, pid))
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			slices.Sort(alive)
			t.Fatalf("still running 10s after their test process was killed: %s", strings.Join(alive, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// running reports whether pid is a process that has not ended (a zombie has).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}
