// Package alerts tests the Helm chart's alert rules as they ship, with Prometheus's own
// `promtool test rules`, on series shaped like the manager's metrics.
package alerts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// rulesTest feeds the rules series of the manager's metrics and says which alerts must fire
// when. The buckets: photos at 95% of its size quota, logs at 10%, docs at its object quota,
// and mixed, whose size is low but whose objects are at 95%: every limit counts, not only the
// first the rule names.
const rulesTest = `rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - {series: 'osm_bucket_size_bytes{namespace="demo",bucket="photos"}', values: '950x30'}
  - {series: 'osm_bucket_quota_bytes{namespace="demo",bucket="photos"}', values: '1000x30'}
  - {series: 'osm_bucket_size_bytes{namespace="demo",bucket="logs"}', values: '100x30'}
  - {series: 'osm_bucket_quota_bytes{namespace="demo",bucket="logs"}', values: '1000x30'}
  - {series: 'osm_bucket_objects{namespace="demo",bucket="docs"}', values: '3x30'}
  - {series: 'osm_bucket_quota_objects{namespace="demo",bucket="docs"}', values: '3x30'}
  - {series: 'osm_bucket_size_bytes{namespace="demo",bucket="mixed"}', values: '10x30'}
  - {series: 'osm_bucket_quota_bytes{namespace="demo",bucket="mixed"}', values: '1000x30'}
  - {series: 'osm_bucket_objects{namespace="demo",bucket="mixed"}', values: '19x30'}
  - {series: 'osm_bucket_quota_objects{namespace="demo",bucket="mixed"}', values: '20x30'}
  - {series: 'osm_resources{kind="BucketAccess",ready="False",reason="AccessMismatch"}', values: '0 0 2x28'}
  - {series: 'osm_resources{kind="BucketAccess",ready="True",reason="Available"}', values: '5x30'}
  - {series: 'osm_resources{kind="Contract",ready="False",reason="ContractCancelled"}', values: '1x30'}
  alert_rule_test:
  - {eval_time: 10m, alertname: OSMBucketNearlyFull, exp_alerts: []}
  - eval_time: 20m
    alertname: OSMBucketNearlyFull
    exp_alerts:
%s
  - {eval_time: 11m, alertname: OSMBucketAccessKeyFailedCheck, exp_alerts: []}
  - eval_time: 20m
    alertname: OSMBucketAccessKeyFailedCheck
    exp_alerts:
    - exp_labels: {severity: warning, reason: AccessMismatch}
      exp_annotations:
        summary: '2 BucketAccesses are not Ready: AccessMismatch'
        description: See docs/troubleshooting.md for the reason; kubectl osm status lists them.
  - eval_time: 20m
    alertname: OSMContractKeysUnusable
    exp_alerts:
    - exp_labels: {severity: warning, reason: ContractCancelled}
      exp_annotations:
        summary: '1 Contracts are not Ready: ContractCancelled'
        description: See docs/troubleshooting.md for the reason; kubectl osm status lists them.
`

// nearlyFull is the expected alert of one bucket at share of its quota.
func nearlyFull(bucket, share string) string {
	return fmt.Sprintf(`    - exp_labels: {severity: warning, namespace: demo, bucket: %s}
      exp_annotations:
        summary: 'Bucket demo/%s holds %s of its quota'
        description: The provider refuses writes past the quota. Delete objects, or raise spec.quota of the Bucket.`, bucket, bucket, share)
}

func TestChartAlertRules(t *testing.T) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	promtool := ensurePromtool(t, root)
	rules, err := os.ReadFile(filepath.Join(root, "charts", "object-storage-manager", "files", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The group the chart's template wraps the file in.
	group := "groups:\n- name: object-storage-manager\n  rules:\n" + indent(string(rules), "  ")
	expected := strings.Join([]string{nearlyFull("docs", "100%"), nearlyFull("mixed", "95%"), nearlyFull("photos", "95%")}, "\n")
	for name, body := range map[string]string{"rules.yaml": group, "rules_test.yaml": fmt.Sprintf(rulesTest, expected)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "test", "rules", "rules_test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// ensurePromtool builds promtool into bin/ unless it is there and current (hack/tools/build.sh
// decides), and returns its path. Only this test needs it, so `make tools` leaves it out.
func ensurePromtool(t *testing.T, root string) string {
	t.Helper()
	binDir, err := localenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	promtool := filepath.Join(binDir, "promtool")
	if _, err := os.Stat(promtool); err != nil {
		fmt.Fprintf(os.Stderr, "alerts: promtool is not in %s: building it from the Go module proxy (hack/tools/build.sh promtool)\n", binDir)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "tools", "build.sh"), "promtool")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BIN_DIR="+binDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building promtool: %v\n%s", err, out)
	}
	return promtool
}
