// Package contractserver is the reference implementation of the contract API
// (openapi/contract.yaml): contracts recorded durably in bbolt and made real as accounts on an
// S3 service through a Backend.
package contractserver

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/keylock"
)

// DefaultMaxRequestBytes is far above any valid request (a create request is a few hundred
// bytes) and small enough that a flood of large bodies costs little memory.
const DefaultMaxRequestBytes = 64 << 10

// DefaultPlans is what a server offers when Config.Plans is empty.
var DefaultPlans = []Plan{{Name: "standard"}}

// Config configures a Server.
type Config struct {
	// Token is the bearer token every request must carry. Give it or TokenFile.
	Token string
	// TokenFile holds the bearer token, surrounding whitespace ignored. It is looked at again
	// at most once a second and re-read when it changed, so the token can be rotated in place.
	TokenFile string
	// DataDir holds the contract records (contracts.db); created if missing.
	DataDir string
	// EncryptionKey (EncryptionKeySize random bytes) seals the first secret key of each
	// contract in DataDir. Keep it outside DataDir: a copy of the records without it yields no
	// usable secret. Records written before encryption are sealed when New opens them.
	EncryptionKey []byte
	// Backend makes the accounts.
	Backend Backend
	// Plans offered; DefaultPlans when empty.
	Plans []Plan
	// RequestsPerSecond and Burst limit the request rate of each authenticated client (429 with
	// Retry-After beyond). A client is a bearer token: every holder of the token shares one
	// budget, and a rotated token starts a new one. Requests that fail authentication never
	// take from it: they share a small budget of their own, always on. 0 takes
	// DefaultRequestsPerSecond and DefaultBurst; a negative rate turns the limit off.
	RequestsPerSecond float64
	Burst             int
	// TenantRequestsPerSecond and TenantBurst limit each tenant the same way, within its
	// client's budget: a tenant is what a request's TenantHeader names, the Kubernetes
	// namespace the call is for, so one namespace's churn leaves the others their share. 0
	// takes DefaultTenantRequestsPerSecond and DefaultTenantBurst; a negative rate turns the
	// limit off.
	TenantRequestsPerSecond float64
	TenantBurst             int
	// Limits bound what each contract holds; zero fields take the defaults.
	Limits Limits
	// MaxRequestBytes caps a request body; a larger one is answered 413. 0 means
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Logger receives the server's log; slog.Default() when nil. Secrets never reach it.
	Logger *slog.Logger
	// WebsiteEndpoint is where the S3 service serves a bucket's static website, a URL in which
	// {bucket} stands for the bucket's name; reported with every contract. "" when it serves
	// none, or it is not known.
	WebsiteEndpoint string
	// PushEndpoints are the URLs a contract's notification topics may push to: the backend
	// POSTs every event there from the provider's network, so where is the provider's decision,
	// whatever its clients check. A topic for any other URL is refused 400; the zero value
	// refuses every one.
	PushEndpoints egress.Allowlist
	// OIDCIssuers are the OpenID Connect issuers a contract's account may trust: the backend
	// fetches their signing keys from there, and trusts whoever holds those keys, so which is
	// the provider's decision. A provider for any other issuer is refused 400; the zero value
	// refuses every one.
	OIDCIssuers egress.Allowlist
	// AfterStoreWrite, when set, is called after each write to the records has committed, with
	// what it wrote ("insert principal") and the contract's or principal's id, before the
	// server does anything else on that request. For tests that stop the server right after a
	// write (test/faults); nil in production.
	AfterStoreWrite func(op, id string)
}

// Server serves the contract API. It is safe for concurrent use.
type Server struct {
	token   *bearerToken
	store   *store
	secrets *secretBox
	backend Backend
	plans   map[string]Plan
	website string
	// pushEndpoints are where topics may push.
	pushEndpoints egress.Allowlist
	// oidcIssuers are the issuers accounts may trust.
	oidcIssuers egress.Allowlist
	// clients and tenants limit each authenticated client and each tenant (nil: no limit);
	// failedAuth every request that fails authentication.
	clients, tenants *limiters
	failedAuth       *rate.Limiter
	limits           Limits
	maxBody          int64
	log              *slog.Logger
	locks            keylock.Map
	handler          http.Handler
}

