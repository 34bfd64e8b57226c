package storage

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	fakeapi "github.com/object-storage-manager/object-storage-manager/internal/contractclient/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// These tests walk a rotation of a Contract's key through the steps and the lost answers and
// crashes between them, over the in-memory contract API (whose keys follow the reference
// server's rules) and an S3 endpoint that accepts exactly the keys the provider lists.

// keyedEndpoint is an S3 endpoint of the fake provider's one contract: a key works when the
// provider lists it with its secret. refuse makes the next tries fail with that error.
type keyedEndpoint struct {
	api    *fakeapi.API
	mu     sync.Mutex
	refuse []error
	tried  []string
}

func (e *keyedEndpoint) stores(a objectstore.Account) objectstore.Store {
	return &keyedStore{Store: &fakes3.Store{Owner: "me"}, endpoint: e,
		creds: contractclient.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey}}
}

type keyedStore struct {
	objectstore.Store
	endpoint *keyedEndpoint
	creds    contractclient.Credentials
}

func (s *keyedStore) BucketNames(ctx context.Context) ([]string, error) {
	e := s.endpoint
	e.mu.Lock()
	e.tried = append(e.tried, s.creds.AccessKeyID)
	var err error
	if len(e.refuse) > 0 {
		err, e.refuse = e.refuse[0], e.refuse[1:]
	}
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if !e.api.Works("c1", s.creds) {
		return nil, s3Answer(http.StatusForbidden, "InvalidAccessKeyId")
	}
	return s.Store.BucketNames(ctx)
}

func s3Answer(status int, code string) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "as the server says"},
	}}
}

// keyFixture is a Contract whose contract was bought and whose first key is in its Secret.
type keyFixture struct {
	t        *testing.T
	contract *storagev1alpha1.Contract
	cluster  client.Client
	api      *fakeapi.API
	endpoint *keyedEndpoint
	r        *ContractReconciler
}

func newKeyFixture(t *testing.T, api *fakeapi.API, mutate ...func(*storagev1alpha1.Contract)) *keyFixture {
	t.Helper()
	c := activeContract("acc")
	c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
	c.Status = storagev1alpha1.ContractStatus{}
	for _, m := range mutate {
		m(c)
	}
	api.Endpoint, api.Region = "http://s3.test", "us-east-1"
	f := &keyFixture{t: t, contract: c, cluster: fakeCluster(t, c), api: api, endpoint: &keyedEndpoint{api: api}}
	f.r = contractReconciler(f.cluster, api)
	f.r.Stores = f.endpoint.stores
	f.mustPass() // buys and writes the Secret
	f.mustPass() // observes
	if got := f.secretKey(); got != "AKc1" {
		t.Fatalf("after the purchase the Secret holds %q, want the first key AKc1", got)
	}
	return f
}

// pass runs one reconcile and reads the Contract back.
func (f *keyFixture) pass() (ctrl.Result, error) {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.contract)})
	if getErr := f.cluster.Get(context.Background(), client.ObjectKeyFromObject(f.contract), f.contract); client.IgnoreNotFound(getErr) != nil {
		f.t.Fatal(getErr)
	}
	return res, err
}

func (f *keyFixture) mustPass() ctrl.Result {
	f.t.Helper()
	res, err := f.pass()
	if err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	return res
}

func (f *keyFixture) secret() *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.cluster.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "acc-credentials"}, s); err != nil {
		f.t.Fatalf("reading the Secret: %v", err)
	}
	return s
}

func (f *keyFixture) secretKey() string {
	return string(f.secret().Data[storagev1alpha1.SecretKeyAccessKeyID])
}

func (f *keyFixture) secretCreds() contractclient.Credentials {
	s := f.secret()
	return contractclient.Credentials{AccessKeyID: string(s.Data[storagev1alpha1.SecretKeyAccessKeyID]),
		SecretAccessKey: string(s.Data[storagev1alpha1.SecretKeySecretAccessKey])}
}

// annotate asks for a rotation with the annotation.
func (f *keyFixture) annotate(value string) {
	f.t.Helper()
	patch := client.MergeFrom(f.contract.DeepCopy())
	metav1.SetMetaDataAnnotation(&f.contract.ObjectMeta, storagev1alpha1.RotateKeyAnnotation, value)
	if err := f.cluster.Patch(context.Background(), f.contract, patch); err != nil {
		f.t.Fatal(err)
	}
}

