// Package operator assembles the manager: scheme, cache, controllers and webhooks. cmd/manager
// and the integration tests both build it here, so tests run the wiring that ships.
package operator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go/middleware"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	paascontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/paas"
	storagecontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/storage"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/metrics"
	"github.com/object-storage-manager/object-storage-manager/internal/metricsauth"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/resyncbudget"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
	osmwebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook"
	paaswebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook/paas/v1alpha1"
	storagewebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook/storage/v1alpha1"
)

// Scheme knows the built-in kinds and this operator's kinds.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(storagev1alpha1.AddToScheme(Scheme))
	utilruntime.Must(paasv1alpha1.AddToScheme(Scheme))
}

// Options configures the operator. cmd/manager fills it from flags.
type Options struct {
	// ContractAPIURL is the provider's contract API, for example http://127.0.0.1:8090.
	ContractAPIURL string
	// ContractAPITokenFile holds the bearer token. It is read on every request, so a rotated
	// token takes effect without a restart.
	ContractAPITokenFile string
	// ContractAPITimeout bounds one contract API request.
	ContractAPITimeout time.Duration
	// AllowedEndpoints are the S3 endpoints a tenant may name for an account of its own
	// (Contract spec.credentials): checked at admission and before every connection. Empty,
	// the default, allows none. Endpoints the contract API reports for the accounts it sells
	// are the provider's, and need no listing.
	AllowedEndpoints egress.Allowlist
	// AllowedNotificationEndpoints are the URLs a Bucket's notifications may push events to;
	// empty allows none.
	AllowedNotificationEndpoints egress.Allowlist

	// OIDCIssuerURL is the cluster's ServiceAccount token issuer (the tokens' iss), which the
	// provider fetches the signing keys from; OIDCAudience the audience the tokens are minted
	// for (DefaultTokenAudience when empty); OIDCThumbprints the SHA-1 fingerprints of the
	// certificates serving the keys. Without an issuer, BucketAccesses with authentication
	// ServiceAccount are refused (AuthenticationUnsupported).
	OIDCIssuerURL   string
	OIDCAudience    string
	OIDCThumbprints []string

	// ContractAPIAllowInsecureHTTP accepts a plain http ContractAPIURL to a host that is not a
	// loopback address, over which the bearer token and the secret keys the API returns cross
	// the network in the clear. Off: such a URL is refused (checkContractAPIURL).
	ContractAPIAllowInsecureHTTP bool

	// MaxConcurrentReconciles bounds parallel reconciles per controller.
	MaxConcurrentReconciles int
	// ResyncPeriod is how often a Ready resource is compared with the provider again even
	// without a change, which is what finds drift.
	ResyncPeriod time.Duration
	// ResyncMaxPeriod is the longest a calm Ready Bucket waits between such checks while the
	// budget has room; each calm check doubles its period from ResyncPeriod. Under
	// ResyncPeriod (0): ResyncPeriod, every Bucket alike.
	ResyncMaxPeriod time.Duration
	// ResyncBudget is the provider calls a second those checks may make in all, and
	// ResyncBudgetPerContract those of one Contract's Buckets; 0: no limit. Changes, watches
	// and retries are never held to it.
	ResyncBudget, ResyncBudgetPerContract float64

	// S3Timeout bounds one S3 request; S3MaxAttempts bounds the SDK's retries of one call.
	S3Timeout     time.Duration
	S3MaxAttempts int
	// S3APIOptions add middleware to every S3 call (tests count calls with it).
	S3APIOptions []func(*middleware.Stack) error

	// MetricsBindAddress, HealthProbeBindAddress: "0" turns a server off.
	MetricsBindAddress     string
	HealthProbeBindAddress string
	// PprofBindAddress serves Go's profiles (/debug/pprof/) unauthenticated, for a benchmark
	// or a local run; "" or "0" (the default) serves none.
	PprofBindAddress string
	// MetricsInsecure serves /metrics over plain HTTP to anyone; by default it is served over
	// HTTPS to callers the API server authenticates and authorizes (get on the /metrics
	// non-resource URL), as kubebuilder scaffolds it.
	MetricsInsecure bool
	// WatchNamespaces limits the manager to these namespaces (empty: all). It then needs their
	// permissions only there: the ClusterRole bound with a RoleBinding in each (config/namespaced).
	WatchNamespaces []string
	// LeaderElection makes replicas take turns.
	LeaderElection bool
	// LeaderElectionNamespace is where the lease lives outside a cluster.
	LeaderElectionNamespace string

	// IngressDomains are the domains an Application's host must be under, so that no tenant
	// claims a name that belongs to someone else (grafana.corp.example); empty allows any host.
	// A "{namespace}" label stands for the Application's namespace: each namespace then has
	// names of its own, whatever other managers serve the cluster.
	IngressDomains []string
	// IngressClass is set on every Ingress the operator makes; empty leaves it to the cluster's
	// default class.
	IngressClass string
	// PodEndpoints maps an S3 endpoint as the manager reaches it to the one an Application's
	// pods reach it at, where the two differ (see ParsePodEndpoints).
	PodEndpoints map[string]string

	// EnableWebhooks serves the admission webhooks, with tls.crt and tls.key from
	// WebhookCertDir, on WebhookHost:WebhookPort ("" host: every address).
	EnableWebhooks bool
	WebhookCertDir string
	WebhookHost    string
	WebhookPort    int
	// EnableHTTP2 lets the webhook and metrics servers speak HTTP/2; off by default (Rapid
	// Reset).
	EnableHTTP2 bool
	// SelfManagedCerts, when set, makes the manager issue and renew its webhook certificate
	// itself (no cert-manager); nil: WebhookCertDir is filled by someone else.
	SelfManagedCerts *SelfManagedCerts
	// CostAdminRole is the install's ClusterRole that grants the verbs abandon, retain and empty, which
	// the webhooks name when they refuse a user without them; empty: config/default's name.
	CostAdminRole string

	// SkipNameValidation lets one process build several managers, as tests that restart the
	// manager do; controller names must otherwise be unique per process.
	SkipNameValidation bool
}

