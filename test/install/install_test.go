package install

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
)

const (
	// installNamespace and installName are config/default's namespace and name prefix.
	installNamespace = "object-storage-manager-system"
	installName      = "object-storage-manager"
	contractAPIURL   = "https://contracts.example.com"
)

// TestReleaseInstallsAndRuns builds the release as `make image build-installer` does, then
// installs it twice on a cluster with a real node (osm-dev's: a kubelet with containerd and
// runc): dist/install.yaml, and the Helm chart as a second release limited to one namespace.
// Each time every object must be admitted, and the manager must run as the Deployment's Pods,
// from the image, serve its webhooks through its Service, and make a Contract, a Bucket and a
// BucketAccess Ready.
func TestReleaseInstallsAndRuns(t *testing.T) {
	// envtest logs through controller-runtime; only its errors are worth a line here.
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	ctx := t.Context()
	r := buildRelease(t)
	checkReproducible(t, r)
	helm := ensureHelm(t)
	srv := startServers(ctx, t, r)

	t.Run("install.yaml", func(t *testing.T) {
		objs := decode(t, r.installYAML)
		checkInstaller(t, r, objs)
		useContractAPI(t, objs, srv.contractAPIURL)
		apply(ctx, t, srv.client, objs)
		deployment := deploymentOf(t, objs)
		createTokenSecret(ctx, t, srv, deployment.Namespace, "contract-api-token", "token")

		pods := podsReady(ctx, t, srv, deployment, 5*time.Minute)
		args := deployment.Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--webhook-cert-management=self") || !slices.Contains(args, "--leader-elect") {
			t.Fatalf("the installed manager runs with %q; want self-managed certificates and leader election", args)
		}
		checkInjectedCA(ctx, t, srv.client, installName)
		checkAdmissionAndReady(ctx, t, srv, "team-a")
		for i := range pods {
			checkPod(ctx, t, srv, deployment, &pods[i])
		}
		uninstallManager(ctx, t, srv.client, deployment, installName)
	})

	t.Run("chart", func(t *testing.T) {
		chart := filepath.Join(moduleRoot(t), "charts", "object-storage-manager")
		root := moduleRoot(t)
		run(t, root, nil, helm, "lint", "--strict", chart, "--set", "contractAPI.url="+contractAPIURL, "--set", "clusterWide=true")
		out, err := command(root, nil, helm, "template", "x", chart)
		if err == nil || !strings.Contains(string(out), "contractAPI.url is required") {
			t.Errorf("helm template without contractAPI.url: %v, %s; want it refused with a message naming contractAPI.url", err, out)
		}

		// Rendered as config/default names things, and cluster-wide as it is, the chart installs
		// the same objects with the same permissions, webhooks and manager arguments as
		// dist/install.yaml.
		same := decode(t, run(t, root, nil, helm, "template", installName, chart, "--namespace", installNamespace, "--include-crds",
			"--set", "contractAPI.url="+contractAPIURL, "--set", "image.repository="+imageRepository, "--set", "image.digest="+r.digests["manager"],
			"--set", "clusterWide=true"))
		compareWithInstaller(t, decode(t, r.installYAML), same)
		// And with certificates from cert-manager, the objects of config/default-certmanager.
		kustomize := strings.Fields(os.Getenv("KUSTOMIZE"))
		if len(kustomize) == 0 {
			kustomize = []string{"go", "tool", "-modfile=hack/tools/kustomize/go.mod", "kustomize"}
		}
		withCertManager := decode(t, run(t, root, nil, kustomize[0], append(kustomize[1:], "build", "config/default-certmanager")...))
		compareWithInstaller(t, withCertManager, decode(t, run(t, root, nil, helm, "template", installName, chart, "--namespace", installNamespace,
			"--include-crds", "--set", "contractAPI.url="+contractAPIURL, "--set", "webhook.certificates=certManager", "--set", "clusterWide=true")))

		// A second release, for namespace team-b only and with one replica, installed for real.
		const release, ns, watched = "osm-chart", "osm-chart", "team-b"
		for _, name := range []string{ns, watched} {
			if err := srv.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		objs := decode(t, run(t, root, nil, helm, "template", release, chart, "--namespace", ns, "--include-crds",
			"--set", "contractAPI.url="+srv.contractAPIURL, "--set", "image.repository="+imageRepository, "--set", "image.digest="+r.digests["manager"],
			"--set", "replicas=1", "--set", "watchNamespaces={"+watched+"}", "--set", "contractAPI.tokenSecret.name=provider-token",
			"--set", "contractAPI.tokenSecret.key=bearer"))
		for _, o := range objs {
			if o.GetKind() == "ClusterRoleBinding" && strings.HasSuffix(o.GetName(), "-manager-rolebinding") {
				t.Errorf("with watchNamespaces the chart binds the manager's role cluster-wide (%s)", o.GetName())
			}
		}
		useContractAPI(t, objs, srv.contractAPIURL)
		apply(ctx, t, srv.client, objs)
		deployment := deploymentOf(t, objs)
		createTokenSecret(ctx, t, srv, ns, "provider-token", "bearer")
		pods := podsReady(ctx, t, srv, deployment, 5*time.Minute)
		args := deployment.Spec.Template.Spec.Containers[0].Args
		if hasFlag(args, "--leader-elect") || flagValue(args, "--watch-namespaces") != watched {
			t.Fatalf("the chart's manager runs with %q; want no leader election with one replica, and --watch-namespaces=%s", args, watched)
		}
		checkInjectedCA(ctx, t, srv.client, release)
		checkAdmissionAndReady(ctx, t, srv, watched)
		for i := range pods {
			checkPod(ctx, t, srv, deployment, &pods[i])
		}
	})
}

