package storage_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

var _ = Describe("The manager's /metrics", func() {
	It("is served to a ServiceAccount allowed to read it, with the calls and resources the operator made, and to no one else", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		c := newContract(ns, "acc")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		contractReady(ctx, c)
		b := newBucket(ns, "metrics", "acc")
		Expect(k8s.Create(ctx, b)).To(Succeed())
		bucketReady(ctx, b)

		scraper := serviceAccountToken(ctx, ns, "prometheus")
		stranger := serviceAccountToken(ctx, ns, "stranger")
		binding := "metrics-reader-" + ns
		Expect(stk.BindClusterRole(ctx, binding, stack.MetricsReaderRoleName, ns, "prometheus")).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8s.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding}})).To(Succeed())
		})

		By("refusing a caller without a token, and one the API server does not allow")
		Expect(scrape(ctx, "")).To(HaveField("Code", http.StatusUnauthorized))
		Expect(scrape(ctx, stranger)).To(HaveField("Code", http.StatusForbidden))

		By("serving the operator's own metrics to the scraper")
		Eventually(func(g Gomega) {
			got := scrape(ctx, scraper)
			g.Expect(got.Code).To(Equal(http.StatusOK))
			g.Expect(got.Body).To(MatchRegexp(`osm_s3_requests_total\{code="200",operation="CreateBucket"\} [1-9]`))
			g.Expect(got.Body).To(MatchRegexp(`osm_contract_api_requests_total\{code="20[01]",operation="POST /v1/contracts"\} [1-9]`))
			g.Expect(got.Body).To(MatchRegexp(`osm_resources\{kind="Bucket",ready="True",reason="[A-Za-z]+"\} [1-9]`))
			g.Expect(got.Body).To(ContainSubstring("controller_runtime_reconcile_total"))
		}).Should(Succeed())
	})
})

// serviceAccountToken creates a ServiceAccount and returns a short-lived token for it.
func serviceAccountToken(ctx context.Context, ns, name string) string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	Expect(k8s.Create(ctx, sa)).To(Succeed())
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	Expect(k8s.SubResource("token").Create(ctx, sa, req)).To(Succeed())
	return req.Status.Token
}

type scraped struct {
	Code int
	Body string
}

// scrape gets the manager's /metrics with an optional bearer token.
func scrape(ctx context.Context, token string) scraped {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stk.MetricsURL(), nil)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The manager serves a self-signed certificate unless it is given one, as in a cluster
	// where the scraper is configured to skip verification or trust a mounted CA.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a loopback test server
	resp, err := (&http.Client{Transport: tr}).Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return scraped{Code: resp.StatusCode, Body: string(body)}
}
