package paas_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	It("becomes Ready once its Deployment is available, and its backup and restore work with their own keys", func(ctx SpecContext) {
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

		By("running the sample's backup and restore commands with the keys their pods get")
		awsCLI()
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), d)).To(Succeed())
		asApp := func(script string) {
			GinkgoHelper()
			out, err := runInPod(ctx, "demo", d.Spec.Template.Spec, "", []string{"sh", "-ec",
				`export AWS_ACCESS_KEY_ID="$PHOTOS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$PHOTOS_SECRET_ACCESS_KEY" AWS_ENDPOINT_URL="$PHOTOS_ENDPOINT"; ` + script})
			Expect(err).NotTo(HaveOccurred(), "%s: %s", script, out)
		}
		asApp(`echo cat > "$HOME/cat.jpg" && aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp --only-show-errors "$HOME/cat.jpg" "s3://$PHOTOS_BUCKET/originals/cat.jpg"`)
		cj := &batchv1.CronJob{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "photos-backup"}, cj)).To(Succeed())
		runAsPod(ctx, "demo", cj.Spec.JobTemplate.Spec.Template.Spec, "photos-backup-1")
		cj.Status.LastScheduleTime, cj.Status.LastSuccessfulTime = ptrTime(metav1.Now()), ptrTime(metav1.Now())
		Expect(k8s.Status().Update(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Backups).To(HaveLen(1))
			g.Expect(app.Status.Backups[0].Name).To(Equal("photos-backup-1"))
			g.Expect(app.Status.Backups[0].Objects).To(Equal(int64(1)))
		}).Should(Succeed())

		asApp(`aws --endpoint-url "$AWS_ENDPOINT_URL" s3 rm --only-show-errors "s3://$PHOTOS_BUCKET/originals/cat.jpg"`)
		patch := client.MergeFrom(app.DeepCopy())
		app.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "photos-backup-1"}
		Expect(k8s.Patch(ctx, app, patch)).To(Succeed())
		job := &batchv1.Job{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.Restore).NotTo(BeNil())
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "demo", Name: app.Status.Restore.Job}, job)).To(Succeed())
		}).Should(Succeed())
		runAsPod(ctx, "demo", job.Spec.Template.Spec, job.Name)
		asApp(`test "$(aws --endpoint-url "$AWS_ENDPOINT_URL" s3 cp --only-show-errors "s3://$PHOTOS_BUCKET/originals/cat.jpg" -)" = cat`)
	})
})
