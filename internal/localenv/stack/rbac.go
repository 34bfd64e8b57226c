package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The manager runs in tests as the ServiceAccount an install gives it (config/default), bound to
// the ClusterRole generated from the controllers' RBAC markers (config/rbac/role.yaml), never as
// the envtest administrator: a verb the markers miss fails a test, as it would fail a cluster.
const (
	ManagerNamespace       = "object-storage-manager-system"
	ManagerServiceAccount  = "object-storage-manager-controller-manager"
	managerRoleName        = "object-storage-manager-manager-role"
	managerRoleBindingName = "object-storage-manager-manager-rolebinding"
	// metricsAuthRoleName lets the manager ask who scrapes /metrics (config/rbac/metrics_auth_role.yaml).
	metricsAuthRoleName = "object-storage-manager-metrics-auth-role"
	// MetricsReaderRoleName may get /metrics (config/rbac/metrics_reader_role.yaml).
	MetricsReaderRoleName = "object-storage-manager-metrics-reader"
	// costGuardRoleName lets the manager's webhooks ask whether a user may abandon, retain or empty
	// (config/rbac/cost_guard_role.yaml).
	costGuardRoleName = "object-storage-manager-cost-guard-role"
	// CostAdminRoleName grants the verbs abandon, retain and empty, bound to no one
	// (config/rbac/cost_admin_role.yaml).
	CostAdminRoleName = "object-storage-manager-cost-admin"
)

// ManagerConfig is admin as the manager's ServiceAccount (by impersonation).
func ManagerConfig(admin *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ManagerNamespace + ":" + ManagerServiceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ManagerNamespace, "system:authenticated"},
	}
	return cfg
}

// ShippedManagerRole is the ClusterRole in config/rbac/role.yaml.
func ShippedManagerRole() (*rbacv1.ClusterRole, error) { return shippedClusterRole("role.yaml") }

// shippedClusterRole reads a ClusterRole from config/rbac.
func shippedClusterRole(file string) (*rbacv1.ClusterRole, error) {
	root, err := localenv.ModuleRoot()
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", file))
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(raw, role); err != nil {
		return nil, fmt.Errorf("config/rbac/%s: %w", file, err)
	}
	return role, nil
}

// SetManagerRole makes the manager's ClusterRole the shipped one changed by edit (nil: as
// shipped), so a test can take a verb away and give it back.
func (s *Stack) SetManagerRole(ctx context.Context, edit func(*rbacv1.ClusterRole)) error {
	want, err := ShippedManagerRole()
	if err != nil {
		return err
	}
	if edit != nil {
		edit(want)
	}
	role := &rbacv1.ClusterRole{}
	err = s.Client.Get(ctx, client.ObjectKey{Name: managerRoleName}, role)
	switch {
	case apierrors.IsNotFound(err):
		role = &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: managerRoleName}, Rules: want.Rules}
		return s.Client.Create(ctx, role)
	case err != nil:
		return err
	}
	role.Rules = want.Rules
	return s.Client.Update(ctx, role)
}

// bindManagerRole installs the ClusterRoles config/rbac binds to the manager's ServiceAccount,
// and the roles it binds to no one (metrics reader for scrapers, cost-admin for the platform
// team), as an install does.
func (s *Stack) bindManagerRole(ctx context.Context) error {
	if err := s.SetManagerRole(ctx, nil); err != nil {
		return fmt.Errorf("installing the manager's ClusterRole: %w", err)
	}
	for name, file := range map[string]string{metricsAuthRoleName: "metrics_auth_role.yaml", MetricsReaderRoleName: "metrics_reader_role.yaml",
		costGuardRoleName: "cost_guard_role.yaml", CostAdminRoleName: "cost_admin_role.yaml"} {
		role, err := shippedClusterRole(file)
		if err != nil {
			return err
		}
		role.Name = name
		if err := s.Client.Create(ctx, role); err != nil {
			return fmt.Errorf("installing ClusterRole %s: %w", name, err)
		}
	}
	for name, role := range map[string]string{managerRoleBindingName: managerRoleName, "object-storage-manager-metrics-auth-rolebinding": metricsAuthRoleName,
		"object-storage-manager-cost-guard-rolebinding": costGuardRoleName} {
		if err := s.BindClusterRole(ctx, name, role, ManagerNamespace, ManagerServiceAccount); err != nil {
			return err
		}
	}
	return nil
}

// BindClusterRole binds a ClusterRole to a ServiceAccount.
func (s *Stack) BindClusterRole(ctx context.Context, name, role, namespace, serviceAccount string) error {
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: serviceAccount}},
	}
	if err := s.Client.Create(ctx, binding); err != nil {
		return fmt.Errorf("binding ClusterRole %s: %w", role, err)
	}
	return nil
}

// LimitManagerTo gives the manager its ClusterRole only in namespaces, as config/namespaced
// installs it: RoleBindings there instead of the ClusterRoleBinding. Start the manager with
// WatchNamespaces set to the same namespaces.
func (s *Stack) LimitManagerTo(ctx context.Context, namespaces ...string) error {
	if err := s.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerRoleBindingName}}); err != nil {
		return fmt.Errorf("removing the manager's ClusterRoleBinding: %w", err)
	}
	for _, ns := range namespaces {
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "object-storage-manager-manager-rolebinding"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ManagerNamespace, Name: ManagerServiceAccount}},
		}
		if err := s.Client.Create(ctx, binding); err != nil {
			return fmt.Errorf("binding the manager's role in %s: %w", ns, err)
		}
	}
	return nil
}