// editStatus changes the Contract's status as a crash or the passing of time would leave it.
func (f *keyFixture) editStatus(edit func(*storagev1alpha1.ContractStatus)) {
	f.t.Helper()
	patch := client.MergeFrom(f.contract.DeepCopy())
	edit(&f.contract.Status)
	if err := f.cluster.Status().Patch(context.Background(), f.contract, patch); err != nil {
		f.t.Fatal(err)
	}
}

// overlapPassed moves every replaced key's revocation time into the past.
func (f *keyFixture) overlapPassed() {
	f.editStatus(func(s *storagev1alpha1.ContractStatus) {
		for i := range s.RetiringKeys {
			s.RetiringKeys[i].RevokeAfter = metav1.NewTime(time.Now().Add(-time.Second))
		}
	})
}

func (f *keyFixture) keyRotation() *metav1.Condition {
	return meta.FindStatusCondition(f.contract.Status.Conditions, storagev1alpha1.KeyRotationCondition)
}

func (f *keyFixture) wantKeyRotation(status metav1.ConditionStatus, reason string, message ...string) {
	f.t.Helper()
	got := f.keyRotation()
	if got == nil {
		f.t.Fatalf("no KeyRotation condition, want %s %s", status, reason)
	}
	if got.Status != status || got.Reason != reason {
		f.t.Fatalf("KeyRotation = %s %s: %s, want %s %s", got.Status, got.Reason, got.Message, status, reason)
	}
	for _, m := range message {
		if !strings.Contains(got.Message, m) {
			f.t.Errorf("KeyRotation message %q does not say %q", got.Message, m)
		}
	}
}

func (f *keyFixture) wantReady() {
	f.t.Helper()
	if ready := readyOf(f.t, f.cluster, f.contract, func() []metav1.Condition { return f.contract.Status.Conditions }); ready.Status != metav1.ConditionTrue {
		f.t.Errorf("Ready = %s %s: %s; the key in the Secret works all along", ready.Status, ready.Reason, ready.Message)
	}
}

func (f *keyFixture) providerKeys() []string {
	got, _ := f.api.Contract("c1")
	return got.AccessKeyIDs
}

func (f *keyFixture) retiring() []string {
	var ids []string
	for _, k := range f.contract.Status.RetiringKeys {
		ids = append(ids, k.AccessKeyID)
	}
	return ids
}

