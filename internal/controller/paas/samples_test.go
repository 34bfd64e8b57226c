package paas_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// applySamples creates every object in the files under config/samples, in order, as
// `kubectl apply -f` would on a fresh namespace.
func applySamples(ctx SpecContext, files ...string) {
	GinkgoHelper()
	root, err := localenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, "config", "samples", f))
		Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			obj := &unstructured.Unstructured{}
			err := dec.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			Expect(err).NotTo(HaveOccurred(), f)
			if len(obj.Object) == 0 {
				continue
			}
			Expect(k8s.Create(ctx, obj)).To(Succeed(), "%s: %s %s", f, obj.GetKind(), obj.GetName())
		}
	}
}

var _ = Describe("The Application sample", func() {
	It("becomes Ready once its Deployment is available", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})).To(Succeed())
		applySamples(ctx, "00-contract.yaml", "paas_v1alpha1_application.yaml")

		app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "photos"}}
		appCondition(ctx, app, paasv1alpha1.BucketsReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady)
		appCondition(ctx, app, paasv1alpha1.BackupScheduledCondition, metav1.ConditionTrue, paasv1alpha1.ReasonScheduled)
		appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing)
		Expect(app.Status.URL).To(Equal("http://photos.demo.localhost"))

		makeAvailable(ctx, app)
		ready := appCondition(ctx, app, paasv1alpha1.ReadyCondition, metav1.ConditionTrue, paasv1alpha1.ReasonAvailable)
		Expect(ready.Message).To(Equal("Deployment photos has 2 of 2 replicas available"))
	})
})
