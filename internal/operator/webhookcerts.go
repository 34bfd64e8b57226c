package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Webhook certificate management modes (--webhook-cert-management).
const (
	// WebhookCertsExternal: tls.crt and tls.key in the cert directory come from elsewhere
	// (cert-manager's Secret mounted there, `make certs`, envtest).
	WebhookCertsExternal = "external"
	// WebhookCertsSelf: the manager makes its own CA and serving certificate, keeps them in a
	// Secret, renews them, and writes the CA into its webhook configurations' caBundle, so a
	// cluster needs no cert-manager.
	WebhookCertsSelf = "self"
)

// SelfManagedCerts says where the manager keeps its own webhook certificate and whom it serves.
type SelfManagedCerts struct {
	// Secret holds the CA and the serving certificate. It must exist (the installer ships it
	// empty): the manager updates it but may not create Secrets in its own namespace.
	Secret types.NamespacedName
	// Service is the webhook Service; the certificate names <service>.<namespace>.svc and
	// <service>.<namespace>.svc.cluster.local.
	Service string
	// ExtraDNSNames are further names the certificate is valid for (a webhook reached by URL).
	ExtraDNSNames []string
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration get the CA as caBundle.
	MutatingWebhookConfiguration, ValidatingWebhookConfiguration string
}

// Validate says what is missing or malformed, every problem at once.
func (c *SelfManagedCerts) Validate() error {
	var errs []error
	for flag, v := range map[string]string{
		"--webhook-namespace (or POD_NAMESPACE)": c.Secret.Namespace,
		"--webhook-cert-secret":                  c.Secret.Name,
		"--webhook-service":                      c.Service,
	} {
		if msgs := validation.IsDNS1123Label(v); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %q: %s", flag, v, strings.Join(msgs, "; ")))
		}
	}
	for flag, v := range map[string]string{
		"--mutating-webhook-configuration":   c.MutatingWebhookConfiguration,
		"--validating-webhook-configuration": c.ValidatingWebhookConfiguration,
	} {
		if msgs := validation.IsDNS1123Subdomain(v); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %q: %s", flag, v, strings.Join(msgs, "; ")))
		}
	}
	for _, name := range c.ExtraDNSNames {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--webhook-cert-extra-dns-names %q: %s", name, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// DNSNames are the names the serving certificate is valid for, the Service's first.
func (c *SelfManagedCerts) DNSNames() []string {
	svc := c.Service + "." + c.Secret.Namespace + ".svc"
	return append([]string{svc, svc + ".cluster.local"}, c.ExtraDNSNames...)
}

// addCertRotator makes mgr keep the webhook certificate in c.Secret (OPA's cert-controller, as
// Gatekeeper does) and closes ready once the certificate is in certDir and the CA is in both
// webhook configurations. The Secret reaches certDir as a volume, so in a cluster the kubelet
// writes the files; until then, and until the API server trusts the CA, the webhook server
// waits (gatedServer), so /readyz keeps a replica out of the Service.
func addCertRotator(mgr ctrl.Manager, c *SelfManagedCerts, certDir string, ready chan struct{}) error {
	names := c.DNSNames()
	return rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      c.Secret,
		CertDir:        certDir,
		CAName:         "object-storage-manager-webhook-ca",
		CAOrganization: "object-storage-manager",
		DNSName:        names[0],
		ExtraDNSNames:  names[1:],
		IsReady:        ready,
		Webhooks: []rotator.WebhookInfo{
			{Name: c.MutatingWebhookConfiguration, Type: rotator.Mutating},
			{Name: c.ValidatingWebhookConfiguration, Type: rotator.Validating},
		},
		// Every replica serves webhooks, so every replica needs the certificate, leader or not.
		RequireLeaderElection: false,
		FieldOwner:            "object-storage-manager",
	})
}

// gatedServer starts the webhook server only once ready is closed: controller-runtime's server
// reads its certificate files when it starts and fails if they are not there yet.
type gatedServer struct {
	webhook.Server
	ready <-chan struct{}
}

func (s gatedServer) Start(ctx context.Context) error {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil
	}
	ctrl.Log.WithName("webhook").Info("Webhook certificate ready; starting the webhook server")
	return s.Server.Start(ctx)
}
