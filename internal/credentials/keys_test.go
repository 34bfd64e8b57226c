package credentials

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
)

// These tests walk one key pair through its lifecycle, and through the crashes and hand edits
// between the steps, over a provider in memory. The controllers' own tests run the same
// lifecycle against the contract API's fake and real servers.

// issuer is a provider's keys in memory: the first key pair, one per idempotency key after it,
// and which of them are in effect.
type issuer struct {
	first      contractclient.Credentials
	added      map[string]contractclient.Credentials
	live       []string
	singleKey  bool
	notYet     int // the next tries of a new key find it not working yet
	firstCalls int
}

func newIssuer() *issuer {
	return &issuer{first: contractclient.Credentials{AccessKeyID: "K1", SecretAccessKey: "S1"},
		added: map[string]contractclient.Credentials{}, live: []string{"K1"}}
}

func (i *issuer) First(context.Context) (contractclient.Credentials, error) {
	i.firstCalls++
	return i.first, nil
}

func (i *issuer) Add(_ context.Context, idempotencyKey string) (contractclient.Credentials, error) {
	if i.singleKey {
		return contractclient.Credentials{}, fmt.Errorf("one key per account: %w", contractclient.ErrNotSupported)
	}
	if key, ok := i.added[idempotencyKey]; ok {
		return key, nil
	}
	n := len(i.added) + 2
	key := contractclient.Credentials{AccessKeyID: fmt.Sprintf("K%d", n), SecretAccessKey: fmt.Sprintf("S%d", n)}
	i.added[idempotencyKey] = key
	i.live = append(i.live, key.AccessKeyID)
	return key, nil
}

func (i *issuer) Revoke(_ context.Context, id string) error {
	i.live = slices.DeleteFunc(i.live, func(k string) bool { return k == id })
	return nil
}

func (i *issuer) Verify(context.Context, contractclient.Credentials) (Verdict, error) {
	if i.notYet > 0 {
		i.notYet--
		return Verdict{Reason: storagev1alpha1.ReasonNewKeyPending, Why: "not yet", Retry: 2 * time.Second}, nil
	}
	return Verdict{Works: true}, nil
}

// resource is one resource's keys as its status and its Secret hold them; cached, when set, is
// the Secret as a cache a step behind shows it.
type resource struct {
	issuer   *issuer
	status   storagev1alpha1.KeyStatus
	secret   contractclient.Credentials
	cached   *contractclient.Credentials
	refusals ttlcache.Cache[types.UID, string]
	events   []string
	now      time.Time
}

