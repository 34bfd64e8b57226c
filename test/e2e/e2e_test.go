package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if _, err := exec.LookPath("kubectl"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", errKubectlMissing)
		os.Exit(1)
	}
	code := m.Run()
	if denials := rbacDenials(managerLogPath()); len(denials) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: the manager was refused by RBAC %d times: the install's role lacks a permission; first: %s\n",
			len(denials), denials[0])
		code = 1
	}
	if dev != nil {
		for _, err := range dev.stop() {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			code = 1
		}
	}
	if code != 0 {
		printDiagnostics()
	}
	if dev != nil {
		_ = os.RemoveAll(dev.root)
	}
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// requireEnv returns the environment, starting osm-dev if this is the first test to need it.
func requireEnv(t *testing.T) *Env {
	t.Helper()
	env, err := environment()
	if err != nil {
		t.Fatalf("local environment: %v", err)
	}
	return env
}

// TestFixtures checks every case.yaml without running anything, so a typo shows up as such.
func TestFixtures(t *testing.T) {
	if _, err := loadCases("fixtures"); err != nil {
		t.Fatal(err)
	}
}

// TestEnvironment checks what osm-dev promises before the cases rely on it.
func TestEnvironment(t *testing.T) {
	env := requireEnv(t)
	if dev != nil {
		for field, got := range map[string]string{
			"apiServer":   env.APIServer,
			"s3Endpoint":  env.S3Endpoint,
			"contractAPI": env.ContractAPI,
		} {
			want := map[string]string{
				"apiServer":   "https://127.0.0.1:" + strconv.Itoa(dev.ports["api-port"]),
				"s3Endpoint":  "http://127.0.0.1:" + strconv.Itoa(dev.ports["s3-port"]),
				"contractAPI": "http://127.0.0.1:" + strconv.Itoa(dev.ports["contract-api-port"]),
			}[field]
			if got != want {
				t.Errorf("env.json %s = %q, want %q", field, got, want)
			}
		}
		if env.S3Region != "us-east-1" {
			t.Errorf("env.json s3Region = %q, want us-east-1", env.S3Region)
		}
		logs, err := os.ReadDir(filepath.Join(dev.stateDir, "logs"))
		if err != nil || len(logs) == 0 {
			t.Errorf("no component logs under %s: %v", filepath.Join(dev.stateDir, "logs"), err)
		}
	}
	for field, path := range map[string]string{
		"kubeconfig": env.Kubeconfig, "contractAPITokenFile": env.ContractAPITokenFile, "managerLog": env.ManagerLog,
		"managerKubeconfig": env.ManagerKubeconfig,
	} {
		if !filepath.IsAbs(path) {
			t.Errorf("env.json %s = %q, want an absolute path", field, path)
		} else if _, err := os.Stat(path); err != nil {
			t.Errorf("env.json %s: %v", field, err)
		}
	}

	k := &kubectl{env: env, logf: t.Logf}
	if _, err := k.must(time.Minute, "get", "namespace", "demo"); err != nil {
		t.Errorf("namespace demo: %v", err)
	}
	if _, err := k.must(time.Minute, "wait", "--for=condition=Established", "--timeout=30s",
		"crd/contracts.storage.osm.dev", "crd/buckets.storage.osm.dev"); err != nil {
		t.Errorf("CRDs: %v", err)
	}
	for _, kind := range []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"} {
		out, err := k.must(time.Minute, "get", kind, "-o", "jsonpath={.items[*].webhooks[*].failurePolicy}")
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		policies := strings.Fields(out)
		if len(policies) == 0 {
			t.Errorf("no %s", kind)
		}
		for _, p := range policies {
			if p != "Fail" {
				t.Errorf("%s: a webhook has failurePolicy %s, want Fail", kind, p)
			}
		}
	}
}

// TestCases runs every fixture under fixtures/, each in a namespace of its own, in parallel.
func TestCases(t *testing.T) {
	cases, err := loadCases("fixtures")
	if err != nil {
		t.Fatal(err)
	}
	env := requireEnv(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			newRun(t, env, c).steps()
			t.Logf("%s: %s", c.Name, time.Since(start).Round(time.Second))
		})
	}
}