func TestTheRotateKeyAnnotationRotatesTheKeyAndTheReplacedOneIsRevokedAfterTheOverlap(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	if f.keyRotation() != nil {
		t.Errorf("KeyRotation %+v before any rotation was asked for, want none", f.keyRotation())
	}
	if f.contract.Status.AccessKeyID != "AKc1" || f.contract.Status.KeyIssuedAt == nil {
		t.Errorf("status names key %q issued at %v, want the first key AKc1 with its time", f.contract.Status.AccessKeyID, f.contract.Status.KeyIssuedAt)
	}

	f.annotate("2024-06-01")
	start := time.Now()
	f.mustPass()
	newKey := f.secretCreds()
	if newKey.AccessKeyID == "AKc1" || !f.api.Works("c1", newKey) {
		t.Fatalf("the Secret holds key %s, want a new key that works", newKey.AccessKeyID)
	}
	st := f.contract.Status
	if st.AccessKeyID != newKey.AccessKeyID || st.KeysIssued != 1 || st.RotatedFor != "2024-06-01" || st.PendingKey != nil {
		t.Errorf("status: key %s, %d issued, rotated for %q, pending %+v; want the new key, 1, the annotation, none pending",
			st.AccessKeyID, st.KeysIssued, st.RotatedFor, st.PendingKey)
	}
	if diff := cmp.Diff([]string{"AKc1"}, f.retiring()); diff != "" {
		t.Fatalf("retiring keys (-want +got):\n%s", diff)
	}
	if revoke := st.RetiringKeys[0].RevokeAfter.Time; revoke.Before(start.Add(storagev1alpha1.DefaultKeyOverlap-time.Second)) ||
		revoke.After(time.Now().Add(storagev1alpha1.DefaultKeyOverlap)) {
		t.Errorf("the replaced key is revoked at %s, want ten minutes after the rotation", revoke)
	}
	if diff := cmp.Diff([]string{"AKc1", newKey.AccessKeyID}, f.providerKeys()); diff != "" {
		t.Errorf("the provider's keys during the overlap (-want +got):\n%s", diff)
	}
	f.wantKeyRotation(metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated,
		"Key "+newKey.AccessKeyID+" has been in Secret acc-credentials since", "the replaced key is revoked: AKc1 at ")
	f.wantReady()

	// Within the overlap nothing more happens, however often the Contract is woken.
	for range 3 {
		f.mustPass()
	}
	if n, m := f.api.Calls(fakeapi.OpAddKey), f.api.Calls(fakeapi.OpRemoveKey); n != 1 || m != 0 {
		t.Errorf("within the overlap: %d AddKey and %d RemoveKey calls, want 1 and 0", n, m)
	}

	f.overlapPassed()
	f.mustPass()
	if diff := cmp.Diff([]string{newKey.AccessKeyID}, f.providerKeys()); diff != "" {
		t.Errorf("the provider's keys after the overlap (-want +got):\n%s", diff)
	}
	if len(f.contract.Status.RetiringKeys) != 0 || f.secretKey() != newKey.AccessKeyID {
		t.Errorf("after the revocation: retiring %v, Secret key %s; want none retiring and the new key in the Secret", f.retiring(), f.secretKey())
	}
	f.wantKeyRotation(metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated, "a new value of annotation storage.osm.dev/rotate-key rotates it")
	f.wantReady()

	// The same value again asks for nothing; a new one rotates again.
	f.mustPass()
	f.annotate("2024-07-01")
	f.mustPass()
	if got := f.secretKey(); got == newKey.AccessKeyID || f.contract.Status.KeysIssued != 2 {
		t.Errorf("after a new annotation value the Secret holds %s (%d issued), want a third key", got, f.contract.Status.KeysIssued)
	}
}

func TestAnAnnotationPresentAtCreationAsksForNoRotation(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{}, func(c *storagev1alpha1.Contract) {
		c.Annotations = map[string]string{storagev1alpha1.RotateKeyAnnotation: "copied-from-a-template"}
	})
	f.mustPass()
	if n := f.api.Calls(fakeapi.OpAddKey); n != 0 || f.secretKey() != "AKc1" {
		t.Errorf("%d AddKey calls, Secret key %s; want none and the first key", n, f.secretKey())
	}
}

func TestALostAddKeyAnswerIsAskedForAgainWithTheSameIdempotencyKey(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.api.Fail(fakeapi.OpAddKey, fakeapi.Failure{Err: &contractclient.Error{Op: "adding a key to contract c1", Cause: errLost}, AfterActing: true})
	f.annotate("1")
	if _, err := f.pass(); err == nil {
		t.Fatal("a pass whose AddKey answer was lost succeeded")
	}
	pending := f.contract.Status.PendingKey
	if pending == nil || pending.IdempotencyKey != "uid-acc-key-1" || pending.Trigger != "1" {
		t.Fatalf("pending key %+v, want the rotation recorded with idempotency key uid-acc-key-1 before the provider was asked", pending)
	}
	if f.secretKey() != "AKc1" {
		t.Errorf("the Secret holds %s before the new key was answered, want AKc1", f.secretKey())
	}
	f.wantKeyRotation(metav1.ConditionFalse, storagev1alpha1.ReasonContractAPIUnavailable, "Secret acc-credentials keeps key AKc1")
	f.wantReady()

	f.mustPass()
	if got := f.providerKeys(); len(got) != 2 {
		t.Errorf("the provider holds keys %v, want the first and one new key: the replay must not make a second", got)
	}
	if got := f.secretKey(); got != f.providerKeys()[1] || f.contract.Status.PendingKey != nil {
		t.Errorf("Secret key %s, pending %+v; want the key made for the lost answer and nothing pending", got, f.contract.Status.PendingKey)
	}
}

