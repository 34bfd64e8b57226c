package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every install ships the powers with a cost (the verbs abandon, retain and empty, docs/install.md) in
// one ClusterRole, <prefix>-cost-admin, that no binding grants and no aggregation spreads, and
// that the manager's refusals name (--cost-admin-role); the manager may ask the API server who
// has them (SubjectAccessReviews) cluster-wide, also when it serves some namespaces only or
// serves no metrics; and the cost guard's webhooks are installed, limited to the served
// namespaces where the others are. Rendering is enough: TestReleaseInstallsAndRuns applies the
// same objects to a real API server.
func TestRenderedRBACGrantsThePowersWithACostToNoOne(t *testing.T) {
	root := moduleRoot(t)
	kustomize := strings.Fields(os.Getenv("KUSTOMIZE"))
	if len(kustomize) == 0 {
		kustomize = []string{"go", "tool", "-modfile=hack/tools/kustomize/go.mod", "kustomize"}
	}
	helm := ensureHelm(t)
	chart := filepath.Join(root, "charts", "object-storage-manager")
	chartArgs := func(release string, set ...string) []string {
		args := []string{helm, "template", release, chart, "--namespace", installNamespace, "--set", "contractAPI.url=" + contractAPIURL}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		return args
	}
	for _, tt := range []struct {
		name   string
		render []string
		prefix string
		// namespaced: the webhooks are called for some namespaces only.
		namespaced bool
	}{
		{name: "config/default", render: append(kustomize, "build", "config/default"), prefix: installName},
		{name: "config/default-certmanager", render: append(kustomize, "build", "config/default-certmanager"), prefix: installName},
		{name: "config/namespaced", render: append(kustomize, "build", "config/namespaced"), prefix: installName, namespaced: true},
		{name: "chart, cluster-wide", render: chartArgs(installName, "clusterWide=true"), prefix: installName},
		{name: "chart, some namespaces, no metrics", render: chartArgs(installName, "watchNamespaces={team-a}", "metrics.enabled=false"),
			prefix: installName, namespaced: true},
		{name: "chart, another release name", render: chartArgs("osm", "clusterWide=true"), prefix: "osm"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := decode(t, run(t, root, nil, tt.render[0], tt.render[1:]...))
			checkCostAdmin(t, objs, tt.prefix)
			checkManagerMayReview(t, objs)
			checkCostGuardWebhooks(t, objs, tt.namespaced)
		})
	}
}

// costVerbs are the powers with a cost.
var costVerbs = []string{"abandon", "retain", "empty"}

// checkCostAdmin checks that exactly one ClusterRole grants a costly verb, <prefix>-cost-admin
// with exactly the shipped rules, not aggregated and bound to no one, and that the manager's
// refusals name it.
func checkCostAdmin(t *testing.T, objs []*unstructured.Unstructured, prefix string) {
	t.Helper()
	want := prefix + "-cost-admin"
	var granting []string
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole // a Role has the same rules
		convert(t, o, &role)
		for _, r := range role.Rules {
			if slices.ContainsFunc(r.Verbs, func(v string) bool { return v == "*" || slices.Contains(costVerbs, v) }) {
				granting = append(granting, o.GetKind()+" "+o.GetName())
				break
			}
		}
		if o.GetName() != want {
			continue
		}
		wantRules := []rbacv1.PolicyRule{
			{APIGroups: []string{"storage.osm.dev"}, Resources: []string{"contracts", "buckets", "bucketaccesses"}, Verbs: []string{"abandon"}},
			{APIGroups: []string{"storage.osm.dev"}, Resources: []string{"contracts"}, Verbs: []string{"retain"}},
			{APIGroups: []string{"storage.osm.dev"}, Resources: []string{"buckets"}, Verbs: []string{"empty"}},
		}
		if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
			t.Errorf("ClusterRole %s: rules (-want +got):\n%s", want, diff)
		}
		if role.AggregationRule != nil {
			t.Errorf("ClusterRole %s aggregates other roles", want)
		}
		for k := range role.Labels {
			if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
				t.Errorf("ClusterRole %s carries label %s: it would be aggregated into a built-in role", want, k)
			}
		}
	}
	if diff := cmp.Diff([]string{"ClusterRole " + want}, granting); diff != "" {
		t.Errorf("roles granting abandon, retain, empty or every verb (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		if name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); name == want {
			t.Errorf("%s %s binds %s: it must be bound by the platform team, to whom it names", o.GetKind(), o.GetName(), want)
		}
	}
	// Without the flag the manager names config/default's role.
	named := flagValue(deploymentOf(t, objs).Spec.Template.Spec.Containers[0].Args, "--cost-admin-role")
	if named == "" {
		named = installName + "-cost-admin"
	}
	if named != want {
		t.Errorf("the manager names ClusterRole %q in its refusals (--cost-admin-role), but the install ships %s", named, want)
	}
}

// checkManagerMayReview checks that a ClusterRoleBinding lets the manager's ServiceAccount create
// SubjectAccessReviews, which are cluster-scoped, so a RoleBinding could not.
func checkManagerMayReview(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	d := deploymentOf(t, objs)
	roles := map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			var role rbacv1.ClusterRole
			convert(t, o, &role)
			roles[role.Name] = role.Rules
		}
	}
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		var b rbacv1.ClusterRoleBinding
		convert(t, o, &b)
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Namespace == d.Namespace && s.Name == d.Spec.Template.Spec.ServiceAccountName
		}) {
			continue
		}
		for _, r := range roles[b.RoleRef.Name] {
			if slices.Contains(r.APIGroups, "authorization.k8s.io") && slices.Contains(r.Resources, "subjectaccessreviews") && slices.Contains(r.Verbs, "create") {
				return
			}
		}
	}
	t.Errorf("no ClusterRoleBinding lets the manager (%s/%s) create SubjectAccessReviews: the cost guard would refuse everyone",
		d.Namespace, d.Spec.Template.Spec.ServiceAccountName)
}

// checkCostGuardWebhooks checks that the validating configuration holds the guard's two
// webhooks, and that with namespaced every webhook has a namespaceSelector.
func checkCostGuardWebhooks(t *testing.T, objs []*unstructured.Unstructured, namespaced bool) {
	t.Helper()
	var names []string
	for _, o := range objs {
		switch o.GetKind() {
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			convert(t, o, &c)
			for _, w := range c.Webhooks {
				names = append(names, w.Name)
				if namespaced && w.NamespaceSelector == nil {
					t.Errorf("webhook %s is called for every namespace; the install serves some only", w.Name)
				}
			}
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			convert(t, o, &c)
			for _, w := range c.Webhooks {
				if namespaced && w.NamespaceSelector == nil {
					t.Errorf("webhook %s is called for every namespace; the install serves some only", w.Name)
				}
			}
		}
	}
	for _, want := range []string{"vabandon-v1alpha1.osm.dev", "vretain-v1alpha1.osm.dev", "vempty-v1alpha1.osm.dev"} {
		if !slices.Contains(names, want) {
			t.Errorf("no validating webhook %s (have %v)", want, names)
		}
	}
}