// useContractAPI edits the manager's arguments as an administrator would (docs/install.md's
// kubectl patch): --contract-api-url names apiURL, and --contract-api-allow-insecure-http accepts
// its plain http, since the test's contract server, on this machine, serves no TLS.
func useContractAPI(t *testing.T, objs []*unstructured.Unstructured, apiURL string) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		manager := containers[0].(map[string]any)
		args, _ := manager["args"].([]any)
		found := false
		for i, a := range args {
			if strings.HasPrefix(a.(string), "--contract-api-url=") {
				args[i], found = "--contract-api-url="+apiURL, true
			}
		}
		if !found {
			t.Fatalf("Deployment %s: the manager has no --contract-api-url: %v", o.GetName(), args)
		}
		manager["args"] = append(args, "--"+operator.AllowInsecureHTTPFlag)
		if err := unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
	}
}

// checkReproducible builds the images a second time into another directory: the digests must
// not change.
func checkReproducible(t *testing.T, r *release) {
	t.Helper()
	again := t.TempDir()
	run(t, moduleRoot(t), nil, "make", "--no-print-directory", "image", "DIST_DIR="+again)
	for name, digest := range r.digests {
		raw, err := os.ReadFile(filepath.Join(again, "images", name+".digest"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(raw)); got != digest {
			t.Errorf("image %s: a second build has digest %s, the first %s: the build is not reproducible", name, got, digest)
		}
	}
}

// checkInstaller looks at what dist/install.yaml holds before anything is applied.
func checkInstaller(t *testing.T, r *release, objs []*unstructured.Unstructured) {
	t.Helper()
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GroupVersionKind().Group == "cert-manager.io" {
			t.Errorf("install.yaml needs cert-manager (%s %s); it should work without", o.GetKind(), o.GetName())
		}
	}
	for kind, n := range map[string]int{"Namespace": 1, "CustomResourceDefinition": 4, "ServiceAccount": 1, "Deployment": 1,
		"Service": 2, "Secret": 1, "MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1, "NetworkPolicy": 1} {
		if kinds[kind] != n {
			t.Errorf("install.yaml has %d %s, want %d", kinds[kind], kind, n)
		}
	}
	d := deploymentOf(t, objs)
	// The one-file install (docs/install.md) sets the contract API's URL by replacing this argument.
	if args := d.Spec.Template.Spec.Containers[0].Args; len(args) < 4 || !strings.HasPrefix(args[3], "--contract-api-url=") {
		t.Errorf("the Deployment's args/3 is not --contract-api-url, which docs/install.md's kubectl patch replaces: %q", args)
	}
	if want := imageRepository + "@" + r.digests["manager"]; d.Spec.Template.Spec.Containers[0].Image != want {
		t.Errorf("the Deployment runs image %s, want %s (pinned by digest)", d.Spec.Template.Spec.Containers[0].Image, want)
	}
	shipped, err := stack.ShippedManagerRole()
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	convert(t, find(t, objs, "ClusterRole", "", installName+"-manager-role"), role)
	if diff := cmp.Diff(shipped.Rules, role.Rules); diff != "" {
		t.Errorf("install.yaml's manager role differs from config/rbac/role.yaml (-shipped +installed):\n%s", diff)
	}
}

