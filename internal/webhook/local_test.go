package webhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

func TestLocalConfigurations(t *testing.T) {
	manifests, err := os.ReadFile(filepath.Join("..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	out, err := LocalConfigurations(manifests, "https://127.0.0.1:9443/", ca)
	if err != nil {
		t.Fatalf("LocalConfigurations() error = %v", err)
	}
	docs := strings.Split(strings.TrimPrefix(string(out), "---\n"), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("got %d documents, want 2:\n%s", len(docs), out)
	}
	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &mutating); err != nil {
		t.Fatal(err)
	}
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &validating); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range mutating.Webhooks {
		got[w.Name] = clientConfigString(w.ClientConfig)
	}
	for _, w := range validating.Webhooks {
		got[w.Name] = clientConfigString(w.ClientConfig)
	}
	want := map[string]string{
		"mapplication-v1alpha1.osm.dev":  "url=https://127.0.0.1:9443/mutate-paas-osm-dev-v1alpha1-application ca=true service=false",
		"vapplication-v1alpha1.osm.dev":  "url=https://127.0.0.1:9443/validate-paas-osm-dev-v1alpha1-application ca=true service=false",
		"mbucket-v1alpha1.osm.dev":       "url=https://127.0.0.1:9443/mutate-storage-osm-dev-v1alpha1-bucket ca=true service=false",
		"mbucketaccess-v1alpha1.osm.dev": "url=https://127.0.0.1:9443/mutate-storage-osm-dev-v1alpha1-bucketaccess ca=true service=false",
		"mcontract-v1alpha1.osm.dev":     "url=https://127.0.0.1:9443/mutate-storage-osm-dev-v1alpha1-contract ca=true service=false",
		"vbucket-v1alpha1.osm.dev":       "url=https://127.0.0.1:9443/validate-storage-osm-dev-v1alpha1-bucket ca=true service=false",
		"vbucketaccess-v1alpha1.osm.dev": "url=https://127.0.0.1:9443/validate-storage-osm-dev-v1alpha1-bucketaccess ca=true service=false",
		"vcontract-v1alpha1.osm.dev":     "url=https://127.0.0.1:9443/validate-storage-osm-dev-v1alpha1-contract ca=true service=false",
		"vabandon-v1alpha1.osm.dev":      "url=https://127.0.0.1:9443/validate-storage-osm-dev-v1alpha1-abandon ca=true service=false",
		"vretain-v1alpha1.osm.dev":       "url=https://127.0.0.1:9443/validate-storage-osm-dev-v1alpha1-retain ca=true service=false",
		"vempty-v1alpha1.osm.dev":        "url=https://127.0.0.1:9443/validate-storage-osm-dev-v1alpha1-empty ca=true service=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client configs mismatch (-want +got):\n%s", diff)
	}
	if mutating.Kind != "MutatingWebhookConfiguration" || validating.APIVersion != "admissionregistration.k8s.io/v1" {
		t.Errorf("type meta lost: %q %q", mutating.Kind, validating.APIVersion)
	}
}

func clientConfigString(cc admissionregistrationv1.WebhookClientConfig) string {
	url := ""
	if cc.URL != nil {
		url = *cc.URL
	}
	return "url=" + url + " ca=" + boolString(strings.Contains(string(cc.CABundle), "BEGIN CERTIFICATE")) + " service=" + boolString(cc.Service != nil)
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestLocalConfigurationsErrors(t *testing.T) {
	tests := []struct {
		name      string
		manifests string
		ca        string
		want      string
	}{
		{name: "no CA", manifests: "kind: ValidatingWebhookConfiguration\n", ca: " ", want: "empty CA bundle"},
		{name: "nothing", manifests: "---\n", ca: "x", want: "no webhook configurations in the manifests"},
		{name: "other kind", manifests: "apiVersion: v1\nkind: Service\n", ca: "x", want: `unexpected kind "Service" in webhook manifests`},
		{name: "no path", manifests: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nwebhooks:\n- name: v.example.com\n  clientConfig:\n    url: https://example.com\n", ca: "x",
			want: "webhook v.example.com has no service path to point at https://127.0.0.1:9443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LocalConfigurations([]byte(tt.manifests), "https://127.0.0.1:9443", []byte(tt.ca))
			if err == nil || err.Error() != tt.want {
				t.Errorf("LocalConfigurations() error = %v, want %q", err, tt.want)
			}
		})
	}
}