// bucketResyncs books the drift checks of Ready Buckets within the budget of opts; nil, when
// there are none to book.
func bucketResyncs(opts Options) *resyncbudget.Scheduler {
	if opts.ResyncPeriod <= 0 {
		return nil
	}
	return resyncbudget.New(resyncbudget.Options{Kind: "bucket", Period: opts.ResyncPeriod, MaxPeriod: opts.ResyncMaxPeriod,
		Rate: opts.ResyncBudget, ShareRate: opts.ResyncBudgetPerContract, CalmShare: tuning.ResyncCalmShare, Jitter: tuning.ResyncJitter})
}

// NewManager builds a manager with every controller of the operator registered.
func NewManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	api, err := NewContractAPIClient(opts)
	if err != nil {
		return nil, err
	}
	issuer, err := TokenIssuer(opts)
	if err != nil {
		return nil, err
	}
	if opts.WebhookPort == 0 {
		opts.WebhookPort = osmwebhook.DefaultPort
	}
	webhookServer := webhook.NewServer(osmwebhook.ServerOptions(
		opts.WebhookCertDir, opts.WebhookPort, opts.WebhookHost, opts.EnableHTTP2))
	var certsReady chan struct{}
	if opts.EnableWebhooks && opts.SelfManagedCerts != nil {
		if err := opts.SelfManagedCerts.Validate(); err != nil {
			return nil, err
		}
		certsReady = make(chan struct{})
		webhookServer = gatedServer{Server: webhookServer, ready: certsReady}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme,
		Cache:                   CacheOptions(opts.WatchNamespaces),
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		PprofBindAddress:        opts.PprofBindAddress,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "object-storage-manager.osm.dev",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// A replica that stops hands the lease over at once, instead of leaving the next one
		// waiting for it to expire (a rollout, osm-dev's reload). Safe: cmd/manager exits as
		// soon as the manager stops.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &opts.SkipNameValidation},
		WebhookServer:                 webhookServer,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := index.Register(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("indexing fields: %w", err)
	}
	// One set of S3 clients for both: the Contract controller tries a rotated key with the
	// Store the Buckets then use.
	stores := storeFactory(opts)
	if err := (&storagecontroller.ContractReconciler{
		Client:                  mgr.GetClient(),
		API:                     contractclient.New(api),
		AllowedEndpoints:        opts.AllowedEndpoints,
		APIReader:               mgr.GetAPIReader(),
		Stores:                  stores,
		Recorder:                mgr.GetEventRecorder("contract-controller"),
		ResyncPeriod:            opts.ResyncPeriod,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the Contract controller: %w", err)
	}
	if err := (&storagecontroller.BucketReconciler{
		Client:                  mgr.GetClient(),
		Stores:                  stores,
		Usage:                   contractclient.New(api),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder("bucket-controller"),
		Topics:                  contractclient.New(api),
		NotificationEndpoints:   opts.AllowedNotificationEndpoints,
		ResyncPeriod:            opts.ResyncPeriod,
		Resyncs:                 bucketResyncs(opts),
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		// A Bucket is not deleted while an Application links it.
		Users: []storagecontroller.BucketUsers{{
			Kind:    "Application",
			List:    index.ApplicationsLinking,
			Object:  &paasv1alpha1.Application{},
			Buckets: paascontroller.BucketsOfApplication,
			// An Application's backup retention is a lifecycle rule of its backup Bucket.
			LifecycleRules: paascontroller.BackupRetentionRules,
		},
			// Nor while a BucketAccess names it; each adds its statements to the policy.
			storagecontroller.BucketAccessUsers,
		},
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the Bucket controller: %w", err)
	}
	if err := (&storagecontroller.BucketAccessReconciler{
		Client:                  mgr.GetClient(),
		Principals:              contractclient.New(api),
		Roles:                   contractclient.New(api),
		Issuer:                  issuer,
		APIReader:               mgr.GetAPIReader(),
		Stores:                  keyCheckStores(opts),
		Recorder:                mgr.GetEventRecorder("bucketaccess-controller"),
		ResyncPeriod:            opts.ResyncPeriod,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		// An Application's BucketAccesses wait for it to go before they let go of its keys.
		Owners: []client.Object{&paasv1alpha1.Application{}},
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the BucketAccess controller: %w", err)
	}
	if err := (&paascontroller.ApplicationReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder("application-controller"),
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		IngressDomains:          opts.IngressDomains,
		IngressClass:            opts.IngressClass,
		TokenAudience:           applicationTokenAudience(issuer),
		Listers:                 listerFactory(opts),
		PodEndpoints:            opts.PodEndpoints,
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the Application controller: %w", err)
	}
	if certsReady != nil {
		if err := addCertRotator(mgr, opts.SelfManagedCerts, opts.WebhookCertDir, certsReady); err != nil {
			return nil, fmt.Errorf("setting up the webhook certificate rotator: %w", err)
		}
	}
	if opts.EnableWebhooks {
		if err := storagewebhook.SetupWebhooksWithManager(mgr, storagewebhook.Options{CostAdminRole: opts.CostAdminRole,
			Endpoints: opts.AllowedEndpoints, NotificationEndpoints: opts.AllowedNotificationEndpoints}); err != nil {
			return nil, fmt.Errorf("setting up the storage webhooks: %w", err)
		}
		if err := paaswebhook.SetupWebhooksWithManager(mgr, opts.IngressDomains); err != nil {
			return nil, fmt.Errorf("setting up the paas webhooks: %w", err)
		}
	}
	metrics.ObserveResources(mgr.GetCache())
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	readyz := healthz.Ping
	if opts.EnableWebhooks {
		// Not ready until the webhook server serves: a replica that would refuse admission
		// requests must not get them.
		readyz = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", readyz); err != nil {
		return nil, err
	}
	return mgr, nil
}

// metricsOptions serves /metrics behind the API server's authentication and authorization,
// unless opts.MetricsInsecure. The filter is metricsauth's, not controller-runtime's
// filters.WithAuthenticationAndAuthorization: that one links k8s.io/apiserver (cel-go, gRPC,
// OpenTelemetry) into the manager, 34 of its 88 MB, for the same two reviews. HTTP/2 is off
// unless opts.EnableHTTP2, as on the webhook server: a scraper needs no more than HTTP/1.1, and
// whoever reaches the port may send requests before the filter has judged their token.
func metricsOptions(opts Options) metricsserver.Options {
	if opts.MetricsInsecure {
		return metricsserver.Options{BindAddress: opts.MetricsBindAddress}
	}
	return metricsserver.Options{
		BindAddress:    opts.MetricsBindAddress,
		SecureServing:  true,
		FilterProvider: metricsauth.FilterProvider,
		TLSOpts:        osmwebhook.TLSOptions(opts.EnableHTTP2),
	}
}

// CacheOptions keeps the manager's cache to what it needs, so a tenant cannot make it hold
// (and hold in memory) objects the operator did not write:
//   - Secrets: only those labelled storage.osm.dev/contract, and of those only the ones a
//     Contract or a BucketAccess controls keep their data; a tenant can set the label on any
//     Secret of theirs, so the label alone would let them fill the cache;
//   - ConfigMaps (the obc format's): only those labelled storage.osm.dev/contract;
//   - Deployments, Services, Ingresses, CronJobs, Jobs and ServiceAccounts: only those labelled as the Application
//     controller's children (app.kubernetes.io/managed-by=object-storage-manager);
//   - no object keeps its managedFields, which the operator never reads.
//
// With namespaces, the cache watches only those.
func CacheOptions(namespaces []string) cache.Options {
	labelled, err := labels.NewRequirement(storagev1alpha1.ContractLabel, selection.Exists, nil)
	utilruntime.Must(err)
	children := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{paascontroller.LabelManagedBy: paascontroller.ManagedBy})}
	var watched map[string]cache.Config
	for _, ns := range namespaces {
		if watched == nil {
			watched = map[string]cache.Config{}
		}
		watched[ns] = cache.Config{}
	}
	return cache.Options{
		DefaultNamespaces: watched,
		DefaultTransform:  cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}:         {Label: labels.NewSelector().Add(*labelled), Transform: SecretTransform},
			&corev1.ConfigMap{}:      {Label: labels.NewSelector().Add(*labelled)},
			&appsv1.Deployment{}:     children,
			&corev1.Service{}:        children,
			&networkingv1.Ingress{}:  children,
			&batchv1.CronJob{}:       children,
			&batchv1.Job{}:           children,
			&corev1.ServiceAccount{}: children,
		},
	}
}

