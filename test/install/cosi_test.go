package install

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The COSI driver's pod holds COSI's sidecar, a third party's image, under the driver's
// ServiceAccount. With watchNamespaces, that ServiceAccount may touch Secrets (and read
// Contracts) only in those namespaces, nowhere else and not cluster-wide; cluster-wide it may in
// every namespace, or COSI could not work there. Either way the driver runs as one pod replaced
// by Recreate, never two at once from a rolling update (docs/cosi.md).
func TestCOSIChartGrantsSecretsOnlyWhereItServesAndRunsOneDriver(t *testing.T) {
	root := moduleRoot(t)
	helm := ensureHelm(t)
	chart := filepath.Join(root, "charts", "object-storage-manager")
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: installName + "-cosi-driver", Namespace: installNamespace}
	secrets := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}}
	contracts := rbacv1.PolicyRule{APIGroups: []string{"storage.osm.dev"}, Resources: []string{"contracts"}}
	leases := rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}}

	for _, tt := range []struct {
		name string
		set  []string
		// want are the verbs of each rule by where it is granted ("" for cluster-wide).
		wantSecrets, wantContracts map[string][]string
	}{{
		name:          "some namespaces",
		set:           []string{"watchNamespaces={team-a,team-b}"},
		wantSecrets:   map[string][]string{"team-a": {"create", "get", "update"}, "team-b": {"create", "get", "update"}},
		wantContracts: map[string][]string{"team-a": {"get"}, "team-b": {"get"}},
	}, {
		name:          "cluster-wide",
		set:           []string{"clusterWide=true"},
		wantSecrets:   map[string][]string{"": {"create", "get", "update"}},
		wantContracts: map[string][]string{"": {"get"}},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"template", installName, chart, "--namespace", installNamespace, "--set", "contractAPI.url=" + contractAPIURL,
				"--set", "cosi.enabled=true", "--set", "cosi.sidecar.image=registry.example.com/objectstorage-sidecar:v0.1.0"}
			for _, s := range tt.set {
				args = append(args, "--set", s)
			}
			objs := decode(t, run(t, root, nil, helm, args...))
			grants := grantsTo(t, objs, sa)
			if diff := cmp.Diff(tt.wantSecrets, verbsOf(grants, secrets)); diff != "" {
				t.Errorf("Secret verbs by namespace (\"\": cluster-wide) (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantContracts, verbsOf(grants, contracts)); diff != "" {
				t.Errorf("Contract verbs by namespace (\"\": cluster-wide) (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string][]string{installNamespace: {"create", "get", "update"}}, verbsOf(grants, leases)); diff != "" {
				t.Errorf("Lease verbs (the sidecar's and the driver's write lease) (-want +got):\n%s", diff)
			}

			var d appsv1.Deployment
			convert(t, find(t, objs, "Deployment", installNamespace, installName+"-cosi-driver"), &d)
			if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
				t.Errorf("the driver's Deployment: strategy %q, replicas %v; want Recreate and 1, so that no two drivers run at once",
					d.Spec.Strategy.Type, d.Spec.Replicas)
			}
		})
	}
}

// grant is a rule granted to a subject, in a namespace ("" for cluster-wide).
type grant struct {
	namespace string
	rule      rbacv1.PolicyRule
}

// grantsTo resolves every binding of the rendered objects that names subject to the rules of
// its role.
func grantsTo(t *testing.T, objs []*unstructured.Unstructured, subject rbacv1.Subject) []grant {
	t.Helper()
	rules := func(kind, namespace, name string) []rbacv1.PolicyRule {
		var role rbacv1.Role // a ClusterRole's rules convert the same way
		convert(t, find(t, objs, kind, namespace, name), &role)
		return role.Rules
	}
	var out []grant
	for _, o := range objs {
		if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding // a ClusterRoleBinding converts the same way
		convert(t, o, &b)
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == subject.Kind && s.Name == subject.Name && s.Namespace == subject.Namespace
		}) {
			continue
		}
		roleNamespace := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			roleNamespace = ""
		}
		for _, r := range rules(b.RoleRef.Kind, roleNamespace, b.RoleRef.Name) {
			out = append(out, grant{namespace: o.GetNamespace(), rule: r})
		}
	}
	return out
}

// verbsOf are the verbs granted on what rule names (its API groups and resources, "*" included),
// by namespace, sorted.
func verbsOf(grants []grant, rule rbacv1.PolicyRule) map[string][]string {
	covers := func(have []string, want string) bool {
		return slices.Contains(have, want) || slices.Contains(have, "*")
	}
	out := map[string][]string{}
	for _, g := range grants {
		if !covers(g.rule.APIGroups, rule.APIGroups[0]) || !covers(g.rule.Resources, rule.Resources[0]) {
			continue
		}
		for _, v := range g.rule.Verbs {
			if !slices.Contains(out[g.namespace], v) {
				out[g.namespace] = append(out[g.namespace], v)
			}
		}
		slices.Sort(out[g.namespace])
	}
	return out
}
