package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Every install lets only the API server reach the manager's webhook port and only the metrics
// scrapers its metrics port (docs/security.md): one NetworkPolicy selects the manager's pods,
// with one rule per port and none that opens every port. Rendering is enough here (no network
// plugin enforces anything in the test's control plane); TestReleaseInstallsAndRuns applies the
// same objects to a real API server.
func TestInstallsLetOnlyTheAPIServerAndScrapersIn(t *testing.T) {
	root := moduleRoot(t)
	kustomize := strings.Fields(os.Getenv("KUSTOMIZE"))
	if len(kustomize) == 0 {
		kustomize = []string{"go", "tool", "-modfile=hack/tools/kustomize/go.mod", "kustomize"}
	}
	helm := ensureHelm(t)
	chart := filepath.Join(root, "charts", "object-storage-manager")
	chartArgs := []string{"template", installName, chart, "--namespace", installNamespace, "--set", "contractAPI.url=" + contractAPIURL}
	apiServer := []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.10/32"}}}

	for _, tt := range []struct {
		name        string
		render      []string
		webhookFrom []networkingv1.NetworkPolicyPeer // nil: every source, until the admin narrows it
	}{
		{name: "config/default", render: append(kustomize, "build", "config/default")},
		{name: "config/default-certmanager", render: append(kustomize, "build", "config/default-certmanager")},
		{name: "config/namespaced", render: append(kustomize, "build", "config/namespaced")},
		{name: "chart, cluster-wide", render: append(append([]string{helm}, chartArgs...), "--set", "clusterWide=true")},
		{name: "chart, some namespaces", render: append(append([]string{helm}, chartArgs...), "--set", "watchNamespaces={team-a}")},
		{name: "chart, the API server named", webhookFrom: apiServer, render: append(append([]string{helm}, chartArgs...),
			"--set", "clusterWide=true", "--set", "networkPolicy.webhookFrom[0].ipBlock.cidr=10.0.0.10/32")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := decode(t, run(t, root, nil, tt.render[0], tt.render[1:]...))
			pod := deploymentOf(t, objs).Spec.Template
			var policies []networkingv1.NetworkPolicy
			for _, o := range objs {
				if o.GetKind() != "NetworkPolicy" {
					continue
				}
				var np networkingv1.NetworkPolicy
				convert(t, o, &np)
				sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
				if err != nil {
					t.Fatal(err)
				}
				if np.Namespace == installNamespace && sel.Matches(labels.Set(pod.Labels)) {
					policies = append(policies, np)
				}
			}
			if len(policies) != 1 {
				t.Fatalf("%d NetworkPolicies select the manager's pods, want 1", len(policies))
			}
			checkManagerPolicy(t, policies[0], pod.Spec.Containers[0].Ports, tt.webhookFrom)
		})
	}

	t.Run("chart without a choice of reach", func(t *testing.T) {
		out, err := command(root, nil, helm, chartArgs...)
		if err == nil || !strings.Contains(string(out), "choose the manager's reach: watchNamespaces=") {
			t.Errorf("helm template without watchNamespaces or clusterWide: %v, %s; want it refused, naming both", err, out)
		}
	})
}

// checkManagerPolicy checks that np lets in the API server (webhookFrom; nil: every source) on
// the webhook port, namespaces labelled metrics=enabled on the metrics port, and nothing else.
func checkManagerPolicy(t *testing.T, np networkingv1.NetworkPolicy, ports []corev1.ContainerPort, webhookFrom []networkingv1.NetworkPolicyPeer) {
	t.Helper()
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes = %v, want [Ingress]", np.Spec.PolicyTypes)
	}
	named := map[string]int32{}
	for _, p := range ports {
		named[p.Name] = p.ContainerPort
	}
	seen := map[string]bool{}
	for i, rule := range np.Spec.Ingress {
		if len(rule.Ports) != 1 || rule.Ports[0].Port == nil {
			t.Errorf("ingress[%d] opens %v: every rule must name one port", i, rule.Ports)
			continue
		}
		port := rule.Ports[0].Port.String()
		if _, ok := named[port]; !ok {
			t.Errorf("ingress[%d] is for port %s, which the manager's container does not name (%v)", i, port, named)
		}
		seen[port] = true
		switch port {
		case "webhook-server":
			if !apiequality.Semantic.DeepEqual(rule.From, webhookFrom) {
				t.Errorf("the webhook port lets in %+v, want %+v", rule.From, webhookFrom)
			}
		case "metrics":
			want := []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"metrics": "enabled"}}}}
			if !apiequality.Semantic.DeepEqual(rule.From, want) {
				t.Errorf("the metrics port lets in %+v, want namespaces labelled metrics=enabled", rule.From)
			}
		default:
			t.Errorf("ingress[%d] opens port %s: only the webhook and metrics ports may be reached", i, port)
		}
	}
	for _, port := range []string{"webhook-server", "metrics"} {
		if !seen[port] {
			t.Errorf("no rule lets anyone reach port %s", port)
		}
	}
}
