package webhooktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	osmwebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook"
)

// Server is a real API server with config/webhook installed (envtest points the configurations
// at its own serving address and CA) and a manager in this process serving the webhooks, so
// every request goes kubectl's way: API server, webhook, API server.
type Server struct {
	// Client talks to the API server as an administrator.
	Client client.Client
	// Config is Client's: for a client of a test's own, such as one that records the warnings
	// kubectl would print.
	Config *rest.Config
	// Addr is where the webhooks are served, 127.0.0.1:PORT.
	Addr string
	// Cache is the manager's cached client, which the webhooks read: a test that needs a webhook
	// to see an object it just created waits until Cache has it.
	Cache client.Reader

	env    *envtest.Environment
	cancel context.CancelFunc
	done   chan error
}

// Start starts the API server and a manager on which each setup registers its webhooks, and
// waits until the webhook server answers.
func Start(setups ...func(ctrl.Manager) error) (*Server, error) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		return nil, err
	}
	env, cfg, err := localenv.StartControlPlane(localenv.ControlPlaneOptions{
		WebhookPaths: []string{filepath.Join(root, "config", "webhook")},
	})
	if err != nil {
		return nil, err
	}
	s := &Server{env: env, done: make(chan error, 1)}
	if err := s.start(cfg, setups); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(cfg *rest.Config, setups []func(ctrl.Manager) error) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, storagev1alpha1.AddToScheme, paasv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	s.Config = cfg
	var err error
	if s.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	wio := &s.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// The same server options the manager binary uses, with envtest's certificates and port.
		WebhookServer:          webhook.NewServer(osmwebhook.ServerOptions(wio.LocalServingCertDir, wio.LocalServingPort, wio.LocalServingHost, false)),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	s.Cache = mgr.GetClient()
	for _, setup := range setups {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- mgr.Start(ctx) }()

	s.Addr = net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort))
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := tls.Dial("tcp", s.Addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only probing that it listens
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook server did not answer on %s: %w", s.Addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the manager and the API server.
func (s *Server) Stop() error {
	var errs []error
	if s.cancel != nil {
		s.cancel()
		errs = append(errs, <-s.done)
	}
	errs = append(errs, s.env.Stop())
	return errors.Join(errs...)
}

// KubectlMessage renders an Invalid error as `kubectl apply` prints it (kubectl's
// cmdutil.StandardErrorMessage and MultilineError): from the status details the webhook
// returned, one line per field error when there are several.
func KubectlMessage(err error) (string, error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		return "", fmt.Errorf("not an Invalid API status: %v", err)
	}
	d := status.Status().Details
	if d == nil {
		return "", fmt.Errorf("an Invalid status without details: %v", err)
	}
	prefix := fmt.Sprintf("The %s %q is invalid: ", d.Kind, d.Name)
	var lines []string
	for _, c := range d.Causes {
		lines = append(lines, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	if len(lines) == 1 {
		return prefix + lines[0], nil
	}
	return prefix + "\n* " + strings.Join(lines, "\n* "), nil
}
