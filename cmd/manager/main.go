// Command manager runs the object-storage-manager controllers and webhooks.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	// Mozilla's roots, used only where the system has none: the release image holds nothing but
	// this binary, and the manager calls the contract API and S3 endpoints over HTTPS.
	_ "golang.org/x/crypto/x509roots/fallback"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/logging"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
	"github.com/object-storage-manager/object-storage-manager/internal/podendpoints"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
	"github.com/object-storage-manager/object-storage-manager/internal/version"
	storagewebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook/storage/v1alpha1"
)

func main() {
	var opts operator.Options
	flag.StringVar(&opts.ContractAPIURL, "contract-api-url", os.Getenv("OSM_CONTRACT_API_URL"),
		"URL of the provider's contract API.")
	flag.StringVar(&opts.ContractAPITokenFile, "contract-api-token-file", os.Getenv("OSM_CONTRACT_API_TOKEN_FILE"),
		"File holding the contract API's bearer token; read on every request, so it can be rotated in place.")
	flag.DurationVar(&opts.ContractAPITimeout, "contract-api-timeout", 30*time.Second,
		"Timeout of one contract API request.")
	flag.Var(&opts.AllowedEndpoints, egress.EndpointsFlag, egress.EndpointsUsage)
	flag.Var(&opts.AllowedNotificationEndpoints, egress.NotificationEndpointsFlag, egress.NotificationEndpointsUsage)
	flag.StringVar(&opts.OIDCIssuerURL, operator.OIDCIssuerURLFlag, os.Getenv("OSM_OIDC_ISSUER_URL"),
		"The cluster's ServiceAccount token issuer (the tokens' iss, kube-apiserver's --service-account-issuer), which the provider fetches the signing keys from: BucketAccesses with authentication ServiceAccount make their contract's account trust it. Empty (the default): such BucketAccesses are refused (Ready=False, AuthenticationUnsupported).")
	flag.StringVar(&opts.OIDCAudience, operator.OIDCAudienceFlag, operator.DefaultTokenAudience,
		"The audience workloads mint their ServiceAccount token for (a projected token's audience), which the provider checks; the Secret's OSM_TOKEN_AUDIENCE.")
	var thumbprints string
	flag.StringVar(&thumbprints, operator.OIDCThumbprintsFlag, os.Getenv("OSM_OIDC_THUMBPRINTS"),
		"With --oidc-issuer-url: comma-separated SHA-1 fingerprints (40 hex digits, 1 to 5) of the certificates serving the issuer's keys, as the provider's STS checks them.")
	flag.BoolVar(&opts.ContractAPIAllowInsecureHTTP, operator.AllowInsecureHTTPFlag, false,
		"Accept a plain http --contract-api-url to another machine, over which the bearer token and the secret keys cross the network unencrypted; without it only https, or http to a loopback address, is accepted.")
	flag.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", tuning.Workers,
		"How many resources of one kind are reconciled at once (32 did best of 16, 32 and 64 with 1,000 Buckets: docs/performance.md).")
	flag.DurationVar(&opts.ResyncPeriod, "resync-period", 10*time.Minute,
		"How often a Ready resource is checked against the provider even without a change (finds drift); a Bucket's period after a change, a correction or a failure.")
	flag.DurationVar(&opts.ResyncMaxPeriod, "resync-max-period", tuning.ResyncMaxPeriod,
		"The longest a calm Ready Bucket waits between checks while --resync-budget has room: each calm check doubles its period from --resync-period. Under --resync-period: every Bucket every --resync-period.")
	flag.Float64Var(&opts.ResyncBudget, "resync-budget", tuning.ResyncBudget,
		"Provider calls a second that checking Ready Buckets for drift may make in all; when the Buckets want more, their checks come later (osm_resync_oldest_check_age_seconds says how much). Changes, watches and retries are never held to it. 0: no limit.")
	flag.Float64Var(&opts.ResyncBudgetPerContract, "resync-budget-per-contract", tuning.ResyncBudgetPerContract,
		"The same, for the Buckets of one Contract, so one account's Buckets cannot take the whole --resync-budget. 0: no limit.")
	flag.DurationVar(&opts.S3Timeout, "s3-timeout", 30*time.Second,
		"Timeout of one S3 request.")
	flag.IntVar(&opts.S3MaxAttempts, "s3-max-attempts", 3,
		"How often the S3 client tries one call before the controller backs off.")
	flag.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", ":8443",
		"Address of the metrics endpoint; 0 turns it off. Served over HTTPS to callers allowed to get the /metrics URL.")
	flag.BoolVar(&opts.MetricsInsecure, "metrics-insecure", false,
		"Serve metrics over plain HTTP to anyone (for a local run only).")
	flag.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081",
		"Address of the health probes; 0 turns them off.")
	flag.StringVar(&opts.PprofBindAddress, "pprof-bind-address", "0",
		"Address serving Go's CPU and memory profiles at /debug/pprof/, unauthenticated: bind it to 127.0.0.1; 0 turns it off.")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false,
		"Use leader election, so only one replica reconciles at a time.")
	flag.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election lease when running outside a cluster.")
	var watchNamespaces string
	flag.StringVar(&watchNamespaces, "watch-namespaces", os.Getenv("OSM_WATCH_NAMESPACES"),
		"Comma-separated namespaces to serve; empty serves all. With a list, the manager needs its role only there (config/namespaced).")
	var ingressDomains string
	podEndpoints := flag.String(podendpoints.Flag, os.Getenv("OSM_POD_ENDPOINTS"), podendpoints.Usage)
	flag.StringVar(&ingressDomains, "ingress-domains", os.Getenv("OSM_INGRESS_DOMAINS"),
		"Comma-separated domains an Application's host must be under (apps.example.com allows *.apps.example.com; {namespace}.apps.example.com allows *.<the Application's namespace>.apps.example.com, so no namespace can claim another's names); empty allows any host.")
	flag.StringVar(&opts.IngressClass, "ingress-class", os.Getenv("OSM_INGRESS_CLASS"),
		"Ingress class of the Ingresses the operator makes; empty leaves it to the cluster's default.")
	flag.BoolVar(&opts.EnableWebhooks, "enable-webhooks", true,
		"Serve the admission webhooks (defaults and validation).")
	flag.StringVar(&opts.CostAdminRole, "cost-admin-role", storagewebhook.DefaultCostAdminRole,
		"The install's ClusterRole that grants the verbs abandon, retain and empty; the webhooks name it when they refuse a user without them.")
	flag.StringVar(&opts.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs",
		"Directory with the webhook server's tls.crt and tls.key (make certs writes .certs/ for local runs).")
	flag.StringVar(&opts.WebhookHost, "webhook-host", "",
		"Address the webhook server binds; empty binds every address, 127.0.0.1 for local runs.")
	flag.IntVar(&opts.WebhookPort, "webhook-port", 9443, "Port of the webhook server.")
	flag.BoolVar(&opts.EnableHTTP2, "enable-http2", false,
		"Let the webhook and metrics servers speak HTTP/2 (off by default: HTTP/2 Rapid Reset).")
	certMode := flag.String("webhook-cert-management", operator.WebhookCertsExternal,
		"Where the webhook certificate comes from: external (tls.crt and tls.key in --webhook-cert-dir are written by cert-manager or by hand) or self (the manager issues and renews it in --webhook-cert-secret and injects its CA into the webhook configurations).")
	selfCerts := operator.SelfManagedCerts{}
	flag.StringVar(&selfCerts.Secret.Namespace, "webhook-namespace", os.Getenv("POD_NAMESPACE"),
		"With --webhook-cert-management=self: namespace of the webhook Service and certificate Secret.")
	flag.StringVar(&selfCerts.Secret.Name, "webhook-cert-secret", "object-storage-manager-webhook-server-cert",
		"With --webhook-cert-management=self: the Secret that keeps the CA and serving certificate; it must exist, and is mounted at --webhook-cert-dir.")
	flag.StringVar(&selfCerts.Service, "webhook-service", "object-storage-manager-webhook-service",
		"With --webhook-cert-management=self: the Service the API server calls the webhooks through; the certificate names it.")
	var extraDNSNames string
	flag.StringVar(&extraDNSNames, "webhook-cert-extra-dns-names", "",
		"With --webhook-cert-management=self: comma-separated further DNS names for the certificate.")
	flag.StringVar(&selfCerts.MutatingWebhookConfiguration, "mutating-webhook-configuration", "object-storage-manager-mutating-webhook-configuration",
		"With --webhook-cert-management=self: the MutatingWebhookConfiguration that gets the CA.")
	flag.StringVar(&selfCerts.ValidatingWebhookConfiguration, "validating-webhook-configuration", "object-storage-manager-validating-webhook-configuration",
		"With --webhook-cert-management=self: the ValidatingWebhookConfiguration that gets the CA.")
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Line("manager"))
		return
	}

	ctrl.SetLogger(logging.Lazy(zap.New(zap.UseFlagOptions(&zapOpts))))
	log := ctrl.Log.WithName("setup")
	for _, t := range strings.Split(thumbprints, ",") {
		if t = strings.TrimSpace(t); t != "" {
			opts.OIDCThumbprints = append(opts.OIDCThumbprints, t)
		}
	}
	var err error
	switch *certMode {
	case operator.WebhookCertsExternal:
	case operator.WebhookCertsSelf:
		if selfCerts.ExtraDNSNames, err = operator.ParseDomains(extraDNSNames); err != nil {
			log.Error(err, "Invalid --webhook-cert-extra-dns-names")
			os.Exit(2)
		}
		opts.SelfManagedCerts = &selfCerts
	default:
		log.Error(fmt.Errorf("%q is neither %s nor %s", *certMode, operator.WebhookCertsExternal, operator.WebhookCertsSelf), "Invalid --webhook-cert-management")
		os.Exit(2)
	}
	if opts.WatchNamespaces, err = operator.ParseNamespaces(watchNamespaces); err != nil {
		log.Error(err, "Invalid --watch-namespaces")
		os.Exit(2)
	}
	if opts.IngressDomains, err = operator.ParseDomains(ingressDomains); err != nil {
		log.Error(err, "Invalid --ingress-domains")
		os.Exit(2)
	}
	if opts.PodEndpoints, err = podendpoints.Parse(*podEndpoints); err != nil {
		log.Error(err, "Invalid --"+podendpoints.Flag)
		os.Exit(2)
	}

	if os.Getenv("GOGC") == "" {
		// The heap grows with the Buckets in the cache; collecting at half again its live size,
		// not at twice, cut the peak heap at 1,000 Buckets from 37 to 30 MiB with no CPU the
		// benchmark could see (docs/performance.md). GOGC overrides it.
		debug.SetGCPercent(tuning.GCPercent)
	}
	mgr, err := operator.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		log.Error(err, "Unable to set up the manager")
		os.Exit(1)
	}
	log.Info("Starting manager", "version", version.Get(), "contractAPI", opts.ContractAPIURL)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
}