func TestANewKeyTheEndpointRefusesNeverReachesTheSecret(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.endpoint.refuse = []error{s3Answer(http.StatusForbidden, "InvalidAccessKeyId")}
	f.annotate("1")
	res := f.mustPass()
	if f.secretKey() != "AKc1" {
		t.Fatalf("a key the endpoint refused went into the Secret")
	}
	if res.RequeueAfter != tuning.NewKeyRetry {
		t.Errorf("RequeueAfter %s, want the new key tried again after %s", res.RequeueAfter, tuning.NewKeyRetry)
	}
	made := f.contract.Status.PendingKey
	if made == nil || made.AccessKeyID == "" {
		t.Fatalf("pending key %+v, want the refused key's id recorded", made)
	}
	f.wantKeyRotation(metav1.ConditionFalse, storagev1alpha1.ReasonNewKeyRefused,
		"refused new key "+made.AccessKeyID, "InvalidAccessKeyId", "Secret acc-credentials keeps key AKc1")
	f.wantReady()

	f.mustPass()
	if got := f.secretKey(); got != made.AccessKeyID {
		t.Errorf("the Secret holds %s once the key works, want the same new key %s", got, made.AccessKeyID)
	}
	if diff := cmp.Diff([]string{made.AccessKeyID, made.AccessKeyID}, f.endpoint.tried); diff != "" {
		t.Errorf("keys tried on the endpoint (-want +got):\n%s", diff)
	}
}

func TestAnEndpointThatCannotBeReachedIsRetriedWithBackoff(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.endpoint.refuse = []error{s3Answer(http.StatusServiceUnavailable, "ServiceUnavailable")}
	f.annotate("1")
	if _, err := f.pass(); err == nil {
		t.Fatal("a pass that could not try the new key succeeded")
	}
	f.wantKeyRotation(metav1.ConditionFalse, storagev1alpha1.ReasonS3Unavailable, "could not be reached to try new key")
	f.mustPass()
	f.wantKeyRotation(metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated)
}

// A crash after the new key went into the Secret and before status said so: the next pass
// gets the same key back, finds it in the Secret, and retires the key it replaced.
func TestACrashAfterTheSecretWasWrittenRetiresTheReplacedKey(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.editStatus(func(s *storagev1alpha1.ContractStatus) {
		s.PendingKey = &storagev1alpha1.PendingKey{IdempotencyKey: "uid-acc-key-1", Trigger: "1"}
	})
	creds, err := f.api.AddKey(context.Background(), "c1", "uid-acc-key-1")
	if err != nil {
		t.Fatal(err)
	}
	secret := f.secret()
	secret.Data[storagev1alpha1.SecretKeyAccessKeyID] = []byte(creds.AccessKeyID)
	secret.Data[storagev1alpha1.SecretKeySecretAccessKey] = []byte(creds.SecretAccessKey)
	if err := f.cluster.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}

	f.mustPass()
	st := f.contract.Status
	if st.AccessKeyID != creds.AccessKeyID || st.PendingKey != nil || st.KeysIssued != 1 || st.RotatedFor != "1" {
		t.Errorf("status: key %s, pending %+v, %d issued, rotated for %q; want the key in the Secret, finished, 1, \"1\"",
			st.AccessKeyID, st.PendingKey, st.KeysIssued, st.RotatedFor)
	}
	if diff := cmp.Diff([]string{"AKc1"}, f.retiring()); diff != "" {
		t.Errorf("retiring keys (-want +got):\n%s", diff)
	}
	if got := f.providerKeys(); len(got) != 2 {
		t.Errorf("the provider holds keys %v, want two", got)
	}
}

// A replaced key put back into the Secret by hand (from a backup) is never revoked: it becomes
// the current key again, and the key it displaced from the Secret retires in its place.
func TestTheKeyInTheSecretIsNeverRevoked(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.annotate("1")
	f.mustPass()
	displaced := f.secretKey()
	secret := f.secret()
	secret.Data[storagev1alpha1.SecretKeyAccessKeyID] = []byte("AKc1")
	secret.Data[storagev1alpha1.SecretKeySecretAccessKey] = []byte("SKc1")
	if err := f.cluster.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	f.overlapPassed()
	f.mustPass()
	if n := f.api.Calls(fakeapi.OpRemoveKey); n != 0 || len(f.providerKeys()) != 2 {
		t.Errorf("%d RemoveKey calls, provider keys %v; the key in the Secret must not be revoked", n, f.providerKeys())
	}
	if st := f.contract.Status; st.AccessKeyID != "AKc1" || !slices.Equal(f.retiring(), []string{displaced}) {
		t.Errorf("status names key %s, retiring %v; want the key in the Secret current again and %s retiring", st.AccessKeyID, f.retiring(), displaced)
	}
	f.overlapPassed()
	f.mustPass()
	if diff := cmp.Diff([]string{"AKc1"}, f.providerKeys()); diff != "" || f.secretKey() != "AKc1" {
		t.Errorf("after the overlap the provider's keys (-want +got):\n%s; the Secret holds %s", diff, f.secretKey())
	}
}

