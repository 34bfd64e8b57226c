package cosidriver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

func TestZZSmokeBinaryLease(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	dir := t.TempDir()
	root, _ := localenv.ModuleRoot()
	bin := filepath.Join(dir, "cosi-driver")
	b := exec.Command("go", "build", "-o", bin, "./cmd/cosi-driver")
	b.Dir = root
	out, err := b.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(env.stk.WriteKubeconfig(kubeconfig)).To(Succeed())
	start := func(name string) *exec.Cmd {
		c := exec.Command(bin, "--kubeconfig="+kubeconfig, "--socket="+filepath.Join(dir, name+".sock"), "--record-namespace="+env.records,
			"--contract-api-url="+env.stk.ManagerOptions.ContractAPIURL, "--contract-api-token-file="+env.stk.ManagerOptions.ContractAPITokenFile)
		f, _ := os.Create(filepath.Join(dir, name+".log"))
		c.Stdout, c.Stderr = f, f
		g.Expect(c.Start()).To(Succeed())
		return c
	}
	holder := func() string {
		var l coordinationv1.Lease
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: env.records, Name: "cosi.storage.osm.dev-writer"}, &l); err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	a := start("a")
	g.Eventually(holder).ShouldNot(BeEmpty())
	first := holder()
	b2 := start("b")
	g.Consistently(holder, 2*time.Second).Should(Equal(first))
	g.Expect(a.Process.Signal(syscall.SIGTERM)).To(Succeed())
	t0 := time.Now()
	g.Expect(a.Wait()).To(Succeed())
	g.Eventually(holder, 10*time.Second).ShouldNot(Or(Equal(first), BeEmpty()))
	t.Logf("handed over in %s", time.Since(t0))
	logA, _ := os.ReadFile(filepath.Join(dir, "a.log"))
	logB, _ := os.ReadFile(filepath.Join(dir, "b.log"))
	t.Logf("a:\n%s\nb:\n%s", logA, logB)
	_ = b2.Process.Signal(syscall.SIGTERM)
	g.Expect(b2.Wait()).To(Succeed())
}
