package paas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// The suite runs the operator's manager as it ships (Contract, Bucket and Application
// controllers) against a real API server, versitygw and the reference contract server. There is no kubelet or kube-controller-manager: specs set Deployment and
// CronJob status the way those controllers would.
var (
	stk *stack.Stack
	k8s client.Client
	// cached is the manager's own client, whose cache has the field indexes.
	cached client.Client
)

func TestPaasControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PaaS controllers")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	var err error
	stk, err = stack.Start(ctx, stack.Options{})
	Expect(err).NotTo(HaveOccurred())
	k8s = stk.Client

	// The operator as it ships: the Application controller runs next to the storage ones, as
	// started with --ingress-domains=example.com,localhost --ingress-class=public.
	stk.ManagerOptions.IngressDomains = []string{"example.com", "localhost"}
	stk.ManagerOptions.IngressClass = "public"
	Expect(stk.StartManager()).To(Succeed())
	cached = stk.ManagerClient
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if stk != nil {
		stk.Stop()
	}
})

// newNamespace creates a namespace of its own for one spec.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "app-test-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// readyContract creates a Contract and waits until it is Ready.
func readyContract(ctx context.Context, ns, name string) *storagev1alpha1.Contract {
	GinkgoHelper()
	c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
	Expect(k8s.Create(ctx, c)).To(Succeed())
	waitCondition(ctx, c, func() []metav1.Condition { return c.Status.Conditions }, storagev1alpha1.ReadyCondition,
		metav1.ConditionTrue, storagev1alpha1.ReasonAvailable)
	return c
}

// newBucket creates a Bucket named name, for bucket "<name>-<ns>", under contract.
func newBucket(ctx context.Context, ns, name, contract string) *storagev1alpha1.Bucket {
	GinkgoHelper()
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: storagev1alpha1.BucketSpec{BucketName: name + "-" + ns, ContractName: contract}}
	Expect(k8s.Create(ctx, b)).To(Succeed())
	return b
}

func readyBucket(ctx context.Context, ns, name, contract string) *storagev1alpha1.Bucket {
	GinkgoHelper()
	b := newBucket(ctx, ns, name, contract)
	waitCondition(ctx, b, func() []metav1.Condition { return b.Status.Conditions }, storagev1alpha1.ReadyCondition,
		metav1.ConditionTrue, storagev1alpha1.ReasonAvailable)
	return b
}

func newApp(ns, name string, mutate ...func(*paasv1alpha1.ApplicationSpec)) *paasv1alpha1.Application {
	app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1.0"}}
	for _, m := range mutate {
		m(&app.Spec)
	}
	return app
}

func appConds(app *paasv1alpha1.Application) func() []metav1.Condition {
	return func() []metav1.Condition { return app.Status.Conditions }
}

// waitCondition waits until obj's condition typ has the status and reason, for obj's current
// generation, and returns it.
func waitCondition(ctx context.Context, obj client.Object, conds func() []metav1.Condition, typ string,
	status metav1.ConditionStatus, reason string) metav1.Condition {
	GinkgoHelper()
	var got metav1.Condition
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		c := meta.FindStatusCondition(conds(), typ)
		g.Expect(c).NotTo(BeNil(), "no %s condition yet", typ)
		g.Expect(c.Status).To(Equal(status), "%s: %s: %s", typ, c.Reason, c.Message)
		g.Expect(c.Reason).To(Equal(reason), "%s message: %s", typ, c.Message)
		g.Expect(c.ObservedGeneration).To(Equal(obj.GetGeneration()))
		got = *c
	}).Should(Succeed())
	return got
}

// appCondition waits until the Application's condition typ has the status and reason.
func appCondition(ctx context.Context, app *paasv1alpha1.Application, typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	GinkgoHelper()
	return waitCondition(ctx, app, appConds(app), typ, status, reason)
}

// makeAvailable sets the Deployment's status as the Deployment controller would once its pods
// are available.
func makeAvailable(ctx context.Context, app *paasv1alpha1.Application) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
		n := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation,
			Replicas:           n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
			Conditions: []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}},
		}
		g.Expect(k8s.Status().Update(ctx, d)).To(Succeed())
	}).Should(Succeed())
	return d
}

// updateApp changes an Application's spec, retrying on conflicts.
func updateApp(ctx context.Context, app *paasv1alpha1.Application, change func(*paasv1alpha1.ApplicationSpec)) {
	GinkgoHelper()
	Eventually(func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		change(&app.Spec)
		return k8s.Update(ctx, app)
	}).Should(Succeed())
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

// credentials reads the Contract's Secret as the test's own evidence of what must never leak:
// workloads get BucketAccesses' keys, never the account's.
func credentials(ctx context.Context, ns string, c *storagev1alpha1.Contract) (keyID, secretKey string) {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.SecretName}, s)).To(Succeed())
	keyID, secretKey = string(s.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(s.Data[storagev1alpha1.SecretKeySecretAccessKey])
	Expect(keyID).NotTo(BeEmpty())
	Expect(secretKey).NotTo(BeEmpty())
	return keyID, secretKey
}

// accessReady waits until the BucketAccess ns/name is Ready for its generation, with a key in
// its Secret, and returns it.
func accessReady(ctx context.Context, ns, name string) *storagev1alpha1.BucketAccess {
	GinkgoHelper()
	ba := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	waitCondition(ctx, ba, func() []metav1.Condition { return ba.Status.Conditions }, storagev1alpha1.ReadyCondition,
		metav1.ConditionTrue, storagev1alpha1.ReasonAvailable)
	Expect(ba.Status.SecretName).To(Equal(name + "-credentials"))
	Expect(ba.Status.AccessKeyID).NotTo(BeEmpty())
	return ba
}

// expectNoSecret fails when any of objs, serialised, contains one of the values.
func expectNoSecret(objs []any, values ...string) {
	GinkgoHelper()
	for _, o := range objs {
		raw, err := json.Marshal(o)
		Expect(err).NotTo(HaveOccurred())
		for _, v := range values {
			Expect(strings.Contains(string(raw), v)).To(BeFalse(), "a credential appears in %T", o)
		}
	}
}

// namespaceEvents lists the events recorded in ns.
func namespaceEvents(ctx context.Context, ns string) *eventsv1.EventList {
	GinkgoHelper()
	list := &eventsv1.EventList{}
	Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	return list
}

// reconciles is how many times the Application controller has reconciled, from the manager's
// metrics.
func reconciles() float64 {
	GinkgoHelper()
	families, err := crmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var total float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "application" {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