// compareWithInstaller checks that the chart, rendered with config/default's names, holds the
// objects install (a kustomize rendering) holds, but the Namespace, which Helm leaves to
// --create-namespace: the same rules, bindings, CRDs, certificates, webhooks, image, and manager
// arguments (the chart may spell out defaults too).
func compareWithInstaller(t *testing.T, install, chart []*unstructured.Unstructured) {
	t.Helper()
	id := func(o *unstructured.Unstructured) string {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	var want, got []string
	for _, o := range install {
		if o.GetKind() != "Namespace" {
			want = append(want, id(o))
		}
	}
	for _, o := range chart {
		got = append(got, id(o))
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects of install.yaml (-) and of the chart (+) differ:\n%s", diff)
	}
	for _, c := range chart {
		var i *unstructured.Unstructured
		for _, o := range install {
			if id(o) == id(c) {
				i = o
			}
		}
		if i == nil {
			continue
		}
		for _, field := range [][]string{{"rules"}, {"roleRef"}, {"subjects"}, {"spec", "names"}, {"spec", "versions"},
			{"spec", "dnsNames"}, {"spec", "issuerRef"}, {"spec", "secretName"}, {"spec", "selfSigned"}} {
			iv, _, _ := unstructured.NestedFieldNoCopy(i.Object, field...)
			cv, _, _ := unstructured.NestedFieldNoCopy(c.Object, field...)
			if diff := cmp.Diff(iv, cv); diff != "" {
				t.Errorf("%s: .%s differs between install.yaml (-) and the chart (+):\n%s", id(c), strings.Join(field, "."), diff)
			}
		}
		if strings.HasSuffix(c.GetKind(), "WebhookConfiguration") {
			iw, _, _ := unstructured.NestedSlice(i.Object, "webhooks")
			cw, _, _ := unstructured.NestedSlice(c.Object, "webhooks")
			if diff := cmp.Diff(iw, cw); diff != "" {
				t.Errorf("%s: webhooks differ between install.yaml (-) and the chart (+):\n%s", id(c), diff)
			}
			if diff := cmp.Diff(i.GetAnnotations(), c.GetAnnotations()); diff != "" {
				t.Errorf("%s: annotations (CA injection) differ between install.yaml (-) and the chart (+):\n%s", id(c), diff)
			}
		}
	}
	installPod := deploymentOf(t, install).Spec.Template.Spec
	chartPod := deploymentOf(t, chart).Spec.Template.Spec
	ic, cc := installPod.Containers[0], chartPod.Containers[0]
	if ic.Image != cc.Image {
		t.Errorf("image: install.yaml %s, chart %s", ic.Image, cc.Image)
	}
	for _, a := range ic.Args {
		if !slices.Contains(cc.Args, a) {
			t.Errorf("install.yaml's manager runs with %s, the chart's does not (%q)", a, cc.Args)
		}
	}
	if diff := cmp.Diff(ic.Env, cc.Env); diff != "" {
		t.Errorf("manager env differs between install.yaml (-) and the chart (+):\n%s", diff)
	}
	if diff := cmp.Diff(ic.SecurityContext, cc.SecurityContext); diff != "" || !cmp.Equal(installPod.SecurityContext, chartPod.SecurityContext) {
		t.Errorf("security contexts differ between install.yaml (-) and the chart (+):\n%s", diff)
	}
}

// servers are the cluster with its real node, and what the installed manager talks to.
type servers struct {
	node   *node
	client client.Client
	// contractAPIURL is the contract server as pods reach it.
	contractAPIURL string
	contractToken  string
	s3             *localenv.VersityGW
}

// startServers starts versitygw and the contract server from its image on the host, and a
// cluster with a real node that holds the manager's image and forwards their ports to pods.
// The contract server hands out the S3 endpoint as pods reach it (the node's address), as a
// provider hands out the address its clients call.
func startServers(ctx context.Context, t *testing.T, r *release) *servers {
	t.Helper()
	dir := t.TempDir()
	gw, err := localenv.StartVersityGW(ctx, localenv.VersityGWOptions{Dir: filepath.Join(dir, "versitygw")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Stop() })
	gwURL, err := url.Parse(gw.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	s3Port, err := strconv.Atoi(gwURL.Port())
	if err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &servers{s3: gw, contractToken: localenv.RandomHex(24)}
	for name, want := range map[string]string{"manager": "manager", "contract-server": "contract-server"} {
		out := run(t, dir, nil, binaryFromImage(t, r, name, bin), "--version")
		if !strings.HasPrefix(string(out), want+" ") || strings.Contains(string(out), " devel ") {
			t.Errorf("%s --version from the image: %q, want its name and the version make image linked in", name, out)
		}
	}

	csDir := filepath.Join(dir, "contract-server")
	if err := os.MkdirAll(filepath.Join(csDir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	tokenFile, keyFile := filepath.Join(csDir, "token"), filepath.Join(csDir, "encryption.key")
	if err := errors.Join(os.WriteFile(tokenFile, []byte(s.contractToken+"\n"), 0o600),
		os.WriteFile(keyFile, []byte(localenv.RandomHex(32)+"\n"), 0o600)); err != nil {
		t.Fatal(err)
	}
	port := freePorts(t, 1)[0]
	proc, err := localenv.StartProcess("contract-server", filepath.Join(csDir, "log"), filepath.Join(bin, "contract-server"),
		[]string{"--listen=" + hostPort(port), "--token-file=" + tokenFile, "--data-dir=" + filepath.Join(csDir, "data"),
			"--encryption-key-file=" + keyFile, "--backend=versitygw", "--s3-endpoint=http://" + net.JoinHostPort(nodeIP, strconv.Itoa(s3Port)),
			"--s3-region=" + gw.Region, "--admin-endpoint=" + gw.AdminEndpoint},
		[]string{"CONTRACT_SERVER_ADMIN_ACCESS_KEY=" + gw.RootAccessKey, "CONTRACT_SERVER_ADMIN_SECRET_KEY=" + gw.RootSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop() })
	if err := localenv.WaitHTTP(ctx, proc, "http://"+hostPort(port)+"/v1/contracts/none", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	s.contractAPIURL = "http://" + net.JoinHostPort(nodeIP, strconv.Itoa(port))

	s.node = startNode(t, nodeOptions{
		images: map[string]string{imageRepository: filepath.Join(r.dist, "images", "manager.tar")},
		ports:  []int{s3Port, port},
	})
	if s.client, err = client.New(s.node.admin, client.Options{Scheme: operator.Scheme}); err != nil {
		t.Fatal(err)
	}
	return s
}

// createTokenSecret makes the Secret an administrator creates before installing: the contract
// API's token under key.
func createTokenSecret(ctx context.Context, t *testing.T, s *servers, namespace, name, key string) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data: map[string][]byte{key: []byte(s.contractToken)}}
	if err := s.client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
}

// checkInjectedCA checks that the manager wrote its CA into every webhook of both
// configurations. That the API server trusts the certificate its Pods serve for the webhook
// Service under that CA, checkAdmissionAndReady shows.
func checkInjectedCA(ctx context.Context, t *testing.T, c client.Client, prefix string) {
	t.Helper()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := errors.Join(c.Get(ctx, client.ObjectKey{Name: prefix + "-mutating-webhook-configuration"}, m),
		c.Get(ctx, client.ObjectKey{Name: prefix + "-validating-webhook-configuration"}, v)); err != nil {
		t.Fatal(err)
	}
	var bundles [][]byte
	for _, w := range m.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
		if w.ClientConfig.Service == nil {
			t.Errorf("mutating webhook %s calls %v, not the install's Service", w.Name, w.ClientConfig)
		}
	}
	for _, w := range v.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
		if w.ClientConfig.Service == nil {
			t.Errorf("validating webhook %s calls %v, not the install's Service", w.Name, w.ClientConfig)
		}
	}
	for i, b := range bundles {
		if len(b) == 0 || !bytes.Equal(b, bundles[0]) {
			t.Fatalf("webhook %d of %s has caBundle of %d bytes; want the manager's CA in every webhook", i, prefix, len(b))
		}
	}
}

// checkAdmissionAndReady checks that the API server calls the manager's webhooks through their
// Service (a Bucket naming no Contract is refused with the webhook's message and field path), and
// that a Contract, a Bucket and a BucketAccess become Ready: the bucket is on the S3 server, and
// the Contract's keys and the BucketAccess's reach it.
func checkAdmissionAndReady(ctx context.Context, t *testing.T, s *servers, namespace string) {
	t.Helper()
	if err := s.client.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
		if err := s.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
			t.Fatal(err)
		}
	}
	orphan := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "orphan"},
		Spec: storagev1alpha1.BucketSpec{BucketName: namespace + "-orphan", ContractName: "nope"}}
	// The Service routes to a Pod once kube-proxy has seen it Ready: until then the API server
	// cannot call the webhook, and says so.
	err := s.client.Create(ctx, orphan)
	for deadline := time.Now().Add(time.Minute); err != nil && strings.Contains(err.Error(), "failed calling webhook") && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		err = s.client.Create(ctx, orphan)
	}
	if err == nil || !strings.Contains(err.Error(), "spec.contractName") || !strings.Contains(err.Error(), "no Contract of this name") {
		t.Fatalf("creating a Bucket that names no Contract: %v; want the validating webhook's refusal at spec.contractName", err)
	}

	contract := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "team"},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
	if err := s.client.Create(ctx, contract); err != nil {
		t.Fatal(err)
	}
	bucketName := namespace + "-" + localenv.RandomHex(4)
	bucket := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "data"},
		Spec: storagev1alpha1.BucketSpec{BucketName: bucketName, ContractName: contract.Name}}
	if err := s.client.Create(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	access := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "writer"},
		Spec: storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(bucket.Name), Access: storagev1alpha1.AccessReadWrite}}
	if err := s.client.Create(ctx, access); err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, s.client, contract, 2*time.Minute)
	waitReady(ctx, t, s.client, bucket, 2*time.Minute)
	waitReady(ctx, t, s.client, access, 2*time.Minute)
	// The Secrets name the S3 endpoint as pods reach it; the test calls the same server on the host.
	for _, secretName := range []string{contract.SecretNameOrDefault(), access.SecretNameOrDefault()} {
		secret := &corev1.Secret{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret); err != nil {
			t.Fatal(err)
		}
		if got, want := string(secret.Data["AWS_ENDPOINT_URL"]), "http://"+nodeIP; !strings.HasPrefix(got, want) {
			t.Errorf("Secret %s names endpoint %q; want the contract server's, %s:<port>", secretName, got, want)
		}
		c := localenv.NewS3Client(s.s3.Endpoint, s.s3.Region, string(secret.Data["AWS_ACCESS_KEY_ID"]), string(secret.Data["AWS_SECRET_ACCESS_KEY"]))
		if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucketName)}); err != nil {
			t.Errorf("bucket %s with the keys of Secret %s: %v", bucketName, secretName, err)
		}
	}
}

