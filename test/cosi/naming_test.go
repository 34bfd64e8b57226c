package cosi_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cosiv1alpha1 "sigs.k8s.io/container-object-storage-interface-api/apis/objectstorage/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// With COSI's CRDs beside ours, `bucket` and `bucketaccess` name two kinds. kubectl resolves a
// bare name to one group by discovery; a discovery cache written before COSI was installed
// answers from what it knew. This pins what the docs promise: the qualified names and the osm
// category name ours whatever the cache holds, and kubectl osm, which asks for our group by
// kind, never reads COSI's.
func TestOurNamesBesideCOSI(t *testing.T) {
	ctx, g, stk := running(t, 4*time.Minute)
	k8s := kubeClient(g, stk)
	ns := namespace(ctx, g, k8s, "names-")
	contract := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
	g.Expect(k8s.Create(ctx, contract)).To(Succeed())
	bucket := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "photos"},
		Spec: storagev1alpha1.BucketSpec{BucketName: ns + "-photos", ContractName: contract.Name}}
	g.Expect(k8s.Create(ctx, bucket)).To(Succeed())
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKeyFromObject(bucket), bucket) == nil &&
			meta.IsStatusConditionTrue(bucket.Status.Conditions, storagev1alpha1.ReadyCondition)
	}).Should(BeTrue())

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(stk.WriteKubeconfig(kubeconfig)).To(Succeed())
	plugins := buildPlugin(g, dir)
	stale, fresh := filepath.Join(dir, "stale-cache"), filepath.Join(dir, "fresh-cache")
	kubectl := func(cache string, args ...string) (string, error) {
		// Flags after the verb: kubectl takes none before a plugin's name.
		full := append([]string{args[0], "--kubeconfig", kubeconfig, "--cache-dir", cache, "-n", ns}, args[1:]...)
		cmd := exec.CommandContext(ctx, "kubectl", full...)
		cmd.Env = append(os.Environ(), "PATH="+plugins+string(os.PathListSeparator)+os.Getenv("PATH"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	// The stale cache learns the API before COSI's CRDs are there.
	out, err := kubectl(stale, "get", "bucket", "photos", "-o", "jsonpath={.apiVersion}")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("storage.osm.dev/v1alpha1"))

	crds, err := localenv.COSICRDs()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(stk.Config, envtest.CRDInstallOptions{CRDs: crds})
	g.Expect(err).NotTo(HaveOccurred())

	theirs := &cosiv1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "cosi-" + ns},
		Spec: cosiv1alpha1.BucketSpec{DriverName: cosidriver.DefaultName, BucketClassName: "none",
			BucketClaim: &corev1.ObjectReference{Kind: "BucketClaim", Namespace: ns, Name: "none"},
			Protocols:   []cosiv1alpha1.Protocol{cosiv1alpha1.ProtocolS3}, DeletionPolicy: cosiv1alpha1.DeletionPolicyRetain}}
	g.Eventually(func() error { return k8s.Create(ctx, theirs) }).Should(Succeed())

	// The bare name is the trap the docs warn of: the same command names ours from the stale
	// cache and COSI's from a fresh one.
	for cache, want := range map[string]string{stale: "bucket.storage.osm.dev/photos", fresh: "bucket.objectstorage.k8s.io/" + theirs.Name} {
		out, err := kubectl(cache, "get", "bucket", "-o", "name")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(strings.TrimSpace(out)).To(Equal(want), "kubectl get bucket, with the %s", filepath.Base(cache))
	}
	for _, cache := range []string{stale, fresh} {
		out, err := kubectl(cache, "get", "buckets.storage.osm.dev", "photos", "-o", "jsonpath={.apiVersion}")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("storage.osm.dev/v1alpha1"))
		out, err = kubectl(cache, "get", "osm", "-o", "name")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(strings.Fields(out)).To(ConsistOf("contract.storage.osm.dev/team", "bucket.storage.osm.dev/photos"))
		out, err = kubectl(cache, "osm", "trace", "bucket/photos")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring("Bucket/photos"))
		g.Expect(out).To(ContainSubstring("Everything above is Ready."))
	}
}

// buildPlugin builds kubectl-osm into dir, for kubectl to find on PATH.
func buildPlugin(g Gomega, dir string) string {
	root, err := localenv.ModuleRoot()
	g.Expect(err).NotTo(HaveOccurred())
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-osm"), "./cmd/kubectl-osm")
	build.Dir = root
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "building cmd/kubectl-osm: %s", out)
	return dir
}
