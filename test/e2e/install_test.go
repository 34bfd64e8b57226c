package e2e

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// The manager runs as the install makes it run: these names come from config/default.
const (
	managerNamespace      = "object-storage-manager-system"
	managerServiceAccount = "object-storage-manager-controller-manager"
	leaseName             = "object-storage-manager.osm.dev"
)

// TestManagerRunsAsInstalled checks that osm-dev runs the manager under the install's
// ServiceAccount, with its leader election and its authenticated /metrics.
func TestManagerRunsAsInstalled(t *testing.T) {
	t.Parallel()
	env := requireEnv(t)
	// The identity osm-dev hands the manager.
	asManager := &kubectl{env: &Env{Kubeconfig: env.ManagerKubeconfig}, logf: t.Logf}
	who, err := asManager.must(time.Minute, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if want := "system:serviceaccount:" + managerNamespace + ":" + managerServiceAccount; err != nil || who != want {
		t.Errorf("the manager's kubeconfig authenticates as %q (%v), want %q", who, err, want)
	}
	// --leader-elect, from the install's Deployment: the lease is held in the manager's namespace,
	// a moment after osm-dev is ready (the manager's /readyz does not wait for the election).
	k := &kubectl{env: env, namespace: managerNamespace, logf: t.Logf}
	pollJSONPath(t, k, "lease/"+leaseName, "{.spec.holderIdentity}", time.Minute)

	// /metrics asks the API server who the caller is and whether they may (TokenReview and
	// SubjectAccessReview, under the manager's own RBAC).
	token := adminToken(t, env.Kubeconfig)
	for _, c := range []struct {
		name, token string
		want        int
	}{
		{"without a token", "", http.StatusUnauthorized},
		{"with the admin's token", token, http.StatusOK},
	} {
		if got := getMetrics(t, env.ManagerMetrics, c.token); got != c.want {
			t.Errorf("GET %s %s: %d, want %d", env.ManagerMetrics, c.name, got, c.want)
		}
	}
}

func adminToken(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil || cfg.AuthInfos[ctx.AuthInfo].Token == "" {
		t.Fatalf("%s: no token for the current context", kubeconfig)
	}
	return cfg.AuthInfos[ctx.AuthInfo].Token
}

// getMetrics returns the status of GET url. The manager's metrics certificate is self-signed,
// as controller-runtime makes it without one given.
func getMetrics(t *testing.T, url, token string) int {
	t.Helper()
	resp := metricsResponse(t, url, token)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// metricsResponse is the answer to GET url with token (none when ""); the caller closes it.
func metricsResponse(t *testing.T, url, token string) *http.Response {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, on 127.0.0.1
	}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}

// rbacDenials returns the lines of the manager's log where the API server refused it for want
// of a permission: with the manager under the install's RBAC, each is a gap in that RBAC.
func rbacDenials(logPath string) []string {
	raw, err := os.ReadFile(logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, `User \"system:serviceaccount:`) && strings.Contains(line, `\" cannot `) ||
			strings.Contains(line, `User "system:serviceaccount:`) && strings.Contains(line, `" cannot `) {
			out = append(out, line)
		}
	}
	return out
}

func TestRBACDenials(t *testing.T) {
	log := filepath.Join(t.TempDir(), "manager.log")
	lines := []string{
		// klog, as client-go's event broadcaster writes it.
		`E1125 10:29:39.441618   23477 event.go:365] "Server rejected event (will not retry!)" err="events is forbidden: User \"system:serviceaccount:object-storage-manager-system:object-storage-manager-controller-manager\" cannot create resource \"events\" in API group \"\" in the namespace \"object-storage-manager-system\""`,
		// A namespace being deleted refuses new objects: not a gap in the RBAC.
		`{"level":"error","msg":"Server rejected event (will not retry!)","error":"events.events.k8s.io \"x\" is forbidden: unable to create new content in namespace demo because it is being terminated"}`,
		`{"level":"info","msg":"Starting workers","controller":"bucket"}`,
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := rbacDenials(log); len(got) != 1 || got[0] != lines[0] {
		t.Errorf("rbacDenials() = %q, want only the first line", got)
	}
}