// SecretTransform is how a Secret enters the cache: without managedFields, and without its data
// and annotations unless a Contract or a BucketAccess controls it (credentials it wrote). The others
// keep the metadata the controllers' ownership checks read, so they still see that a Secret of
// that name exists and is not theirs.
func SecretTransform(obj any) (any, error) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	secret.ManagedFields = nil
	if owner := metav1.GetControllerOfNoCopy(secret); owner != nil && (owner.Kind == "Contract" || owner.Kind == "BucketAccess") &&
		strings.HasPrefix(owner.APIVersion, storagev1alpha1.GroupVersion.Group+"/") {
		return secret, nil
	}
	secret.Data, secret.StringData, secret.Annotations = nil, nil, nil
	return secret, nil
}

// storeFactory opens S3 endpoints with shared HTTP clients, so connections are reused across
// reconciles and every request is bounded. It keeps one Store per endpoint and key pair (a
// Contract's account), built once rather than on every pass.
func storeFactory(opts Options) storagecontroller.StoreFactory {
	// Every worker of the Bucket controller may call the same endpoint at once.
	clients := newS3Clients(opts, max(opts.MaxConcurrentReconciles, 1))
	stores := &storeCache{}
	return func(a objectstore.Account) objectstore.Store {
		return stores.get(a, func() objectstore.Store { return objectstore.New(countedS3Config(opts, clients.of(a), a)) })
	}
}