// New opens the record store in cfg.DataDir and returns a server ready to serve.
func New(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("a data directory is required")
	}
	if cfg.Backend == nil {
		return nil, errors.New("a backend is required")
	}
	if len(cfg.Plans) == 0 {
		cfg.Plans = DefaultPlans
	}
	plans := make(map[string]Plan, len(cfg.Plans))
	quotas := true
	if qs, ok := cfg.Backend.(QuotaSupport); ok {
		quotas = qs.SupportsQuotas()
	}
	for _, p := range cfg.Plans {
		if p.Name == "" {
			return nil, errors.New("a plan needs a name")
		}
		if p.QuotaBytes < 0 {
			return nil, fmt.Errorf("plan %q: quota must not be negative", p.Name)
		}
		if p.QuotaBytes > 0 && !quotas {
			return nil, fmt.Errorf("plan %q has a quota, which the %s backend cannot enforce", p.Name, cfg.Backend.Kind())
		}
		plans[p.Name] = p
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := validateWebsiteEndpoint(cfg.WebsiteEndpoint); err != nil {
		return nil, err
	}
	token, err := newBearerToken(cfg.Token, cfg.TokenFile, cfg.Logger)
	if err != nil {
		return nil, err
	}
	box, err := newSecretBox(cfg.EncryptionKey)
	if err != nil {
		return nil, err
	}
	limits := cfg.Limits.withDefaults()
	st, did, err := openStore(cfg.DataDir, box, limits)
	if err != nil {
		return nil, err
	}
	st.afterWrite = cfg.AfterStoreWrite
	if did.sealed > 0 {
		cfg.Logger.Info("Sealed the secret keys of contracts written before encryption", "contracts", did.sealed)
	}
	if did.migrated > 0 {
		cfg.Logger.Info("Moved the principals and revoked keys of contracts written by an older server into records of their own", "contracts", did.migrated)
	}
	s := &Server{
		token:   token,
		store:   st,
		secrets: box,
		backend: cfg.Backend,
		plans:   plans,
		website: cfg.WebsiteEndpoint,
		log:     cfg.Logger,
		limits:  limits,

		pushEndpoints: cfg.PushEndpoints,
		oidcIssuers:   cfg.OIDCIssuers,
		failedAuth:    rate.NewLimiter(failedAuthRate, failedAuthBurst),
	}
	if s.maxBody = cfg.MaxRequestBytes; s.maxBody <= 0 {
		s.maxBody = DefaultMaxRequestBytes
	}
	s.clients = newLimiters(orDefault(cfg.RequestsPerSecond, cfg.Burst, DefaultRequestsPerSecond, DefaultBurst))
	s.tenants = newLimiters(orDefault(cfg.TenantRequestsPerSecond, cfg.TenantBurst, DefaultTenantRequestsPerSecond, DefaultTenantBurst))
	s.handler = s.routes()
	return s, nil
}

// orDefault is a rate and burst, or the defaults for a zero rate; a zero burst is one second's
// worth.
func orDefault(perSecond float64, burst int, defRate float64, defBurst int) (float64, int) {
	if perSecond == 0 {
		return defRate, defBurst
	}
	if burst <= 0 {
		burst = max(1, int(perSecond))
	}
	return perSecond, burst
}

// validateWebsiteEndpoint accepts "" or an http(s) URL with {bucket} in it.
func validateWebsiteEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(strings.ReplaceAll(endpoint, "{bucket}", "bucket"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.Contains(endpoint, "{bucket}") {
		return fmt.Errorf("website endpoint %q must be an http(s) URL with {bucket} where the bucket's name goes", endpoint)
	}
	return nil
}

// Handler is the HTTP handler of the API.
func (s *Server) Handler() http.Handler { return s.handler }

// Close closes the record store. Requests still running fail; stop the HTTP server first.
func (s *Server) Close() error { return s.store.close() }

func (s *Server) routes() http.Handler {
	writeErr := func(w http.ResponseWriter, r *http.Request, err error) { writeProblem(w, r, s.log, err) }
	badRequest := func(w http.ResponseWriter, r *http.Request, err error) {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			writeErr(w, r, newProblem(contractapi.ProblemInvalidRequest, http.StatusRequestEntityTooLarge,
				"the request body is larger than the %d bytes this server accepts", tooLarge.Limit))
			return
		}
		writeErr(w, r, newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, "%s", err.Error()))
	}
	strict := contractapi.NewStrictHandlerWithOptions(s, nil, contractapi.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  badRequest,
		ResponseErrorHandlerFunc: writeErr,
	})
	mux := http.NewServeMux()
	// Not not-found: that is the API's word that a contract, principal or key is gone, and a
	// client whose URL has a wrong prefix (an ingress that does not strip /api) would otherwise
	// read every contract as gone, and delete what it keeps for it.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, r, newProblem(contractapi.ProblemNoSuchRoute, http.StatusNotFound,
			"this API has no route %s %s; is the client's URL (its path prefix) right?", r.Method, r.URL.Path))
	})
	api := contractapi.HandlerWithOptions(strict, contractapi.StdHTTPServerOptions{
		BaseRouter:       mux,
		ErrorHandlerFunc: badRequest,
	})
	// Authentication comes first, so each client is limited on its own budget and a flood
	// without the token uses up nobody's.
	return s.authenticate(s.rateLimit(s.limitBody(api)))
}

// drainLimit and drainTimeout bound what is read of the body of a request refused before its
// handler (a wrong token, too many requests): any valid request is read whole in that time, so
// its client keeps its connection; a client that sends more, or trickles its body, is cut off.
const (
	drainLimit   = DefaultMaxRequestBytes
	drainTimeout = time.Second
)

// drain reads what is left of a refused request's body, so that its client can reuse the
// connection, at most drainLimit bytes for at most drainTimeout. The deadline is set on the
// connection, so it also bounds what net/http reads after the handler, and a body it did not
// finish closes the connection after the answer. Without a deadline (a ResponseWriter that
// cannot set one), nothing is read and the connection is closed.
func drain(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(drainTimeout)); err != nil {
		w.Header().Set("Connection", "close")
		return
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r.Body, drainLimit+1))
	if err != nil || n > drainLimit {
		w.Header().Set("Connection", "close")
	}
}