func TestTheKeyRotatesWhenItsPeriodHasPassed(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{}, func(c *storagev1alpha1.Contract) {
		c.Spec.KeyRotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 24 * time.Hour},
			Overlap: &metav1.Duration{Duration: 5 * time.Minute}}
	})
	issued := f.contract.Status.KeyIssuedAt.Time
	f.wantKeyRotation(metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotationScheduled,
		"Key AKc1 has been in Secret acc-credentials since "+formatTime(issued),
		"the next rotation is at "+formatTime(issued.Add(24*time.Hour))+" (spec.keyRotation.period 24h0m0s)")
	r := f.r
	r.ResyncPeriod = 48 * time.Hour
	res := f.mustPass()
	if wait := time.Until(issued.Add(24 * time.Hour)); res.RequeueAfter > wait+time.Second || res.RequeueAfter < wait-time.Minute {
		t.Errorf("RequeueAfter %s, want the time until the period passes (%s)", res.RequeueAfter, wait)
	}

	f.editStatus(func(s *storagev1alpha1.ContractStatus) {
		s.KeyIssuedAt = &metav1.Time{Time: time.Now().Add(-25 * time.Hour)}
	})
	start := time.Now()
	f.mustPass()
	st := f.contract.Status
	if st.AccessKeyID == "AKc1" || st.RotatedFor != "" || st.KeysIssued != 1 {
		t.Fatalf("status: key %s, rotated for %q, %d issued; want a new key for the period", st.AccessKeyID, st.RotatedFor, st.KeysIssued)
	}
	if revoke := st.RetiringKeys[0].RevokeAfter.Time; revoke.Before(start.Add(5*time.Minute-time.Second)) || revoke.After(time.Now().Add(5*time.Minute)) {
		t.Errorf("the replaced key is revoked at %s, want spec.keyRotation.overlap (5m) after the rotation", revoke)
	}
	f.wantKeyRotation(metav1.ConditionTrue, storagev1alpha1.ReasonKeyRotated, "the next rotation is at "+formatTime(st.KeyIssuedAt.Add(24*time.Hour)))
}

func TestAProviderWithOneKeyPerAccountSaysSoAndIsNotAsked(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{SingleKey: true})
	f.annotate("1")
	for range 3 {
		f.mustPass()
	}
	f.wantKeyRotation(metav1.ConditionFalse, storagev1alpha1.ReasonKeyRotationUnsupported,
		"Versitygw accounts hold one key pair: this Contract's key cannot rotate, and key AKc1 stays in Secret acc-credentials")
	if n := f.api.Calls(fakeapi.OpAddKey); n != 0 || f.secretKey() != "AKc1" || f.contract.Status.PendingKey != nil {
		t.Errorf("%d AddKey calls, Secret key %s, pending %+v; want nothing asked and nothing changed", n, f.secretKey(), f.contract.Status.PendingKey)
	}
	f.wantReady()
	if got := drain(f.r); !strings.Contains(got, "Warning KeyRotationUnsupported") || strings.Count(got, "KeyRotationUnsupported") != 1 {
		t.Errorf("events %q, want one warning that the key cannot rotate", got)
	}

	// Nothing asked any more: the condition goes.
	patch := client.MergeFrom(f.contract.DeepCopy())
	delete(f.contract.Annotations, storagev1alpha1.RotateKeyAnnotation)
	if err := f.cluster.Patch(context.Background(), f.contract, patch); err != nil {
		t.Fatal(err)
	}
	f.mustPass()
	if c := f.keyRotation(); c != nil {
		t.Errorf("KeyRotation %s %s after rotation is no longer asked for, want none", c.Status, c.Reason)
	}
}

