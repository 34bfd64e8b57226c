package cosidriver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cosiv1alpha1 "sigs.k8s.io/container-object-storage-interface-api/apis/objectstorage/v1alpha1"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
)

// COSI's sidecar v0.1.0 never asks for a revocation: a BucketAccess deleted, or being deleted,
// loses its key at the driver's next sweep. The others keep theirs, a grant under a name that is
// not the sidecar's is left alone, and a second sweep has nothing to do.
func TestSweepRevokesTheAccessOfDeletedBucketAccesses(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	created, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	ns := cosiNamespace(ctx, g)
	gone, held, kept := cosiAccess(ctx, g, ns, "gone"), cosiAccess(ctx, g, ns, "held", "example.com/hold"), cosiAccess(ctx, g, ns, "kept")
	keys := map[string]*s3.Client{}
	accounts := map[string]string{}
	for access, accessName := range map[string]string{"gone": sidecarName(gone), "held": sidecarName(held), "kept": sidecarName(kept), "manual": "manual"} {
		got, err := env.provisioner.DriverGrantBucketAccess(ctx, &cosi.DriverGrantBucketAccessRequest{BucketId: created.BucketId, Name: accessName,
			AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: "ReadWrite"}})
		g.Expect(err).NotTo(HaveOccurred())
		s := got.Credentials["s3"].Secrets
		keys[access], accounts[access] = s3With(s["accessKeyID"], s["accessSecretKey"]), got.AccountId
		g.Expect(put(ctx, keys[access], name, access+".txt", access)).To(Succeed())
	}
	g.Expect(recordedAccesses(ctx, g, created.BucketId)).To(ConsistOf(sidecarName(gone), sidecarName(held), sidecarName(kept)),
		"one record per grant of the sidecar's, none for a name that is not its")

	g.Expect(env.kube.Delete(ctx, gone)).To(Succeed())
	g.Expect(env.kube.Delete(ctx, held)).To(Succeed())
	t.Cleanup(func() { _ = release(held) })

	revoked, err := env.driver.Sweep(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(revoked).To(Equal(2))
	for _, access := range []string{"gone", "held"} {
		g.Eventually(func() bool { return refused(put(ctx, keys[access], name, "late.txt", access)) }).Should(BeTrue(),
			"the key of BucketAccess %q outlived it", access)
		g.Expect(principalState(g, accounts[access])).To(Equal("deleted"))
	}
	for _, access := range []string{"kept", "manual"} {
		g.Expect(get(ctx, keys[access], name, "gone.txt")).To(Equal("gone"), "the sweep took the access of %q", access)
	}
	g.Expect(recordedAccesses(ctx, g, created.BucketId)).To(ConsistOf(sidecarName(kept)))

	revoked, err = env.driver.Sweep(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(revoked).To(BeZero())
}

// A grant cut short after its record, before the contract API made its principal, whose
// BucketAccess is then deleted: the sweep leaves no principal with a key behind, and no record;
// the sidecar asking again for that access is refused.
func TestSweepFinishesAGrantCutShortBeforeItsPrincipal(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	name := bucketName(t)
	created, err := env.provisioner.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	access := cosiAccess(ctx, g, cosiNamespace(ctx, g), "cut-short")

	env.stk.ContractAPI.SetHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/principals") {
			w.WriteHeader(http.StatusServiceUnavailable) // the server never makes it
			return
		}
		next.ServeHTTP(w, r)
	})
	t.Cleanup(func() { env.stk.ContractAPI.SetHook(nil) })
	req := &cosi.DriverGrantBucketAccessRequest{BucketId: created.BucketId, Name: sidecarName(access),
		AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: "ReadOnly"}}
	_, err = env.provisioner.DriverGrantBucketAccess(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.Unavailable), "%v", err)
	env.stk.ContractAPI.SetHook(nil)
	g.Expect(recordedAccesses(ctx, g, created.BucketId)).To(ConsistOf(sidecarName(access)))
	key := recordName(ctx, g, sidecarName(access)) // the principal's idempotency key

	g.Expect(env.kube.Delete(ctx, access)).To(Succeed())
	revoked, err := env.driver.Sweep(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(revoked).To(Equal(1))
	g.Expect(recordedAccesses(ctx, g, created.BucketId)).To(BeEmpty())
	principals, err := env.stk.ContractAPI.Principals()
	g.Expect(err).NotTo(HaveOccurred())
	var states []string
	for _, p := range principals {
		if p.IdempotencyKey == key {
			states = append(states, p.State)
		}
	}
	g.Expect(states).To(ConsistOf("deleted"), "the access's principal is not there, deleted, exactly once")
	_, err = env.provisioner.DriverGrantBucketAccess(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.FailedPrecondition), "a revoked access granted again: %v", err)
	_, err = accountS3().GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name})
	g.Expect(err).To(HaveOccurred(), "the bucket has a policy, though no access to it was ever granted")
}

// cosiNamespace is a fresh namespace for COSI's BucketAccesses.
func cosiNamespace(ctx context.Context, g Gomega) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "apps-"}}
	g.Expect(env.kube.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// cosiAccess creates a COSI BucketAccess, as a user would; nothing here grants it (the test
// calls the driver as the sidecar would). finalizers hold it once deleted.
func cosiAccess(ctx context.Context, g Gomega, ns, name string, finalizers ...string) *cosiv1alpha1.BucketAccess {
	a := &cosiv1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers},
		Spec: cosiv1alpha1.BucketAccessSpec{BucketClaimName: "claim", BucketAccessClassName: "class",
			CredentialsSecretName: name + "-bucket", Protocol: cosiv1alpha1.ProtocolS3}}
	g.Expect(env.kube.Create(ctx, a)).To(Succeed())
	return a
}

// sidecarName is the access name COSI's sidecar gives the driver for a.
func sidecarName(a *cosiv1alpha1.BucketAccess) string { return "ba-" + string(a.UID) }

// release drops the finalizers of a, so that its deletion finishes.
func release(a *cosiv1alpha1.BucketAccess) error {
	ctx := context.Background()
	if err := env.kube.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		return client.IgnoreNotFound(err)
	}
	a.Finalizers = nil
	return env.kube.Update(ctx, a)
}

// recordedAccesses are the access names the driver's grant records hold for the bucket id.
func recordedAccesses(ctx context.Context, g Gomega, bucketID string) []string {
	var list corev1.ConfigMapList
	g.Expect(env.kube.List(ctx, &list, client.InNamespace(env.records), client.HasLabels{cosidriver.RecordLabel})).To(Succeed())
	var out []string
	for _, cm := range list.Items {
		if cm.Data["bucketID"] == bucketID {
			out = append(out, cm.Data["access"])
		}
	}
	return out
}

// recordName is the name of the grant record of the access name.
func recordName(ctx context.Context, g Gomega, access string) string {
	var list corev1.ConfigMapList
	g.Expect(env.kube.List(ctx, &list, client.InNamespace(env.records), client.HasLabels{cosidriver.RecordLabel})).To(Succeed())
	for _, cm := range list.Items {
		if cm.Data["access"] == access {
			return cm.Name
		}
	}
	g.Expect(access).To(BeEmpty(), "no grant record")
	return ""
}

// principalState is what the contract server says of the principal id.
func principalState(g Gomega, id string) string {
	principals, err := env.stk.ContractAPI.Principals()
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range principals {
		if p.ID == id {
			return p.State
		}
	}
	return ""
}
