package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

func TestInstallArgs(t *testing.T) {
	install := []string{
		"--leader-elect", "--health-probe-bind-address=:8081", "--contract-api-url", "https://contracts.example.com",
		"--resync-period=5m", "--webhook-cert-dir=/tmp/certs",
	}
	local := map[string]bool{"health-probe-bind-address": true, "contract-api-url": true, "webhook-cert-dir": true}
	for _, tc := range []struct {
		name           string
		leaderElection bool
		want           []string
	}{
		{"the install's other flags kept", true, []string{"--leader-elect", "--resync-period=5m"}},
		{"without leader election (a debugger)", false, []string{"--resync-period=5m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, installArgs(install, local, tc.leaderElection)); diff != "" {
				t.Errorf("installArgs() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderInstall renders the shipped config/default: the manager's ServiceAccount, the
// bindings that grant it its roles, and its Deployment's flags and environment.
func TestRenderInstall(t *testing.T) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	e := &environment{root: root}
	in, err := e.renderInstall(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if in.namespace != "object-storage-manager-system" || in.serviceAccount != "object-storage-manager-controller-manager" {
		t.Errorf("manager runs as %s/%s, want object-storage-manager-system/object-storage-manager-controller-manager",
			in.namespace, in.serviceAccount)
	}
	if !slices.Contains(in.args, "--leader-elect") {
		t.Errorf("the Deployment's args %v lack --leader-elect", in.args)
	}
	// The runtime's tuning reaches the manager osm-dev runs; POD_NAMESPACE, from a field of the
	// pod, does not.
	if !slices.Contains(in.env, "GODEBUG=gcshrinkstackoff=1") || slices.ContainsFunc(in.env, func(v string) bool { return strings.HasPrefix(v, "POD_NAMESPACE=") }) {
		t.Errorf("the manager's environment is %v, want the Deployment's GODEBUG and no POD_NAMESPACE", in.env)
	}
	var kinds []string
	bound := 0
	for _, o := range in.objects {
		kinds = append(kinds, o.GetKind())
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m, _ := s.(map[string]any)
			if m["kind"] == "ServiceAccount" && m["name"] == in.serviceAccount && m["namespace"] == in.namespace {
				bound++
			}
		}
	}
	for _, k := range installKinds {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s among the install's objects %v", k, kinds)
		}
	}
	if bound < 3 {
		t.Errorf("%d bindings name the manager's ServiceAccount, want its role, leader election and metrics auth", bound)
	}
}
