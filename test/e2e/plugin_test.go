package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// osm runs `kubectl osm ARGS` as a user would type it: kubectl finds the plugin, built from
// this tree, on PATH. Its output is never logged whole: env prints a secret key.
func osm(t *testing.T, k *kubectl, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	// kubectl takes no flag before a plugin's name: they all go to the plugin.
	full := append([]string{"osm", "--kubeconfig", k.env.Kubeconfig, "-n", k.namespace}, args...)
	t.Logf("$ kubectl osm -n %s %s", k.namespace, strings.Join(args, " "))
	ctx, cancel := context.WithTimeout(context.Background(), quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", full...)
	cmd.Env = append(os.Environ(), "PATH="+pluginDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestPlugin runs each subcommand of kubectl osm against the suite's osm-dev: trace of a
// Bucket whose Contract is not Ready shows the tree and marks the Contract; env prints what a
// shell loads, the keys of the Secret, and refuses a terminal; status sums the namespace up.
func TestPlugin(t *testing.T) {
	t.Parallel()
	env := requireEnv(t)
	k := newNamespace(t, env, "plugin")
	applyText(t, k, fmt.Sprintf(`apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: gold
spec:
  plan: gold
---
apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: reports
spec:
  bucketName: %[1]s-reports
  contractName: gold
---
apiVersion: storage.osm.dev/v1alpha1
kind: Contract
metadata:
  name: owner
spec:
  plan: standard
  reclaimPolicy: Delete
---
apiVersion: storage.osm.dev/v1alpha1
kind: Bucket
metadata:
  name: data
spec:
  bucketName: %[1]s-data
  contractName: owner
  bucketReclaimPolicy: Delete
`, k.namespace))
	waitFor(t, k, appTimeout, "jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}=ContractAPIRejected", "contract/gold")
	waitFor(t, k, appTimeout, "jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}=ContractNotReady", "bucket/reports")
	waitFor(t, k, appTimeout, "condition=Ready", "bucket/data")
	applyText(t, k, `apiVersion: storage.osm.dev/v1alpha1
kind: BucketAccess
metadata:
  name: reader
spec:
  bucket: data
  access: ReadOnly
`)
	waitFor(t, k, appTimeout, "condition=Ready", "bucketaccess/reader")

	t.Run("trace", func(t *testing.T) {
		out, stderr, err := osm(t, k, "trace", "bucket/reports")
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		t.Logf("\n%s", out)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		want := []*regexp.Regexp{
			regexp.MustCompile(`^  NAME +READY +REASON +MESSAGE$`),
			regexp.MustCompile(`^  Bucket/reports +False +ContractNotReady +Contract gold is not Ready \(ContractAPIRejected: .*gold.*\)$`),
			regexp.MustCompile(`^> └─ Contract/gold +False +ContractAPIRejected +The contract API refused .*$`),
			regexp.MustCompile(`^     └─ Secret/gold-credentials +- +NotFound +Secret gold-credentials does not exist .*$`),
			regexp.MustCompile(`^$`),
			regexp.MustCompile(`^> Contract/gold is the first not Ready \(ContractAPIRejected\)\. More: kubectl -n ` + k.namespace +
				` describe contract gold; what to do: docs/troubleshooting\.md#contractapirejected$`),
		}
		if len(lines) != len(want) {
			t.Fatalf("trace printed %d lines, want %d", len(lines), len(want))
		}
		for i, re := range want {
			if !re.MatchString(lines[i]) {
				t.Errorf("line %d: %q does not match %s", i+1, lines[i], re)
			}
		}

		// Everything Ready: the tree of the other Bucket, with its BucketAccess, and no mark.
		out, stderr, err = osm(t, k, "trace", "bucket", "data")
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		for _, want := range []string{"Contract/owner", "Secret/owner-credentials", "BucketAccess/reader", "Secret/reader-credentials", "Everything above is Ready."} {
			if !strings.Contains(out, want) {
				t.Errorf("trace bucket data lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "\n>") {
			t.Errorf("trace of a Ready tree marks something:\n%s", out)
		}
	})

	t.Run("env", func(t *testing.T) {
		out, stderr, err := osm(t, k, "env", "bucketaccess/reader")
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		vars := map[string]string{}
		line := regexp.MustCompile(`^export ([A-Z_]+)='([^']*)'$`)
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("env printed a line that is not an export: %q", strings.SplitN(l, "=", 2)[0])
			}
			vars[m[1]] = m[2]
		}
		secret, err := k.must(quick, "get", "secret", "reader-credentials", "-o", "jsonpath={.data}")
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION", "BUCKET_NAME"} {
			encoded := regexp.MustCompile(`"` + key + `":"([^"]*)"`).FindStringSubmatch(secret)
			if encoded == nil {
				t.Fatalf("Secret reader-credentials has no %s", key)
			}
			want, _ := base64.StdEncoding.DecodeString(encoded[1])
			if vars[key] != string(want) {
				t.Errorf("env's %s is not the Secret's", key) // never print a secret
			}
		}
		if vars["BUCKET_NAME"] != k.namespace+"-data" {
			t.Errorf("BUCKET_NAME = %q, want %s-data", vars["BUCKET_NAME"], k.namespace)
		}

		// In a terminal (script gives it one), env refuses and prints no key.
		script := fmt.Sprintf("PATH=%s:$PATH kubectl osm --kubeconfig %s -n %s env bucketaccess/reader", pluginDir(t), env.Kubeconfig, k.namespace)
		ctx, cancel := context.WithTimeout(context.Background(), quick)
		defer cancel()
		tty, _ := exec.CommandContext(ctx, "script", "-qec", script, "/dev/null").CombinedOutput()
		if strings.Contains(string(tty), vars["AWS_SECRET_ACCESS_KEY"]) {
			t.Fatal("env printed the secret key to a terminal")
		}
		if !strings.Contains(string(tty), "stdout is a terminal") || !strings.Contains(string(tty), "--show") {
			t.Errorf("env in a terminal: %q, want the refusal that names --show", tty)
		}
	})

	t.Run("status", func(t *testing.T) {
		out, stderr, err := osm(t, k, "status")
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		t.Logf("\n%s", out)
		for _, re := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^Namespace ` + k.namespace + `$`),
			regexp.MustCompile(`(?m)^  Contract +2 +1 +ContractAPIRejected 1$`),
			regexp.MustCompile(`(?m)^  Bucket +2 +1 +ContractNotReady 1$`),
			regexp.MustCompile(`(?m)^  BucketAccess +1 +1$`),
		} {
			if !re.MatchString(out) {
				t.Errorf("status does not match %s", re)
			}
		}
		if strings.Contains(out, "Namespace demo") {
			t.Errorf("status -n %s shows another namespace", k.namespace)
		}
	})

	// The Bucket of the Contract that was never bought goes with it; the rest with the namespace.
	if _, err := k.must(time.Minute, "delete", "bucket/reports", "contract/gold"); err != nil {
		t.Error(err)
	}
}