func newResource() *resource {
	return &resource{issuer: newIssuer(), now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
}

// pass runs the lifecycle once, as a reconcile would, with annotation as the rotate-key value.
func (r *resource) pass(t *testing.T, annotation string) Result {
	t.Helper()
	k := &Keys{
		Issuer: r.issuer, UID: "uid", Status: &r.status,
		Record:      func(_ context.Context, mutate func(*storagev1alpha1.KeyStatus)) error { mutate(&r.status); return nil },
		SecretName:  "creds",
		InSecret:    r.secret,
		WriteSecret: func(_ context.Context, key contractclient.Credentials) error { r.secret = key; return nil },
		Reread:      func(context.Context) (contractclient.Credentials, error) { return r.secret, nil },
		Annotation:  annotation, RotationField: "spec.rotation",
		Refusals: &r.refusals, ResyncPeriod: time.Hour, Now: r.now,
		Emit: func(_, reason, _ string) { r.events = append(r.events, reason) },
	}
	if r.issuer.singleKey {
		k.SingleKey = "one key per account"
	}
	if r.cached != nil {
		k.InSecret = *r.cached
	}
	res := k.Reconcile(context.Background())
	if res.Err != nil {
		t.Fatalf("pass: %v", res.Err)
	}
	return res
}

func (r *resource) retiring() []string {
	var ids []string
	for _, k := range r.status.RetiringKeys {
		ids = append(ids, k.AccessKeyID)
	}
	return ids
}

// issued is a resource whose first key is in its Secret.
func issued(t *testing.T) *resource {
	r := newResource()
	r.pass(t, "")
	if r.secret.AccessKeyID != "K1" || r.status.AccessKeyID != "K1" {
		t.Fatalf("after the first pass the Secret holds %q and status names %q, want the first key K1 in both", r.secret.AccessKeyID, r.status.AccessKeyID)
	}
	return r
}

func TestTheFirstKeyGoesIntoTheSecretAndAPassThatStoppedGetsTheSameAgain(t *testing.T) {
	r := newResource()
	r.pass(t, "copied-from-a-template")
	// The pass stopped before its status write: status names no key, the Secret holds one.
	r.status = storagev1alpha1.KeyStatus{}
	r.pass(t, "copied-from-a-template")
	if r.secret != r.issuer.first || r.status.AccessKeyID != "K1" || len(r.issuer.live) != 1 {
		t.Errorf("Secret %v, status %q, provider's keys %v; want the first key, once", r.secret, r.status.AccessKeyID, r.issuer.live)
	}
	if r.status.RotatedFor != "copied-from-a-template" || r.status.PendingKey != nil {
		t.Errorf("an annotation there at the first key asked for a rotation: %+v", r.status)
	}
}

func TestARotationRetiresTheReplacedKeyAndRevokesItAfterTheOverlap(t *testing.T) {
	r := issued(t)
	res := r.pass(t, "2026-11-26")
	if r.secret.AccessKeyID != "K2" || r.status.AccessKeyID != "K2" || r.status.RotatedFor != "2026-11-26" || r.status.KeysIssued != 1 {
		t.Fatalf("after the rotation: Secret %s, status %+v", r.secret.AccessKeyID, r.status)
	}
	if diff := cmp.Diff([]string{"K1"}, r.retiring()); diff != "" {
		t.Fatalf("retiring (-want +got):\n%s", diff)
	}
	if want := storagev1alpha1.DefaultKeyOverlap; res.After != want || !r.status.RetiringKeys[0].RevokeAfter.Equal(&metav1.Time{Time: r.now.Add(want)}) {
		t.Errorf("look again after %s, revoke at %s; want both the default overlap (%s) away", res.After, r.status.RetiringKeys[0].RevokeAfter, want)
	}
	r.now = r.now.Add(storagev1alpha1.DefaultKeyOverlap)
	r.pass(t, "2026-11-26")
	if diff := cmp.Diff([]string{"K2"}, r.issuer.live); diff != "" || len(r.status.RetiringKeys) > 0 {
		t.Errorf("after the overlap the provider's keys (-want +got):\n%s; retiring %v", diff, r.retiring())
	}
	if want := []string{"KeyRotationStarted", "KeyRotated", "KeyRevoked"}; !slices.Equal(r.events, want) {
		t.Errorf("events %v, want %v", r.events, want)
	}
}

// The manager stops after the new key went into the Secret and before status named it (the
// BucketAccess copy of this lifecycle took the key to retire from the Secret, so the replaced
// key never retired and kept working).
func TestAPassThatStoppedAfterWritingTheSecretStillRetiresTheKeyStatusNamed(t *testing.T) {
	r := issued(t)
	r.status.PendingKey = &storagev1alpha1.PendingKey{IdempotencyKey: "uid-key-1", Trigger: "now"}
	r.secret, _ = r.issuer.Add(context.Background(), "uid-key-1")

	r.pass(t, "now")
	if r.status.AccessKeyID != r.secret.AccessKeyID || r.status.PendingKey != nil || r.status.KeysIssued != 1 {
		t.Errorf("status %+v, want the key in the Secret recorded and the rotation finished", r.status)
	}
	if diff := cmp.Diff([]string{"K1"}, r.retiring()); diff != "" {
		t.Errorf("retiring (-want +got):\n%s", diff)
	}
	if len(r.issuer.added) != 1 {
		t.Errorf("%d keys added, want the replay to give the same one", len(r.issuer.added))
	}
}

func TestASecretThatLostItsKeyGetsANewOneAndTheLostKeyRetires(t *testing.T) {
	for _, how := range []string{"emptied by hand", "deleted"} {
		t.Run(how, func(t *testing.T) {
			r := issued(t)
			r.secret = contractclient.Credentials{} // both leave no key to read
			r.pass(t, "")
			if r.secret.AccessKeyID != "K2" || r.status.AccessKeyID != "K2" {
				t.Fatalf("Secret %s, status %s; want a new key in both", r.secret.AccessKeyID, r.status.AccessKeyID)
			}
			if diff := cmp.Diff([]string{"K1"}, r.retiring()); diff != "" {
				t.Errorf("retiring (-want +got):\n%s: whoever read the lost key before has the overlap to move", diff)
			}
			if r.status.RotatedFor != "" {
				t.Errorf("rotated for %q: a replacement answers no annotation", r.status.RotatedFor)
			}
		})
	}
}

func TestAProviderWithOneKeyGivesALostSecretTheSameKeyBack(t *testing.T) {
	r := issued(t)
	r.issuer.singleKey = true
	r.secret = contractclient.Credentials{}
	res := r.pass(t, "")
	if r.secret != r.issuer.first || res.Found.State != Unsupported {
		t.Errorf("Secret %v, finding %+v; want the one key back, and rotation reported unsupported", r.secret, res.Found)
	}
	if len(r.issuer.live) != 1 || r.status.PendingKey != nil {
		t.Errorf("provider's keys %v, pending %+v; want nothing asked", r.issuer.live, r.status.PendingKey)
	}
}

func TestAProviderThatRefusesASecondKeyIsAskedAgainOnlyAfterAResyncPeriod(t *testing.T) {
	r := issued(t)
	r.issuer.singleKey = true
	r.pass(t, "1") // SingleKey set: nothing asked at all
	r.issuer.singleKey = false
	refusing := &refusingIssuer{issuer: r.issuer}
	k := func() *Keys {
		return &Keys{Issuer: refusing, UID: "uid", Status: &r.status, SecretName: "creds", InSecret: r.secret,
			Record:      func(_ context.Context, mutate func(*storagev1alpha1.KeyStatus)) error { mutate(&r.status); return nil },
			WriteSecret: func(_ context.Context, key contractclient.Credentials) error { r.secret = key; return nil },
			Annotation:  "1", Refusals: &r.refusals, ResyncPeriod: time.Hour, Now: r.now, Emit: func(_, _, _ string) {}}
	}
	for range 3 {
		if res := k().Reconcile(context.Background()); res.Found.State != Unsupported || res.Err != nil {
			t.Fatalf("a refused second key: %+v", res)
		}
	}
	if refusing.asked != 1 || r.status.PendingKey != nil {
		t.Errorf("asked %d times, pending %+v; want once, and the rotation forgotten", refusing.asked, r.status.PendingKey)
	}
	r.refusals.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	k().Reconcile(context.Background())
	if refusing.asked != 2 {
		t.Errorf("asked %d times after the resync period, want the provider asked again", refusing.asked)
	}
}

// refusingIssuer answers every new key with not-supported, as a provider that did not say so
// beforehand does.
type refusingIssuer struct {
	*issuer
	asked int
}

func (r *refusingIssuer) Add(context.Context, string) (contractclient.Credentials, error) {
	r.asked++
	return contractclient.Credentials{}, contractclient.ErrNotSupported
}

func TestANewKeyThatDoesNotWorkYetStaysOutOfTheSecret(t *testing.T) {
	r := issued(t)
	r.issuer.notYet = 1
	res := r.pass(t, "1")
	if r.secret.AccessKeyID != "K1" || res.Found.State != NotWorking || res.After != 2*time.Second {
		t.Fatalf("Secret %s, finding %+v, after %s; want the old key kept and the new one tried again in 2s", r.secret.AccessKeyID, res.Found, res.After)
	}
	if p := r.status.PendingKey; p == nil || p.AccessKeyID != "K2" {
		t.Fatalf("pending %+v, want the new key's id recorded", p)
	}
	r.pass(t, "1")
	if r.secret.AccessKeyID != "K2" || len(r.issuer.added) != 1 {
		t.Errorf("Secret %s after the key works, %d keys added; want the same new key", r.secret.AccessKeyID, len(r.issuer.added))
	}
}

// A replaced key put back into the Secret by hand is never revoked: it becomes the current key
// again, and the key it displaced retires in its place.
func TestAReplacedKeyPutBackIntoTheSecretIsNeverRevoked(t *testing.T) {
	r := issued(t)
	r.pass(t, "1")
	r.secret = r.issuer.first
	r.now = r.now.Add(storagev1alpha1.DefaultKeyOverlap)
	r.pass(t, "1")
	if r.status.AccessKeyID != "K1" || !slices.Contains(r.issuer.live, "K1") {
		t.Fatalf("status names %s, provider's keys %v; want K1 current and working", r.status.AccessKeyID, r.issuer.live)
	}
	if diff := cmp.Diff([]string{"K2"}, r.retiring()); diff != "" {
		t.Errorf("retiring (-want +got):\n%s", diff)
	}
}

// The cache shows the Secret a step behind this operator's own writes (the sieve saw it with
// watch events coalesced): not there yet after the first key, still with the replaced key after a
// rotation. Neither is a Secret that lost its key or had an old key put back: the API server's
// copy, read again, says so, and the key stays.
func TestASecretTheCacheShowsBehindIsReadAgainBeforeItsKeyIsReplaced(t *testing.T) {
	r := issued(t)
	r.cached = &contractclient.Credentials{}
	r.pass(t, "")
	if r.status.AccessKeyID != "K1" || r.status.PendingKey != nil || len(r.issuer.added) > 0 {
		t.Errorf("a Secret the cache did not show yet was taken for lost: status %+v, %d keys added", r.status, len(r.issuer.added))
	}
	r.cached = nil
	r.pass(t, "1")
	r.cached = &r.issuer.first // the Secret before the rotation wrote K2
	r.pass(t, "1")
	if r.status.AccessKeyID != "K2" || !slices.Equal(r.retiring(), []string{"K1"}) {
		t.Errorf("the replaced key in a Secret the cache showed before the rotation was taken back: status names %s, retiring %v",
			r.status.AccessKeyID, r.retiring())
	}
	if want := []string{"KeyRotationStarted", "KeyRotated"}; !slices.Equal(r.events, want) {
		t.Errorf("events %v, want %v", r.events, want)
	}
}

func TestRotationIsDueAfterItsPeriodOrForANewAnnotationValue(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	issuedAt := metav1.NewTime(now.Add(-time.Hour))
	daily := &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 24 * time.Hour}}
	hourly := &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour}}
	tests := []struct {
		name, annotation, rotatedFor string
		rotation                     *storagev1alpha1.KeyRotation
		due                          bool
		trigger                      string
		next                         time.Time
		asked                        bool
	}{
		{name: "nothing asked"},
		{name: "an annotation already acted on", annotation: "a", rotatedFor: "a"},
		{name: "a new annotation value", annotation: "b", rotatedFor: "a", due: true, trigger: "b"},
		{name: "a period not yet passed", rotation: daily, next: now.Add(23 * time.Hour), asked: true},
		{name: "a period just passed", rotation: hourly, due: true, next: now, asked: true},
		{name: "the annotation names its rotation even when the period is due too", annotation: "b", rotation: hourly,
			due: true, trigger: "b", next: now, asked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &storagev1alpha1.KeyStatus{KeyIssuedAt: &issuedAt, RotatedFor: tt.rotatedFor}
			due, trigger, next := Due(tt.rotation, st, tt.annotation, now)
			if due != tt.due || trigger != tt.trigger || !next.Equal(tt.next) {
				t.Errorf("Due = (%v, %q, %s), want (%v, %q, %s)", due, trigger, next, tt.due, tt.trigger, tt.next)
			}
			if asked := Asked(tt.rotation, st); asked != tt.asked {
				t.Errorf("Asked = %v, want %v", asked, tt.asked)
			}
		})
	}
}

func TestTheOverlapIsTheRotationsOrTenMinutes(t *testing.T) {
	monthly := metav1.Duration{Duration: 30 * 24 * time.Hour}
	tests := []struct {
		rotation *storagev1alpha1.KeyRotation
		want     time.Duration
	}{
		{nil, 10 * time.Minute},
		{&storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour}}, 6 * time.Minute},
		{&storagev1alpha1.KeyRotation{Period: monthly}, time.Hour},
		{&storagev1alpha1.KeyRotation{Period: monthly, Overlap: &metav1.Duration{Duration: 4 * time.Second}}, 4 * time.Second},
	}
	for _, tt := range tests {
		if got := storagev1alpha1.KeyOverlap(tt.rotation); got != tt.want {
			t.Errorf("KeyOverlap(%+v) = %s, want %s", tt.rotation, got, tt.want)
		}
	}
}
