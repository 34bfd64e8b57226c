package localenv_test

import (
	"bufio"
	"fmt"
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
	if os.Getenv(helperEnv) == "control-plane" {
		os.Exit(startControlPlaneAndWait())
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

// A test process killed outright (a panic, `go test -timeout`, Ctrl-C) runs no clean-up code, and
// still leaves no etcd or kube-apiserver behind.
func TestControlPlaneStopsWhenItsTestProcessIsKilled(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=control-plane")
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
		if !ok {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("the helper could not start a control plane")
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the helper did not start a control plane within 2 minutes")
	}

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