// waitReady waits until obj's Ready condition is True, and says where it stands if it never is.
func waitReady(ctx context.Context, t *testing.T, c client.Client, obj client.Object, timeout time.Duration) {
	t.Helper()
	conditions := func() []metav1.Condition {
		switch o := obj.(type) {
		case *storagev1alpha1.Contract:
			return o.Status.Conditions
		case *storagev1alpha1.Bucket:
			return o.Status.Conditions
		case *storagev1alpha1.BucketAccess:
			return o.Status.Conditions
		}
		return nil
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		if meta.IsStatusConditionTrue(conditions(), storagev1alpha1.ReadyCondition) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%T %s is not Ready within %s: %+v", obj, client.ObjectKeyFromObject(obj), timeout, conditions())
}

func deleteWebhookConfigurations(ctx context.Context, t *testing.T, c client.Client, prefix string) {
	t.Helper()
	if err := errors.Join(
		c.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-mutating-webhook-configuration"}}),
		c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-validating-webhook-configuration"}}),
	); err != nil {
		t.Fatal(err)
	}
}

// apply applies every object server-side, as `kubectl apply --server-side` does, and then reads
// each back: each must be admitted as it is.
func apply(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("install-test"), client.ForceOwnership); err != nil {
			t.Fatalf("%s %s/%s was not admitted: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s/%s: applied but not found: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// decode reads a multi-document YAML stream into objects.
func decode(t *testing.T, raw []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding manifests: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	if len(objs) == 0 {
		t.Fatal("no objects in the manifests")
	}
	return objs
}

func deploymentOf(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Deployments, want 1", len(found))
	}
	d := &appsv1.Deployment{}
	convert(t, found[0], d)
	return d
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s/%s", kind, namespace, name)
	return nil
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
