package storage

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// These tests walk a BucketAccess's key through the crashes and hand edits that the Contract's
// key survived and its own copy of the lifecycle did not: a pass that stopped between writing
// the Secret and recording the new key, a Secret emptied by hand, a Secret deleted.

// principalStore is the S3 endpoint of the fake provider's contract c1, as a BucketAccess's key
// sees it: a key works when the provider has it for a principal, and may then do what ReadOnly
// allows (the policy carries it at once).
type principalStore struct {
	*fakes3.Store
	api *fakeapi.API
	key contractclient.Credentials
}

func (s *principalStore) CheckAccess(context.Context, string, string) (objectstore.AccessCheck, error) {
	if !s.api.PrincipalKeyWorks("c1", s.key) {
		return objectstore.AccessCheck{}, s3Answer(http.StatusForbidden, "InvalidAccessKeyId")
	}
	return objectstore.AccessCheck{List: true, Read: true}, nil
}

// accessKeyFixture is a BucketAccess whose first key is in its Secret and Ready, with a clock
// the test moves.
type accessKeyFixture struct {
	t       *testing.T
	cluster client.Client
	access  *storagev1alpha1.BucketAccess
	api     *fakeapi.API
	r       *BucketAccessReconciler
	now     time.Time
}

func newAccessKeyFixture(t *testing.T, intercept ...interceptor.Funcs) *accessKeyFixture {
	t.Helper()
	api := &fakeapi.API{Endpoint: "http://s3.test", Region: "us-east-1"}
	cluster, a, r := accessCluster(t, api, intercept...)
	f := &accessKeyFixture{t: t, cluster: cluster, access: a, api: api, r: r, now: time.Now()}
	r.Now = func() time.Time { return f.now }
	r.Stores = func(a objectstore.Account) objectstore.Store {
		return &principalStore{Store: &fakes3.Store{}, api: api, key: contractclient.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey}}
	}
	if err := f.pass(); err != nil {
		t.Fatalf("the first pass: %v", err)
	}
	if f.ready().Status != metav1.ConditionTrue || f.secretKey() == "" {
		t.Fatalf("the BucketAccess is not Ready with a key after its first pass: %+v", f.ready())
	}
	return f
}

// pass reconciles once and reads the BucketAccess back; what it returned is the test's to check.
func (f *accessKeyFixture) pass() error {
	f.t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.access)})
	if getErr := f.cluster.Get(context.Background(), client.ObjectKeyFromObject(f.access), f.access); getErr != nil {
		f.t.Fatal(getErr)
	}
	return err
}

func (f *accessKeyFixture) ready() metav1.Condition {
	c := meta.FindStatusCondition(f.access.Status.Conditions, storagev1alpha1.ReadyCondition)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

func (f *accessKeyFixture) secret() *corev1.Secret {
	s := &corev1.Secret{}
	if err := f.cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "reader-credentials"}, s); err != nil {
		f.t.Fatalf("reading the Secret: %v", err)
	}
	return s
}

func (f *accessKeyFixture) secretKey() string {
	return string(f.secret().Data[storagev1alpha1.SecretKeyAccessKeyID])
}

func (f *accessKeyFixture) providerKeys() []string {
	p, ok := f.api.Principal("c1", f.access.Status.PrincipalID)
	if !ok {
		f.t.Fatal("the principal is gone")
	}
	return p.AccessKeyIDs
}

func (f *accessKeyFixture) retiring() []string {
	var ids []string
	for _, k := range f.access.Status.RetiringKeys {
		ids = append(ids, k.AccessKeyID)
	}
	return ids
}

// overlapPassed moves the clock past the default overlap.
func (f *accessKeyFixture) overlapPassed() {
	f.now = f.now.Add(storagev1alpha1.DefaultKeyOverlap + time.Second)
}

// wantReplacedAndRevoked checks that the Secret holds a new key that works, that the key it
// replaced retires, and that it is revoked at the provider once the overlap has passed.
func (f *accessKeyFixture) wantReplacedAndRevoked(replaced string) {
	f.t.Helper()
	now := f.secretKey()
	if now == "" || now == replaced || f.access.Status.AccessKeyID != now {
		f.t.Fatalf("the Secret holds %q and status names %q, want a new key in both (not %s)", now, f.access.Status.AccessKeyID, replaced)
	}
	if diff := cmp.Diff([]string{replaced}, f.retiring()); diff != "" {
		f.t.Fatalf("retiring keys (-want +got):\n%s", diff)
	}
	if f.ready().Status != metav1.ConditionTrue {
		f.t.Errorf("Ready = %s %s: %s", f.ready().Status, f.ready().Reason, f.ready().Message)
	}
	f.overlapPassed()
	if err := f.pass(); err != nil {
		f.t.Fatal(err)
	}
	if diff := cmp.Diff([]string{now}, f.providerKeys()); diff != "" {
		f.t.Errorf("the principal's keys after the overlap (-want +got):\n%s: the replaced key must stop working", diff)
	}
}

func TestAKeyReplacedByAPassThatStoppedBeforeItsStatusWriteIsStillRevoked(t *testing.T) {
	crashed := false
	f := newAccessKeyFixture(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			// The write that records the new key and retires the old one: the manager dies
			// just before it, after the Secret took the new key.
			if !crashed && strings.Contains(string(data), `"retiringKeys"`) {
				crashed = true
				return errLost
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	first := f.secretKey()
	if err := f.cluster.Patch(context.Background(), f.access, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"storage.osm.dev/rotate-key":"leaked"}}}`))); err != nil {
		t.Fatal(err)
	}
	if err := f.pass(); err == nil || !crashed {
		t.Fatalf("the pass that was to stop before recording the new key returned %v", err)
	}
	if f.secretKey() == first || f.access.Status.AccessKeyID != first {
		t.Fatalf("after the stop the Secret holds %s and status names %s; want the new key in the Secret alone", f.secretKey(), f.access.Status.AccessKeyID)
	}
	if err := f.pass(); err != nil {
		t.Fatal(err)
	}
	f.wantReplacedAndRevoked(first)
	if f.access.Status.RotatedFor != "leaked" || len(f.providerKeys()) != 1 {
		t.Errorf("rotated for %q, principal keys %v; want the annotation answered with one new key", f.access.Status.RotatedFor, f.providerKeys())
	}
}

func TestASecretEmptiedByHandGetsANewKeyAndTheOldOneIsRevoked(t *testing.T) {
	f := newAccessKeyFixture(t)
	first := f.secretKey()
	secret := f.secret()
	delete(secret.Data, storagev1alpha1.SecretKeyAccessKeyID)
	delete(secret.Data, storagev1alpha1.SecretKeySecretAccessKey)
	if err := f.cluster.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if err := f.pass(); err != nil {
		t.Fatal(err)
	}
	f.wantReplacedAndRevoked(first)
}

func TestADeletedSecretGetsANewKeyAndTheOldOneIsRevoked(t *testing.T) {
	f := newAccessKeyFixture(t)
	first := f.secretKey()
	if err := f.cluster.Delete(context.Background(), f.secret()); err != nil {
		t.Fatal(err)
	}
	if err := f.pass(); err != nil {
		t.Fatalf("a pass after the Secret was deleted: %v", err)
	}
	f.wantReplacedAndRevoked(first)
	if !metav1.IsControlledBy(f.secret(), f.access) {
		t.Errorf("the Secret written again is not owned by its BucketAccess: %v", f.secret().OwnerReferences)
	}
}
