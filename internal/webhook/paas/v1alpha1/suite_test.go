package v1alpha1

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/object-storage-manager/object-storage-manager/internal/index"
	storagewebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

// The suite serves these webhooks to a real API server with config/webhook installed. The
// storage webhooks are served too: config/webhook holds them, and the specs make the Contracts
// and Buckets that Applications link.
var (
	server    *webhooktest.Server
	k8sClient client.Client
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PaaS webhooks")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	var err error
	// As a manager started with --ingress-domains=apps.example.com.
	// With the field indexes the manager registers, which the host check reads.
	server, err = webhooktest.Start(func(mgr ctrl.Manager) error {
		return storagewebhook.SetupWebhooksWithManager(mgr, storagewebhook.Options{})
	}, func(mgr ctrl.Manager) error {
		if err := index.Register(context.Background(), mgr.GetFieldIndexer()); err != nil {
			return err
		}
		return SetupWebhooksWithManager(mgr, []string{"apps.example.com"})
	})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = server.Client
})

var _ = AfterSuite(func() {
	if server != nil {
		Expect(server.Stop()).To(Succeed())
	}
})

// kubectlMessage is what `kubectl apply` prints for err.
func kubectlMessage(err error) string {
	GinkgoHelper()
	msg, renderErr := webhooktest.KubectlMessage(err)
	Expect(renderErr).NotTo(HaveOccurred())
	return msg
}
