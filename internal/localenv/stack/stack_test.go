package stack_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// A suite whose set-up fails half-way (here: Ceph is not installed, after the control plane is
// up) gets an error and nothing left running: `make test` once returned with its etcd and
// kube-apiserver still there.
func TestStartThatFailsLeavesNothingRunning(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no ceph-mon, ceph-osd or radosgw to find
	s, err := stack.Start(context.Background(), stack.Options{RGW: true})
	if err == nil {
		s.Stop()
		t.Fatal("Start() with Ceph missing succeeded")
	}
	if !strings.Contains(err.Error(), "install Ceph") {
		t.Errorf("Start() error = %v, want it to say how to install Ceph", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		children, err := localenv.Children(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if len(children) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running after Start() failed: %v", children)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
