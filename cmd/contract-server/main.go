// Command contract-server is the reference contract API server: it sells object-storage
// contracts as accounts on versitygw or Ceph RGW, keeping its records in a bbolt file.
//
// Every flag can also be set through the environment: --admin-secret-key is
// CONTRACT_SERVER_ADMIN_SECRET_KEY, and so on. Prefer the environment for secrets, which a
// process listing would otherwise show.
//
// Hardening (docs/install.md, "Hardening the contract server"):
//   - --tls-cert-file and --tls-private-key-file serve HTTPS, re-reading renewed files;
//   - --token-file is re-read when it changes, keeping the last good token;
//   - --rate-limit limits each client holding the token on a budget of its own, after
//     authentication, and --tenant-rate-limit each tenant (OSM-Tenant: the namespace a call is
//     for) within it; both are on by default. Requests that fail authentication share a small
//     budget of their own, so a flood without the token starves nobody;
//   - --max-principals, --max-keys, --max-topics and --max-roles bound what one contract holds, and
//     --tombstone-retention how long a deleted principal or revoked key is remembered for
//     replays, so no tenant's churn grows the records without bound;
//   - --allowed-push-endpoints lists where notification topics may push (none by default), and
//     --allowed-oidc-issuers which OpenID Connect issuers accounts may trust (none by default);
//   - --max-request-bytes caps request bodies (413), and a request must be read within 30 s
//     (headers 10 s); a refused request's body is read for at most a second;
//   - --encryption-key-file (required, 64 hex characters, outside --data-dir) encrypts the
//     stored first secret keys; records written before it are encrypted at start.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// Mozilla's roots, used only where the system has none: the release image holds nothing but
	// this binary, and the server may call its backend's admin API over HTTPS.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/version"
)

// The HTTP server's limits, so a client that is slow on purpose holds a connection for a
// bounded time; the operator sends a few hundred bytes and reads as much.
const (
	// readHeaderTimeout: headers are one packet; ten seconds forgive any network.
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds reading a whole request: a body of --max-request-bytes (64 KiB by
	// default) at 2 KiB/s; a client that trickles its body is cut off.
	readTimeout = 30 * time.Second
	// writeTimeout runs from the end of the headers to the end of the answer, so it includes
	// the handler: a backend call (up to contractserver.BackendTimeout) and a minute of
	// waiting for the contract's lock. An answer cut off is safe: every call is idempotent.
	writeTimeout = contractserver.BackendTimeout + time.Minute
	// idleTimeout closes a keep-alive connection unused for longer than the operator's
	// usual gap between calls, so idle clients do not pile up connections.
	idleTimeout = 2 * time.Minute
	// maxHeaderBytes: the API's headers (a token, an idempotency key) are under 1 KiB.
	maxHeaderBytes = 64 << 10
)

type options struct {
	listen, tokenFile, dataDir, backend                  string
	tlsCertFile, tlsKeyFile, encryptionKeyFile           string
	s3Endpoint, s3Region                                 string
	adminEndpoint, adminAccessKey, adminSecretKey, plans string
	websiteEndpoint                                      string
	rateLimit, tenantRateLimit                           float64
	version                                              bool
	maxRequestBytes                                      int64
	limits                                               contractserver.Limits
	pushEndpoints                                        egress.Allowlist
	oidcIssuers                                          egress.Allowlist
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, log, os.Args[1:]); err != nil {
		log.Error("Contract server failed", "error", err)
		os.Exit(1)
	}
}

