package storage

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
)

var testIssuer = TokenIssuer{URL: "https://oidc.cluster.test", Audience: "sts.test",
	Thumbprints: []string{"0123456789abcdef0123456789abcdef01234567"}}

// keylessCluster is accessCluster with its BucketAccess asking for authentication
// ServiceAccount (ServiceAccount app), and a reconciler that makes roles on api trusting issuer.
func keylessCluster(t *testing.T, api *fakeapi.API, issuer TokenIssuer) (client.Client, *storagev1alpha1.BucketAccess, *BucketAccessReconciler) {
	t.Helper()
	cluster, a, r := accessCluster(t, api)
	a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "app"
	if err := cluster.Update(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	r.Roles, r.Issuer = api, issuer
	return cluster, a, r
}

func accessSecret(t *testing.T, c client.Client, a *storagev1alpha1.BucketAccess) (*corev1.Secret, bool) {
	t.Helper()
	secret := &corev1.Secret{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: a.Namespace, Name: a.SecretNameOrDefault()}, secret)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return secret, true
}

func TestAKeylessBucketAccessGetsARoleAndASecretWithoutAKey(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if ready := readyOf(t, cluster, a, func() []metav1.Condition { return a.Status.Conditions }); ready.Reason != storagev1alpha1.ReasonAvailable {
		t.Errorf("Ready = %s %s: %s; want Available", ready.Status, ready.Reason, ready.Message)
	}
	if p, ok := api.OIDCProvider("c1"); !ok || p.IssuerURL != testIssuer.URL || !slices.Equal(p.Audiences, []string{"sts.test"}) ||
		!slices.Equal(p.Thumbprints, testIssuer.Thumbprints) {
		t.Errorf("the contract trusts %+v (%v); want the manager's issuer for its audience", p, ok)
	}
	wantRole := fakeapi.Role{Subject: "system:serviceaccount:ns:app",
		Grants: []contractclient.RoleGrant{{Bucket: "data-bucket", Access: "ReadOnly"}}}
	if diff := cmp.Diff(map[string]fakeapi.Role{"osm-uid-reader": wantRole}, api.Roles("c1")); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	arn := fakeapi.RoleARN("c1", "osm-uid-reader")
	if a.Status.RoleARN != arn || !a.Status.PrincipalRequested || a.Status.ContractID != "c1" {
		t.Errorf("status = roleARN %q, requested %v, contract %q; want %q recorded with contract c1", a.Status.RoleARN,
			a.Status.PrincipalRequested, a.Status.ContractID, arn)
	}
	if n := api.Calls(fakeapi.OpCreatePrincipal); n != 0 || a.Status.PrincipalID != "" || a.Status.AccessKeyID != "" {
		t.Errorf("a principal was asked for (%d calls) or a key recorded (%+v): keyless means neither", n, a.Status)
	}
	secret, ok := accessSecret(t, cluster, a)
	if !ok {
		t.Fatal("no Secret")
	}
	got := map[string]string{}
	for k, v := range secret.Data {
		got[k] = string(v)
	}
	want := map[string]string{"AWS_ROLE_ARN": arn, "AWS_ENDPOINT_URL": "http://s3.test", "AWS_ENDPOINT_URL_STS": "http://s3.test",
		"AWS_REGION": "us-east-1", "OSM_TOKEN_AUDIENCE": "sts.test"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Secret data (-want +got):\n%s", diff)
	}

	// Steady state: the same role, the same Secret, no new principal.
	version := secret.ResourceVersion
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if secret, _ := accessSecret(t, cluster, a); secret.ResourceVersion != version {
		t.Error("a second pass rewrote the Secret")
	}
}

