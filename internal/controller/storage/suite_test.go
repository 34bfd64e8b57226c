package storage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// The suite runs the operator as it ships against a real API server, a real versitygw and the
// reference contract server, and watches resources the way a user would.
var (
	stk   *stack.Stack
	k8s   client.Client
	api   contractapi.ClientWithResponsesInterface
	calls = newS3Calls()
)

// versioned is a second versitygw, with versioning, that tenants may name (spec.credentials):
// the suite's own has none.
var versioned *localenv.VersityGW

// resyncPeriod is short here so that drift and steady-state specs see several resyncs.
const resyncPeriod = time.Second

func TestStorageControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Storage controllers")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	var err error
	// versitygw logs every request it serves, so a spec can check at the server what was written.
	s3AccessLog = filepath.Join(GinkgoT().TempDir(), "versitygw-access.log")
	stk, err = stack.Start(ctx, stack.Options{S3AccessLog: s3AccessLog})
	Expect(err).NotTo(HaveOccurred())
	k8s = stk.Client
	api, err = contractapi.NewClientWithResponses(stk.ContractAPI.URL, contractapi.WithBearerToken(stk.ContractAPI.Token))
	Expect(err).NotTo(HaveOccurred())
	stk.ManagerOptions.ResyncPeriod = resyncPeriod
	stk.ManagerOptions.S3APIOptions = append(stk.ManagerOptions.S3APIOptions, calls.middleware)
	// The platform of this suite also lists a port nothing listens on: an allowed endpoint
	// that does not answer.
	Expect(stk.ManagerOptions.AllowedEndpoints.Set(deadEndpoint)).To(Succeed())
	versioned, err = localenv.StartVersityGW(ctx, localenv.VersityGWOptions{Dir: GinkgoT().TempDir(), Versioning: true})
	Expect(err).NotTo(HaveOccurred())
	Expect(stk.ManagerOptions.AllowedEndpoints.Set(versioned.Endpoint)).To(Succeed())
	Expect(stk.StartManager()).To(Succeed())
}, NodeTimeout(3*time.Minute))

// deadEndpoint is on the suite's list of allowed endpoints, and nothing answers there.
const deadEndpoint = "http://127.0.0.1:1"

// s3AccessLog is versitygw's access log (AWS's server access log format).
var s3AccessLog string

// serverWrites are the operations that change something (Put, Create, Delete, Post) that
// versitygw logged for bucket after the first skip bytes of its log, and the log's size now.
func serverWrites(bucket string, skip int) (writes []string, size int) {
	GinkgoHelper()
	raw, err := os.ReadFile(s3AccessLog)
	Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(raw[min(skip, len(raw)):]), "\n") {
		// owner bucket [time] remote-ip requester request-id operation ...
		_, rest, ok := strings.Cut(line, "] ")
		head := strings.Fields(line)
		fields := strings.Fields(rest)
		if !ok || len(head) < 2 || head[1] != bucket || len(fields) < 4 {
			continue
		}
		op := strings.TrimPrefix(fields[3], "s3_")
		for _, w := range []string{"Put", "Create", "Delete", "Post"} {
			if strings.HasPrefix(op, w) {
				writes = append(writes, op)
			}
		}
	}
	return writes, len(raw)
}

var _ = AfterSuite(func() {
	if stk != nil {
		stk.Stop()
	}
	if versioned != nil {
		Expect(versioned.Stop()).To(Succeed())
	}
})

// newNamespace creates a namespace of its own for one spec, so specs never see each other's
// resources.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// readyCondition returns the Ready condition of obj as it is now on the API server.
func readyCondition(g Gomega, ctx context.Context, obj client.Object, conds func() []metav1.Condition) *metav1.Condition {
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	c := meta.FindStatusCondition(conds(), storagev1alpha1.ReadyCondition)
	g.Expect(c).NotTo(BeNil(), "no Ready condition yet")
	return c
}

// contractReady waits until the Contract is Ready.
func contractReady(ctx context.Context, c *storagev1alpha1.Contract) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cond := readyCondition(g, ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", cond.Reason, cond.Message)
		g.Expect(cond.ObservedGeneration).To(Equal(c.Generation))
	}).Should(Succeed())
}

// contractNotReady waits until the Contract's Ready condition is False for the given reason.
func contractNotReady(ctx context.Context, c *storagev1alpha1.Contract, reason string) *metav1.Condition {
	GinkgoHelper()
	var cond *metav1.Condition
	Eventually(func(g Gomega) {
		cond = readyCondition(g, ctx, c, func() []metav1.Condition { return c.Status.Conditions })
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse), "Ready: %s: %s", cond.Reason, cond.Message)
		g.Expect(cond.Reason).To(Equal(reason), "message: %s", cond.Message)
	}).Should(Succeed())
	return cond
}

func newContract(ns, name string, mutate ...func(*storagev1alpha1.Contract)) *storagev1alpha1.Contract {
	c := &storagev1alpha1.Contract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       storagev1alpha1.ContractSpec{Plan: "standard"},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

// gone waits until obj no longer exists.
func gone(ctx context.Context, obj client.Object) {
	GinkgoHelper()
	Eventually(func() error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if err == nil {
			return fmt.Errorf("%s still exists (finalizers %v)", obj.GetName(), obj.GetFinalizers())
		}
		return client.IgnoreNotFound(err)
	}).Should(Succeed())
}