// run serves until ctx is done.
func run(ctx context.Context, log *slog.Logger, args []string) error {
	opts, err := parseFlags(args)
	if err != nil {
		return err
	}
	if opts.version {
		fmt.Println(version.Line("contract-server"))
		return nil
	}
	log.Info("Starting contract server", "version", version.Get())
	key, err := readEncryptionKey(opts.encryptionKeyFile, opts.dataDir)
	if err != nil {
		return err
	}
	plans, err := parsePlans(opts.plans)
	if err != nil {
		return err
	}
	backend, err := newBackend(opts)
	if err != nil {
		return err
	}
	srv, err := contractserver.New(contractserver.Config{
		TokenFile:               opts.tokenFile,
		DataDir:                 opts.dataDir,
		EncryptionKey:           key,
		Backend:                 backend,
		Plans:                   plans,
		MaxRequestBytes:         opts.maxRequestBytes,
		RequestsPerSecond:       offOrRate(opts.rateLimit),
		Burst:                   burstOf(opts.rateLimit),
		TenantRequestsPerSecond: offOrRate(opts.tenantRateLimit),
		TenantBurst:             burstOf(opts.tenantRateLimit),
		Limits:                  opts.limits,
		Logger:                  log,
		WebsiteEndpoint:         opts.websiteEndpoint,
		PushEndpoints:           opts.pushEndpoints,
		OIDCIssuers:             opts.oidcIssuers,
	})
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }()

	hs := newHTTPServer(srv.Handler())
	scheme := "http"
	if opts.tlsCertFile != "" {
		certs, err := newCertReloader(opts.tlsCertFile, opts.tlsKeyFile, log)
		if err != nil {
			return err
		}
		hs.TLSConfig = &tls.Config{GetCertificate: certs.getCertificate, MinVersion: tls.VersionTLS12}
		scheme = "https"
	}
	lis, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", opts.listen, err)
	}
	log.Info("Serving the contract API", "address", lis.Addr().String(), "scheme", scheme, "backend", backend.Kind(),
		"s3Endpoint", backend.Endpoint(), "region", backend.Region(), "dataDir", opts.dataDir, "plans", opts.plans)

	errc := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			errc <- hs.ServeTLS(lis, "", "")
			return
		}
		errc <- hs.Serve(lis)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.Info("Shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// newHTTPServer serves h with the limits above.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

func newBackend(opts options) (contractserver.Backend, error) {
	switch opts.backend {
	case "versitygw":
		return contractserver.NewVersityGWBackend(contractserver.VersityGWConfig{
			S3Endpoint:     opts.s3Endpoint,
			Region:         opts.s3Region,
			AdminEndpoint:  opts.adminEndpoint,
			AdminAccessKey: opts.adminAccessKey,
			AdminSecretKey: opts.adminSecretKey,
		})
	case "rgw":
		// radosgw serves admin ops (/admin/...) on its S3 endpoint.
		if opts.adminEndpoint != "" && opts.adminEndpoint != opts.s3Endpoint {
			return nil, fmt.Errorf("rgw serves its admin API on the S3 endpoint: leave --admin-endpoint empty or equal to --s3-endpoint")
		}
		return contractserver.NewRGWBackend(contractserver.RGWConfig{
			Endpoint:       opts.s3Endpoint,
			Region:         opts.s3Region,
			AdminAccessKey: opts.adminAccessKey,
			AdminSecretKey: opts.adminSecretKey,
		})
	default:
		return nil, fmt.Errorf("unknown backend %q: want versitygw or rgw", opts.backend)
	}
}

// offOrRate is a rate flag as Config takes it: the flag's 0 (no limit) is Config's negative.
func offOrRate(perSecond float64) float64 {
	if perSecond <= 0 {
		return -1
	}
	return perSecond
}

// burstOf is ten seconds' worth of a rate flag: the operator's bursts (a namespace's Buckets
// made at once) last seconds, and a budget that refills in ten lets them through whole.
func burstOf(perSecond float64) int { return max(1, int(10*perSecond)) }

// parseFlags reads the flags, then fills each one not given from its CONTRACT_SERVER_* variable.
func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("contract-server", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8090", "address to serve the API on")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token clients must send, re-read when it changes (required)")
	fs.StringVar(&o.dataDir, "data-dir", "", "directory for the contract records (required)")
	fs.StringVar(&o.encryptionKeyFile, "encryption-key-file", "", "file holding 64 hex characters (openssl rand -hex 32) that encrypt the stored secret keys; keep it outside --data-dir (required)")
	fs.StringVar(&o.backend, "backend", "versitygw", "storage backend: versitygw or rgw")
	fs.StringVar(&o.s3Endpoint, "s3-endpoint", "", "S3 endpoint URL handed to clients (required)")
	fs.StringVar(&o.s3Region, "s3-region", "us-east-1", "region clients sign S3 requests for")
	fs.StringVar(&o.adminEndpoint, "admin-endpoint", "", "backend admin API URL (versitygw: its admin port; rgw: the S3 endpoint, may be omitted)")
	fs.StringVar(&o.adminAccessKey, "admin-access-key", "", "backend admin access key (required; rgw: of a system user with the caps users=*;buckets=*, which makes each contract's topics in its own tenant)")
	fs.StringVar(&o.adminSecretKey, "admin-secret-key", "", "backend admin secret key (required; prefer CONTRACT_SERVER_ADMIN_SECRET_KEY)")
	fs.StringVar(&o.websiteEndpoint, "website-endpoint", "", "where the S3 service serves buckets as static websites, reported with every contract: a URL with {bucket} for the bucket's name (e.g. http://{bucket}.s3-website.example.com); empty when it serves none")
	fs.Var(&o.pushEndpoints, contractserver.PushEndpointsFlag, "URLs notification topics may push events to, as URL patterns scheme://host[:port][/path], "+
		"comma-separated or repeated: https://events.example.com/hooks. The backend POSTs every event there from the provider's network; "+
		"name in-cluster or private hosts exactly, as the backend resolves what a wildcard matches. Empty (the default) refuses every topic (400). "+
		"On rgw a tenant's own keys make topics around it: see docs/s3-servers.md")
	fs.Var(&o.oidcIssuers, contractserver.OIDCIssuersFlag, "OpenID Connect issuers (a token's iss) a contract's account may trust for keyless access, as URL patterns scheme://host[:port][/path], "+
		"comma-separated or repeated: https://oidc.cluster.example. The backend fetches each one's signing keys from its /.well-known/openid-configuration, "+
		"from the provider's network, and trusts whoever holds them. Empty (the default) refuses every provider (400)")
	fs.StringVar(&o.plans, "plans", "standard", "plans offered, comma-separated, each NAME or NAME=QUOTA (e.g. standard,small=1Gi)")
	fs.Float64Var(&o.rateLimit, "rate-limit", contractserver.DefaultRequestsPerSecond,
		"requests per second each client holding the token may make, with a burst of ten seconds' worth, before it is answered 429; 0 for no limit (requests with a wrong token are limited apart, always). "+
			"The default lets four namespaces burst at --tenant-rate-limit at once")
	fs.Float64Var(&o.tenantRateLimit, "tenant-rate-limit", contractserver.DefaultTenantRequestsPerSecond,
		"requests per second each tenant (the namespace a call names in OSM-Tenant) may make within its client's budget, with a burst of ten seconds' worth; 0 for no limit. "+
			"The default is three times the operator's average and above its busiest second (41 requests) when one namespace makes, rotates and deletes 180 BucketAccesses at once (docs/install.md)")
	fs.IntVar(&o.limits.Principals, "max-principals", contractserver.DefaultPrincipals,
		"principals one contract may have (422 beyond), and deleted ones it remembers within --tombstone-retention (429 beyond); -1 for no limit")
	fs.IntVar(&o.limits.Keys, "max-keys", contractserver.DefaultKeys, "key pairs one contract, and each of its principals, may have (422 beyond); -1 for no limit")
	fs.IntVar(&o.limits.Topics, "max-topics", contractserver.DefaultTopics, "notification topics one contract may have (422 beyond); -1 for no limit")
	fs.IntVar(&o.limits.Roles, "max-roles", contractserver.DefaultRoles, "roles for keyless access one contract may have (422 beyond); -1 for no limit")
	fs.DurationVar(&o.limits.TombstoneRetention, "tombstone-retention", contractserver.DefaultTombstoneRetention,
		"how long a deleted principal or revoked key is remembered, so that a replay of the request that made it is answered as before (410) and never makes it again; -1s to remember for ever")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "serve HTTPS with this PEM certificate (chain), re-read when it changes; needs --tls-private-key-file")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file")
	fs.Int64Var(&o.maxRequestBytes, "max-request-bytes", contractserver.DefaultMaxRequestBytes, "largest request body accepted; larger ones are answered 413")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.version {
		return o, nil
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "CONTRACT_SERVER_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && !set[f.Name] {
			if err := fs.Set(f.Name, v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s: %w", env, err)
			}
		}
	})
	if envErr != nil {
		return o, envErr
	}
	for name, v := range map[string]string{"token-file": o.tokenFile, "data-dir": o.dataDir, "encryption-key-file": o.encryptionKeyFile} {
		if v == "" {
			return o, fmt.Errorf("--%s is required", name)
		}
	}
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		return o, fmt.Errorf("--tls-cert-file and --tls-private-key-file go together: give both or neither")
	}
	return o, nil
}