// The list form's role grants each of its buckets, with its access and prefix.
func TestAKeylessBucketAccessOverSeveralBucketsGrantsEach(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	ctx := context.Background()
	logs := newTestBucket("logs", "logs-bucket", storagev1alpha1.ReclaimPolicyRetain)
	if err := cluster.Create(ctx, logs); err != nil {
		t.Fatal(err)
	}
	logs.Status.BucketName = "logs-bucket"
	if err := cluster.Status().Update(ctx, logs); err != nil {
		t.Fatal(err)
	}
	a.Spec.Bucket, a.Spec.Access = "", ""
	a.Spec.Buckets = []storagev1alpha1.AccessBucket{{Name: "data", Access: storagev1alpha1.AccessReadWrite, Prefix: "in/"},
		{Name: "logs", Access: storagev1alpha1.AccessWriteOnly}}
	if err := cluster.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	want := []contractclient.RoleGrant{{Bucket: "data-bucket", Access: "ReadWrite", Prefix: "in/"}, {Bucket: "logs-bucket", Access: "WriteOnly"}}
	if diff := cmp.Diff(want, api.Roles("c1")["osm-uid-reader"].Grants); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
	if err := cluster.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if len(a.Status.Buckets) != 0 {
		t.Errorf("status.buckets = %+v; a role holds no key to check there", a.Status.Buckets)
	}
}

