package v1alpha1

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/testenv"
	osmwebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook"
	storagewebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook/storage/v1alpha1"
)

// The suite installs config/webhook into a real API server and serves the webhooks from a
// manager in this process, so every request goes kubectl's way: API server, webhook, API server.
// The storage webhooks are served too: config/webhook holds them, and the specs make the
// Contracts and Buckets that Applications link.
var (
	testEnv     *envtest.Environment
	k8sClient   client.Client
	stopManager context.CancelFunc
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PaaS webhooks")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	root, err := testenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	env, restCfg, err := testenv.StartControlPlane(testenv.ControlPlaneOptions{
		WebhookPaths: []string{filepath.Join(root, "config", "webhook")},
	})
	Expect(err).NotTo(HaveOccurred())
	testEnv = env

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(storagev1alpha1.AddToScheme(scheme)).To(Succeed())
	Expect(paasv1alpha1.AddToScheme(scheme)).To(Succeed())
	k8sClient, err = client.New(restCfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	wio := &testEnv.WebhookInstallOptions
	Expect(wio.LocalServingHost).To(Equal("127.0.0.1"))
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 scheme,
		WebhookServer:          webhook.NewServer(osmwebhook.ServerOptions(wio.LocalServingCertDir, wio.LocalServingPort, wio.LocalServingHost, false)),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(storagewebhook.SetupWebhooksWithManager(mgr)).To(Succeed())
	Expect(SetupWebhooksWithManager(mgr)).To(Succeed())

	ctx, cancel := context.WithCancel(context.Background())
	stopManager = cancel
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()

	addr := net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort))
	Eventually(func() error {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only probing that it listens
		if err != nil {
			return err
		}
		return conn.Close()
	}).Should(Succeed())
})

var _ = AfterSuite(func() {
	if stopManager != nil {
		stopManager()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// kubectlMessage renders an Invalid error as `kubectl apply` prints it: one line per field error
// when there are several.
func kubectlMessage(err error) string {
	GinkgoHelper()
	var status apierrors.APIStatus
	Expect(errors.As(err, &status)).To(BeTrue(), "not an API status: %v", err)
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "not Invalid: %v", err)
	d := status.Status().Details
	Expect(d).NotTo(BeNil())
	prefix := fmt.Sprintf("The %s %q is invalid: ", d.Kind, d.Name)
	var lines []string
	for _, c := range d.Causes {
		lines = append(lines, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	if len(lines) == 1 {
		return prefix + lines[0]
	}
	return prefix + "\n* " + strings.Join(lines, "\n* ")
}
