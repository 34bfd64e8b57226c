package metricsauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/metricsauth"
)

const namespace = "monitoring"

// A scraper gets /metrics only with a token the API server authenticates, for a user RBAC lets
// get the path, as kubebuilder's metrics-reader ClusterRole grants.
func TestMetricsNeedATokenOfAUserAllowedToGetThePath(t *testing.T) {
	env := startAPIServer(t)
	metrics, _ := env.guardedMetrics(t, metricsauth.Options{})
	reader := env.token(t, "prometheus")
	env.allowToGetMetrics(t, "prometheus")
	stranger := env.token(t, "stranger")

	for _, tc := range []struct {
		name   string
		method string
		path   string
		header string
		want   int
	}{
		{name: "no token", header: "", want: http.StatusUnauthorized},
		{name: "another scheme", header: "Basic " + reader, want: http.StatusUnauthorized},
		{name: "a token the API server does not know", header: "Bearer not-a-token", want: http.StatusUnauthorized},
		{name: "a ServiceAccount without RBAC for /metrics", header: "Bearer " + stranger, want: http.StatusForbidden},
		{name: "a ServiceAccount allowed to get /metrics", header: "Bearer " + reader, want: http.StatusOK},
		{name: "the allowed ServiceAccount on another path", path: "/debug/pprof/", header: "Bearer " + reader, want: http.StatusForbidden},
		{name: "the allowed ServiceAccount posting", method: http.MethodPost, header: "Bearer " + reader, want: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := scrape(metrics, tc.method, tc.path, tc.header)
			if code != tc.want {
				t.Errorf("got %d %q, want %d", code, body, tc.want)
			}
			if _, token, _ := strings.Cut(tc.header, " "); token != "" && strings.Contains(body, token) {
				t.Errorf("the answer shows the token: %q", body)
			}
		})
	}
}

// A Prometheus scraping every few seconds costs the API server one TokenReview a minute and one
// SubjectAccessReview every five, not two reviews a scrape.
func TestAnAllowedScraperIsReviewedAgainOnlyAfterTheTTLs(t *testing.T) {
	env := startAPIServer(t)
	clock := clocktesting.NewFakeClock(time.Now())
	metrics, reviews := env.guardedMetrics(t, metricsauth.Options{Clock: clock})
	env.allowToGetMetrics(t, "prometheus-every-10s")
	token := "Bearer " + env.token(t, "prometheus-every-10s")

	scrapeOK := func() {
		t.Helper()
		if code, body := scrape(metrics, "", "", token); code != http.StatusOK {
			t.Fatalf("got %d %q, want 200", code, body)
		}
	}
	for range 6 { // every 10 s for a minute
		scrapeOK()
		clock.Step(10 * time.Second)
	}
	reviews.expect(t, 1, 1)
	clock.Step(time.Second) // 61 s: the user is looked up again, the decision still holds
	scrapeOK()
	reviews.expect(t, 2, 1)
	clock.Step(4 * time.Minute) // 301 s: both are asked again
	scrapeOK()
	reviews.expect(t, 3, 2)
}

// A denied scraper is asked about again after 30 seconds, so a ClusterRoleBinding made for it
// takes effect that soon, without a restart of the manager.
func TestADeniedScraperIsAllowedOnceTheDenialExpires(t *testing.T) {
	env := startAPIServer(t)
	clock := clocktesting.NewFakeClock(time.Now())
	metrics, reviews := env.guardedMetrics(t, metricsauth.Options{Clock: clock})
	token := "Bearer " + env.token(t, "prometheus-new")

	for range 3 {
		if code, body := scrape(metrics, "", "", token); code != http.StatusForbidden {
			t.Fatalf("before the binding: got %d %q, want 403", code, body)
		}
	}
	reviews.expect(t, 1, 1)

	env.allowToGetMetrics(t, "prometheus-new")
	if code, _ := scrape(metrics, "", "", token); code != http.StatusForbidden {
		t.Errorf("within 30 s of the denial: got %d, want the cached 403", code)
	}
	clock.Step(31 * time.Second)
	if code, body := scrape(metrics, "", "", token); code != http.StatusOK {
		t.Errorf("after 30 s: got %d %q, want 200", code, body)
	}
	reviews.expect(t, 1, 2)
}

type apiServer struct {
	cfg    *rest.Config
	client kubernetes.Interface
}

// shared is the one kube-apiserver of this package's tests, started by the first that needs it
// and stopped by TestMain; each test uses ServiceAccounts of its own.
var shared struct {
	once sync.Once
	env  *envtest.Environment
	api  *apiServer
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		_ = shared.env.Stop()
	}
	os.Exit(code)
}

// startAPIServer returns kube-apiserver (RBAC on, ServiceAccount tokens signed) with the
// monitoring namespace.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	shared.once.Do(func() {
		var cfg *rest.Config
		if shared.env, cfg, shared.err = localenv.StartControlPlane(localenv.ControlPlaneOptions{}); shared.err != nil {
			return
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			shared.err = err
			return
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
		if _, shared.err = client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); shared.err != nil {
			return
		}
		shared.api = &apiServer{cfg: cfg, client: client}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.api
}

// guardedMetrics returns a /metrics handler behind the filter, as the metrics server builds it
// with the manager's own identity, and the count of the reviews it asks for.
func (a *apiServer) guardedMetrics(t *testing.T, opts metricsauth.Options) (http.Handler, *reviewCount) {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	reviews := &reviewCount{next: httpClient.Transport}
	httpClient.Transport = reviews
	filter, err := opts.FilterProvider(a.cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	handler, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("osm_s3_requests_total 0\n"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	return handler, reviews
}

// token creates the ServiceAccount and returns a token for it, as a TokenRequest (what a
// projected volume mounts into a Prometheus pod).
func (a *apiServer) token(t *testing.T, serviceAccount string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: serviceAccount}}
	if _, err := a.client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	tr, err := a.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// allowToGetMetrics binds the ServiceAccount to a ClusterRole with get on /metrics, and waits
// until the API server's authorizer has seen the binding.
func (a *apiServer) allowToGetMetrics(t *testing.T, serviceAccount string) {
	t.Helper()
	ctx := context.Background()
	name := "metrics-reader-" + serviceAccount
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	if _, err := a.client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: serviceAccount}},
	}
	if _, err := a.client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  "system:serviceaccount:" + namespace + ":" + serviceAccount,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("the API server did not allow %s to get /metrics: %v", serviceAccount, err)
	}
}

// scrape sends method (GET when empty) path (/metrics when empty) with the Authorization header
// (none when empty).
func scrape(h http.Handler, method, path, authorization string) (int, string) {
	if method == "" {
		method = http.MethodGet
	}
	if path == "" {
		path = "/metrics"
	}
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// reviewCount counts the TokenReviews and SubjectAccessReviews sent through it.
type reviewCount struct {
	next http.RoundTripper

	mu                          sync.Mutex
	tokenReviews, accessReviews int
}

func (c *reviewCount) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	switch {
	case strings.HasSuffix(req.URL.Path, "/tokenreviews"):
		c.tokenReviews++
	case strings.HasSuffix(req.URL.Path, "/subjectaccessreviews"):
		c.accessReviews++
	}
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *reviewCount) expect(t *testing.T, tokenReviews, accessReviews int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokenReviews != tokenReviews || c.accessReviews != accessReviews {
		t.Errorf("%d TokenReviews and %d SubjectAccessReviews, want %d and %d",
			c.tokenReviews, c.accessReviews, tokenReviews, accessReviews)
	}
}