// versitygw has no STS: the contract API answers 501. Ready says so, with an event, the pass
// looks again after the resync period without an error to back off from, and nothing is left
// behind: no principal, no Secret, and deletion goes through.
func TestAKeylessBucketAccessOnAProviderWithoutSTSIsAuthenticationUnsupported(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1", NoSTS: true}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(a)})
	if err != nil || res.RequeueAfter <= 0 {
		t.Errorf("Reconcile = %+v, %v; want no error and a look again later", res, err)
	}
	ready := readyOf(t, cluster, a, func() []metav1.Condition { return a.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonAuthenticationUnsupported || !strings.Contains(ready.Message, "Use authentication Key") {
		t.Errorf("Ready = %s %s: %s; want AuthenticationUnsupported saying what to do", ready.Status, ready.Reason, ready.Message)
	}
	if !recorded(r.Recorder, storagev1alpha1.ReasonAuthenticationUnsupported) {
		t.Error("no AuthenticationUnsupported event")
	}
	if _, ok := accessSecret(t, cluster, a); ok {
		t.Error("a Secret was written")
	}
	if n := api.Calls(fakeapi.OpCreatePrincipal); n != 0 {
		t.Errorf("%d principals asked for", n)
	}
	deleting(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); !apierrors.IsNotFound(err) {
		t.Errorf("the BucketAccess stays (%v), finalizers %v", err, a.Finalizers)
	}
}

// Without --oidc-issuer-url the manager cannot name an issuer: Ready says what the platform
// must set, and the provider is not asked anything.
func TestAKeylessBucketAccessWithoutAnIssuerIsAuthenticationUnsupported(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, TokenIssuer{})
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	ready := readyOf(t, cluster, a, func() []metav1.Condition { return a.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonAuthenticationUnsupported || !strings.Contains(ready.Message, "--oidc-issuer-url") {
		t.Errorf("Ready = %s %s: %s; want AuthenticationUnsupported naming the flag", ready.Status, ready.Reason, ready.Message)
	}
	if n := api.Calls(fakeapi.OpPutOIDCProvider) + api.Calls(fakeapi.OpPutRole) + api.Calls(fakeapi.OpCreatePrincipal); n != 0 || a.Status.PrincipalRequested {
		t.Errorf("the provider was asked %d times, requested %v; want nothing", n, a.Status.PrincipalRequested)
	}
}

func TestDeletingAKeylessBucketAccessDeletesItsRole(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if len(api.Roles("c1")) != 1 {
		t.Fatalf("roles = %v; want one", api.Roles("c1"))
	}
	deleting(t, cluster, a)
	api.Fail(fakeapi.OpDeleteRole, fakeapi.Failure{Err: &contractclient.Error{Op: "deleting a role", Cause: errLost}})
	if err := reconcileOnce(t, r, a); err == nil {
		t.Fatal("a failed role deletion went unnoticed")
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatalf("the BucketAccess went before its role: %v", err)
	}
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	if roles := api.Roles("c1"); len(roles) != 0 {
		t.Errorf("roles = %v after deletion; want none", roles)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); !apierrors.IsNotFound(err) {
		t.Errorf("the BucketAccess stays (%v)", err)
	}
	if !recorded(r.Recorder, "RoleDeleted") {
		t.Error("no RoleDeleted event")
	}
}

// A pass that stops between recording the request and reading the answer (the role made, its
// answer lost) leaves a record from which deletion deletes the role.
func TestAKeylessRoleWhoseAnswerWasLostIsDeletedWithItsBucketAccess(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	api.Fail(fakeapi.OpPutRole, lost("making a role"))
	if err := reconcileOnce(t, r, a); err == nil {
		t.Fatal("a lost answer went unnoticed")
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if !a.Status.PrincipalRequested || a.Status.ContractID != "c1" || a.Status.RoleARN != "" {
		t.Fatalf("status = %+v; want the request recorded, with its contract, and no role known", a.Status)
	}
	if len(api.Roles("c1")) != 1 {
		t.Fatalf("roles = %v; the fake should have made the role whose answer was lost", api.Roles("c1"))
	}
	deleting(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	if roles := api.Roles("c1"); len(roles) != 0 {
		t.Errorf("roles = %v; the role whose answer was lost leaked", roles)
	}
}

// recorded says whether rec, a fake recorder, emitted an event whose text holds reason.
func recorded(rec events.EventRecorder, reason string) bool {
	fake := rec.(*events.FakeRecorder)
	for {
		select {
		case e := <-fake.Events:
			if strings.Contains(e, reason) {
				return true
			}
		default:
			return false
		}
	}
}

// An abandoned keyless BucketAccess leaves its role, still assumed: the event names it, and the
// provider is not called.
func TestAKeylessBucketAccessAbandonedNamesTheRoleLeft(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	deleting(t, cluster, a)
	annotateAbandon(t, cluster, a)
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatalf("abandoning: %v", err)
	}
	if err := cluster.Get(context.Background(), client.ObjectKeyFromObject(a), a); err == nil {
		t.Fatalf("the BucketAccess is still there: finalizers %v", a.Finalizers)
	}
	if n := api.Calls(fakeapi.OpDeleteRole); n != 0 || len(api.Roles("c1")) != 1 {
		t.Errorf("%d DeleteRole calls, roles %v; the abandoning pass must leave the role", n, api.Roles("c1"))
	}
	if ev := lastEvent(t, r.Recorder); !strings.Contains(ev, "role "+fakeapi.RoleARN("c1", "osm-uid-reader")+" stays") {
		t.Errorf("event %q, want it to name the role left", ev)
	}
}

// A Contract over an account of its own has no contract API to make roles: the keyless
// BucketAccess says so in its own words, and nothing is asked.
func TestAKeylessBucketAccessOverAnExistingAccountIsAuthenticationUnsupported(t *testing.T) {
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := keylessCluster(t, api, testIssuer)
	ctx := context.Background()
	contract := &storagev1alpha1.Contract{}
	if err := cluster.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "acc"}, contract); err != nil {
		t.Fatal(err)
	}
	contract.Spec.Credentials = &storagev1alpha1.ContractCredentials{SecretName: "own-keys"}
	if err := cluster.Update(ctx, contract); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(t, r, a); err != nil {
		t.Fatal(err)
	}
	ready := readyOf(t, cluster, a, func() []metav1.Condition { return a.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonAuthenticationUnsupported || !strings.Contains(ready.Message, "roles for ServiceAccounts") {
		t.Errorf("Ready = %s %s: %s; want AuthenticationUnsupported about roles", ready.Status, ready.Reason, ready.Message)
	}
	if n := api.Calls(fakeapi.OpPutOIDCProvider) + api.Calls(fakeapi.OpPutRole); n != 0 {
		t.Errorf("the provider was asked %d times", n)
	}
}