// keyCheckStores opens an S3 endpoint with a BucketAccess's key, to check what the key can do.
// Unlike storeFactory it keeps nothing: keys rotate, and each is checked a few times at most.
func keyCheckStores(opts Options) storagecontroller.StoreFactory {
	clients := newS3Clients(opts, 2)
	return func(a objectstore.Account) objectstore.Store {
		return objectstore.New(countedS3Config(opts, clients.of(a), a))
	}
}

// s3Clients are the HTTP clients of one kind of S3 caller: every request bounded by
// --s3-timeout, up to conns idle connections kept per endpoint; one for the endpoints the
// provider reports, one held to the platform's allowlist for the endpoints tenants name.
type s3Clients struct{ provider, tenant *http.Client }

func newS3Clients(opts Options, conns int) s3Clients {
	timeout := opts.S3Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return s3Clients{provider: objectstore.NewHTTPClient(timeout, conns, nil),
		tenant: objectstore.NewHTTPClient(timeout, conns, &opts.AllowedEndpoints)}
}

// of is the client that reaches a's endpoint.
func (c s3Clients) of(a objectstore.Account) *http.Client {
	if a.TenantEndpoint {
		return c.tenant
	}
	return c.provider
}

// countedS3Config is how a controller reaches an S3 endpoint with one key pair: its calls
// counted in osm_s3_requests_total (and passed through opts.S3APIOptions), its retries bounded.
func countedS3Config(opts Options, httpClient *http.Client, a objectstore.Account) objectstore.Config {
	return objectstore.Config{Endpoint: a.Endpoint, Region: a.Region, AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey,
		VirtualHosted: a.VirtualHosted, HTTPClient: httpClient, MaxAttempts: opts.S3MaxAttempts,
		APIOptions: append([]func(*middleware.Stack) error{metrics.CountS3}, opts.S3APIOptions...)}
}