// A provider that does not say its accounts hold one key answers addKey 501: the operator says
// so, forgets the rotation, and asks again once a resync period, not on every pass.
func TestARefusedSecondKeyIsRememberedForAResyncPeriod(t *testing.T) {
	api := &fakeapi.API{}
	f := newKeyFixture(t, api)
	api.SingleKey = true // the contract said it could hold more
	f.annotate("1")
	for range 3 {
		f.mustPass()
	}
	f.wantKeyRotation(metav1.ConditionFalse, storagev1alpha1.ReasonKeyRotationUnsupported, "Versitygw accounts hold one key pair")
	if n := api.Calls(fakeapi.OpAddKey); n != 1 || f.contract.Status.PendingKey != nil {
		t.Errorf("%d AddKey calls, pending %+v; want one, and the rotation forgotten", n, f.contract.Status.PendingKey)
	}
	f.r.refusals.Now = func() time.Time { return time.Now().Add(2 * f.r.ResyncPeriod) } // a resync period later
	f.mustPass()
	if n := api.Calls(fakeapi.OpAddKey); n != 2 {
		t.Errorf("%d AddKey calls after the resync period, want the provider asked again", n)
	}
}

// A Secret deleted by hand after a rotation does not get the first key back (a replayed
// purchase answers only that one, and it is revoked): it gets a new key, and the one it held
// retires, for whoever read it before.
func TestASecretLostAfterARotationGetsANewKey(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.annotate("1")
	f.mustPass()
	rotated := f.secretKey()
	f.overlapPassed()
	f.mustPass() // AKc1 revoked

	if err := f.cluster.Delete(context.Background(), f.secret()); err != nil {
		t.Fatal(err)
	}
	f.mustPass() // lets the Secret go
	f.mustPass() // writes it again
	got := f.secretCreds()
	if got.AccessKeyID == "AKc1" || got.AccessKeyID == rotated || !f.api.Works("c1", got) {
		t.Fatalf("the Secret came back with key %s, want a new key that works (not AKc1, not %s)", got.AccessKeyID, rotated)
	}
	if diff := cmp.Diff([]string{rotated}, f.retiring()); diff != "" {
		t.Errorf("retiring keys (-want +got):\n%s", diff)
	}
	f.wantReady()
}

func TestRetainDeletionRevokesTheReplacedKeysBeforeTheContractGoes(t *testing.T) {
	f := newKeyFixture(t, &fakeapi.API{})
	f.annotate("1")
	f.mustPass()
	current := f.secretKey()
	deleting(t, f.cluster, f.contract)
	res := f.mustPass()
	if res.RequeueAfter <= 0 || res.RequeueAfter > storagev1alpha1.DefaultKeyOverlap {
		t.Errorf("RequeueAfter %s, want the time until the replaced key is revoked", res.RequeueAfter)
	}
	ready := readyOf(t, f.cluster, f.contract, func() []metav1.Condition { return f.contract.Status.Conditions })
	if ready.Reason != storagev1alpha1.ReasonDeleting || !strings.Contains(ready.Message, "Deletion waits until the replaced key is revoked: AKc1 at ") {
		t.Errorf("Ready = %s: %s, want deletion waiting for AKc1's revocation", ready.Reason, ready.Message)
	}
	f.overlapPassed()
	f.mustPass()
	if err := f.cluster.Get(context.Background(), client.ObjectKeyFromObject(f.contract), f.contract); err == nil {
		t.Errorf("the Contract is still there (finalizers %v)", f.contract.Finalizers)
	}
	if diff := cmp.Diff([]string{current}, f.providerKeys()); diff != "" {
		t.Errorf("the provider's keys after the deletion (-want +got):\n%s", diff)
	}
	if s := f.secret(); string(s.Data[storagev1alpha1.SecretKeyAccessKeyID]) != current || len(s.OwnerReferences) != 0 {
		t.Errorf("the retained Secret holds %s with owners %v, want the current key %s, unowned",
			s.Data[storagev1alpha1.SecretKeyAccessKeyID], s.OwnerReferences, current)
	}
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// drain returns the events recorded so far, one per line.
func drain(r *ContractReconciler) string {
	rec := r.Recorder.(*events.FakeRecorder)
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}
