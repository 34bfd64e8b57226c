package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The manager runs as the installer makes it run: under the ServiceAccount and RBAC of
// config/default, with the flags of its Deployment there. Only what must differ outside a pod is
// replaced (addresses, files, the contract API), so a permission or flag the install lacks shows
// here first.

// installKinds are the objects of the install osm-dev applies: who the manager is and what it
// may do. The CRDs and webhook configurations are applied on their own (local webhooks point at
// 127.0.0.1); the Deployment is what osm-dev itself replaces.
var installKinds = []string{"Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}

// managerContainer names the manager's container in the install's Deployment.
const managerContainer = "manager"

// tokenLifetime is how long a token of the manager's ServiceAccount is valid; it is renewed
// when half of that has passed, as the kubelet renews a pod's projected token.
const tokenLifetime = 24 * time.Hour

// install is what osm-dev takes from the rendered config/default.
type install struct {
	objects []*unstructured.Unstructured
	// namespace and serviceAccount are the manager's, from its Deployment.
	namespace, serviceAccount string
	// args are the manager container's arguments, env the variables it sets (ContainerEnv).
	args, env []string
}

// renderInstall renders config/default with kubectl's kustomize, as `kubectl apply -k` would.
func (e *environment) renderInstall(ctx context.Context) (*install, error) {
	kubectl, err := localenv.Binary("kubectl")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", "config/default")
	cmd.Dir = e.root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	rendered, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize config/default: %w: %s", err, stderr.String())
	}
	objs, err := decodeObjects(rendered)
	if err != nil {
		return nil, err
	}
	in := &install{}
	for _, o := range objs {
		if slices.Contains(installKinds, o.GetKind()) {
			in.objects = append(in.objects, o)
		}
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
			return nil, fmt.Errorf("reading the install's Deployment %s: %w", o.GetName(), err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == managerContainer {
				in.namespace, in.serviceAccount, in.args = d.Namespace, d.Spec.Template.Spec.ServiceAccountName, c.Args
				in.env = localenv.ContainerEnv(c)
			}
		}
	}
	if in.serviceAccount == "" {
		return nil, errors.New("config/default has no Deployment with a container " + managerContainer + " and a serviceAccountName")
	}
	return in, nil
}

// installIdentity applies the install's ServiceAccount and RBAC, and gets the manager a token
// of that ServiceAccount.
func (e *environment) installIdentity(ctx context.Context) error {
	if err := e.applyInstall(ctx); err != nil {
		return err
	}
	if err := e.refreshManagerToken(ctx); err != nil {
		return err
	}
	status("install", "ServiceAccount %s/%s and its RBAC from config/default; the manager runs with its token",
		e.install.namespace, e.install.serviceAccount)
	return nil
}

// renderedInstall is config/default rendered, with a hash of every file under config/ as it
// was read.
type renderedInstall struct {
	install *install
	hash    string
}

// renderConfig renders config/default and hashes config/.
func (e *environment) renderConfig(ctx context.Context) (*renderedInstall, error) {
	files, err := configFiles(filepath.Join(e.root, "config"))
	if err != nil {
		return nil, err
	}
	hash, err := contentHash(files...)
	if err != nil {
		return nil, err
	}
	in, err := e.renderInstall(ctx)
	if err != nil {
		return nil, err
	}
	return &renderedInstall{install: in, hash: hash}, nil
}

// applyInstall applies the install's ServiceAccount and RBAC, unless nothing under config/
// changed since it last did. The first time it takes what the start rendered while it built.
func (e *environment) applyInstall(ctx context.Context) error {
	r := e.rendered
	e.rendered = nil
	if r == nil {
		files, err := configFiles(filepath.Join(e.root, "config"))
		if err != nil {
			return err
		}
		hash, err := contentHash(files...)
		if err != nil {
			return err
		}
		if e.install != nil && hash == e.appliedInstall {
			return nil
		}
		if r, err = e.renderConfig(ctx); err != nil {
			return err
		}
	}
	in, hash := r.install, r.hash
	c, err := e.client()
	if err != nil {
		return err
	}
	for _, o := range in.objects {
		if err := applyObject(ctx, c, o); err != nil {
			return err
		}
	}
	e.install, e.appliedInstall = in, hash
	return nil
}

// configFiles lists the files under dir, recursively, in a stable order.
func configFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	return files, err
}

// refreshManagerToken asks the API server for a token of the manager's ServiceAccount
// (TokenRequest) and writes it where the manager's kubeconfig points; client-go reads the
// file again within a minute of a change.
func (e *environment) refreshManagerToken(ctx context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{}
	sa.Namespace, sa.Name = e.install.namespace, e.install.serviceAccount
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(tokenLifetime / time.Second)),
	}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	path := e.path("manager", "token")
	if err := os.MkdirAll(e.path("manager"), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tr.Status.Token), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	e.managerTokenAt = time.Now()
	return e.writeKubeconfigFor(e.managerKubeconfig(), "system:serviceaccount:"+sa.Namespace+":"+sa.Name,
		kubeconfigAuth{tokenFile: path}, "")
}

// renewManagerToken replaces the manager's token once half its lifetime has passed.
func (e *environment) renewManagerToken(ctx context.Context) error {
	if e.install == nil || time.Since(e.managerTokenAt) < tokenLifetime/2 {
		return nil
	}
	return e.refreshManagerToken(ctx)
}

func (e *environment) managerKubeconfig() string { return e.path("manager", "kubeconfig") }

// installArgs are the manager's arguments from the install without those osm-dev sets itself
// (named in local), and without --leader-elect when the manager may be stopped at a breakpoint:
// a leader that cannot renew its lease exits.
func installArgs(args []string, local map[string]bool, leaderElection bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if local[name] || (name == "leader-elect" && !leaderElection) {
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // "--flag value": the value goes too
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}