// listerFactory opens a backup bucket for the Application controller, over its own HTTP client.
// Its keys are a BucketAccess's, which only a provider's account has, so the endpoint is the
// provider's.
func listerFactory(opts Options) func(endpoint, region, accessKeyID, secretAccessKey string) objectstore.Lister {
	httpClient := newS3Clients(opts, max(opts.MaxConcurrentReconciles, 1)).provider
	return func(endpoint, region, accessKeyID, secretAccessKey string) objectstore.Lister {
		return objectstore.NewLister(objectstore.Config{Endpoint: endpoint, Region: region, AccessKeyID: accessKeyID,
			SecretAccessKey: secretAccessKey, HTTPClient: httpClient, MaxAttempts: opts.S3MaxAttempts})
	}
}

// storeCache keeps the Stores of storeFactory, by account. It is kept in memory only, as the
// informer cache keeps the Secrets the keys come from.
type storeCache struct {
	mu     sync.Mutex
	stores map[objectstore.Account]objectstore.Store
}

func (c *storeCache) get(key objectstore.Account, build func() objectstore.Store) objectstore.Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stores[key]; ok {
		return s
	}
	if c.stores == nil || len(c.stores) >= tuning.MaxStores {
		c.stores = map[objectstore.Account]objectstore.Store{}
	}
	s := build()
	c.stores[key] = s
	return s
}

// NewContractAPIClient builds the generated client for opts.ContractAPIURL, which must be https
// unless it is local or opts.ContractAPIAllowInsecureHTTP, with a bearer token read from
// opts.ContractAPITokenFile on every request and a per-request timeout.
func NewContractAPIClient(opts Options) (contractapi.ClientWithResponsesInterface, error) {
	url, tokenFile, timeout := opts.ContractAPIURL, opts.ContractAPITokenFile, opts.ContractAPITimeout
	if err := checkContractAPIURL(url, opts.ContractAPIAllowInsecureHTTP); err != nil {
		return nil, err
	}
	if tokenFile == "" {
		return nil, fmt.Errorf("the contract API token file is not set (--contract-api-token-file)")
	}
	if _, err := readToken(tokenFile); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	// The platform's own server, so reached wherever it is; but its answers are bounded and its
	// redirects not followed elsewhere, as every answer the manager reads.
	httpClient := egress.NewClient(egress.ClientConfig{Timeout: timeout, MaxAnswer: tuning.MaxContractAPIAnswer,
		Wrap: metrics.CountContractAPI})
	return contractapi.NewClientWithResponses(url,
		contractapi.WithHTTPClient(httpClient),
		contractapi.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
}

func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the contract API token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("the contract API token file %s is empty", path)
	}
	return token, nil
}

// ParseNamespaces reads --watch-namespaces: comma-separated namespace names.
func ParseNamespaces(list string) ([]string, error) {
	var namespaces []string
	for _, ns := range strings.Split(list, ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return nil, fmt.Errorf("%q is not a namespace name: %s", ns, strings.Join(msgs, "; "))
		}
		namespaces = append(namespaces, ns)
	}
	return namespaces, nil
}

// ParseDomains reads a comma-separated list of DNS domains, such as --ingress-domains takes:
// lower-cased, without blanks or a leading "*." or a trailing dot. A label may be
// "{namespace}", which stands for the namespace of the Application whose host is checked
// (application.NamespacePlaceholder).
func ParseDomains(list string) ([]string, error) {
	var domains []string
	for _, d := range strings.Split(list, ",") {
		d = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "*."), ".")
		if d == "" {
			continue
		}
		// A namespace name is a DNS label: check the domain with one in the placeholder's place.
		asChecked := strings.ReplaceAll(d, application.NamespacePlaceholder, "namespace")
		if msgs := validation.IsDNS1123Subdomain(asChecked); len(msgs) > 0 {
			return nil, fmt.Errorf("%q is not a DNS domain: %s", d, strings.Join(msgs, "; "))
		}
		for _, label := range strings.Split(d, ".") {
			if strings.ContainsAny(label, "{}") && label != application.NamespacePlaceholder {
				return nil, fmt.Errorf("%q is not a DNS domain: %s must be a whole label", d, application.NamespacePlaceholder)
			}
		}
		domains = append(domains, d)
	}
	return domains, nil
}
