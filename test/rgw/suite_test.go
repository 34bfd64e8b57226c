package rgw_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

var (
	stk *stack.Stack
	k8s client.Client
)

func TestOperatorOnCephRGW(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Operator on Ceph RGW")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	var err error
	stk, err = stack.Start(ctx, stack.Options{RGW: true})
	Expect(err).NotTo(HaveOccurred())
	k8s = stk.Client
	stk.ManagerOptions.ResyncPeriod = time.Second
	Expect(stk.StartManager()).To(Succeed())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if stk != nil {
		stk.Stop()
	}
})

// ready waits until obj's Ready condition is True for its current generation.
func ready(ctx SpecContext, obj client.Object, conds func() []metav1.Condition) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		c := meta.FindStatusCondition(conds(), storagev1alpha1.ReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", c.Reason, c.Message)
		g.Expect(c.ObservedGeneration).To(Equal(obj.GetGeneration()))
	}).Should(Succeed())
}

func newNamespace(ctx SpecContext) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rgw-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// boughtAccount buys Contract name in ns, waits for it to be Ready, and returns an S3 client
// with the account's own keys, from its Secret.
func boughtAccount(ctx SpecContext, ns, name string) *s3.Client {
	GinkgoHelper()
	c := &storagev1alpha1.Contract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       storagev1alpha1.ContractSpec{Plan: "standard"},
	}
	Expect(k8s.Create(ctx, c)).To(Succeed())
	ready(ctx, c, func() []metav1.Condition { return c.Status.Conditions })
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, secret)).To(Succeed())
	return localenv.NewS3Client(c.Status.Endpoint, c.Status.Region,
		string(secret.Data["AWS_ACCESS_KEY_ID"]), string(secret.Data["AWS_SECRET_ACCESS_KEY"]))
}
