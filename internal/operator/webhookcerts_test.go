package operator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestSelfManagedCerts(t *testing.T) {
	valid := func() SelfManagedCerts {
		return SelfManagedCerts{
			Secret:                         types.NamespacedName{Namespace: "osm-system", Name: "osm-webhook-server-cert"},
			Service:                        "osm-webhook-service",
			MutatingWebhookConfiguration:   "osm-mutating-webhook-configuration",
			ValidatingWebhookConfiguration: "osm-validating-webhook-configuration",
		}
	}
	c := valid()
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v for a complete configuration", err)
	}
	c.ExtraDNSNames = []string{"localhost"}
	want := []string{"osm-webhook-service.osm-system.svc", "osm-webhook-service.osm-system.svc.cluster.local", "localhost"}
	if diff := cmp.Diff(want, c.DNSNames()); diff != "" {
		t.Errorf("DNSNames() (-want +got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		edit func(*SelfManagedCerts)
		want []string
	}{
		// Outside a Pod nothing sets POD_NAMESPACE: the flag must say so rather than the
		// rotator failing later on a Secret in namespace "".
		"no namespace": {func(c *SelfManagedCerts) { c.Secret.Namespace = "" }, []string{"--webhook-namespace (or POD_NAMESPACE)"}},
		"bad names": {func(c *SelfManagedCerts) {
			c.Service, c.ValidatingWebhookConfiguration, c.ExtraDNSNames = "Web_Hook", "", []string{"-x"}
		}, []string{"--webhook-service \"Web_Hook\"", "--validating-webhook-configuration \"\"", "--webhook-cert-extra-dns-names \"-x\""}},
	} {
		t.Run(name, func(t *testing.T) {
			c := valid()
			tc.edit(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to name %s", err, w)
				}
			}
		})
	}
}
