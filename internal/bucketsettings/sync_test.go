package bucketsettings

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// events collects what Sync emits, as "Type Reason".
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) emit(eventType, reason, _ string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, eventType+" "+reason)
}

// fixture is a bucket that exists on the fake server, and a Bucket that asks for every setting.
func fixture(t *testing.T) (*Input, *fakes3.Store) {
	t.Helper()
	store := &fakes3.Store{Owner: "AK"}
	if _, err := store.CreateBucket(context.Background(), "b", objectstore.CreateOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Spec: storagev1alpha1.BucketSpec{
		BucketName: "b", CannedACL: storagev1alpha1.CannedACLPublicRead, Versioning: storagev1alpha1.VersioningEnabled,
		Lifecycle: &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
			{ID: "tmp", Prefix: "tmp/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](1)}}}},
		CORS: &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{
			{AllowedOrigins: []string{"https://app.example.com"}, AllowedMethods: []storagev1alpha1.CORSMethod{"GET"}}}},
		ObjectLock: &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{Mode: storagev1alpha1.RetentionGovernance, Days: 7}},
		Tags:       map[string]string{"team": "data"},
	}}
	return &Input{Bucket: b, Store: store, OwnerTags: map[string]string{"storage.osm.dev/bucket": "ns/b"}}, store
}

func writes(calls []string) []string {
	var out []string
	for _, c := range calls {
		if objectstore.IsMutating(c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func TestEverySettingIsWrittenOnceThenOnlyRead(t *testing.T) {
	in, store := fixture(t)
	ev := &events{}
	made := len(store.Calls())
	if failed := Sync(context.Background(), in, ev.emit, All).Failed; len(failed) > 0 {
		t.Fatalf("Sync failed: %+v", failed)
	}
	want := []string{"PutACL", "PutBucketTags", "PutCORS", "PutLifecycle", "PutObjectLock"} // versioning came with the lock
	if got := writes(store.Calls()[made:]); !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	st := in.Bucket.Status
	if st.ACL == nil || st.Versioning != "Enabled" || st.ObjectLock == nil || st.Lifecycle == nil || st.CORS == nil || st.Tags["team"] != "data" {
		t.Errorf("status does not show every setting observed: %+v", st)
	}
	if _, owner := st.Tags["storage.osm.dev/bucket"]; owner {
		t.Errorf("status shows the operator's own tag: %v", st.Tags)
	}
	for _, e := range ev.got {
		if !strings.HasPrefix(e, "Normal ") || !strings.HasSuffix(e, "Updated") {
			t.Errorf("event %q for a spec applied the first time, want Normal ...Updated", e)
		}
	}

	// Applied: the next passes read and write nothing, whatever the order they run in.
	in.Applied = true
	before := len(store.Calls())
	for range 3 {
		if failed := Sync(context.Background(), in, ev.emit, All).Failed; len(failed) > 0 {
			t.Fatalf("Sync failed: %+v", failed)
		}
	}
	if got := writes(store.Calls()[before:]); len(got) > 0 {
		t.Errorf("a bucket in sync was written: %v", got)
	}
}

func TestDriftIsRestoredWithAWarning(t *testing.T) {
	in, store := fixture(t)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	in.Applied = true
	ctx := context.Background()
	_ = store.PutACL(ctx, "b", objectstore.DesiredACL("AK", "private", nil))
	_ = store.PutBucketTags(ctx, "b", map[string]string{"storage.osm.dev/bucket": "ns/b", "team": "other", "extra": "1"})
	ev := &events{}
	if failed := Sync(ctx, in, ev.emit, All).Failed; len(failed) > 0 {
		t.Fatalf("Sync failed: %+v", failed)
	}
	slices.Sort(ev.got)
	if want := []string{"Warning ACLDriftCorrected", "Warning TagsDriftCorrected"}; !slices.Equal(ev.got, want) {
		t.Errorf("events %v, want %v", ev.got, want)
	}
	if got := store.Bucket("b").Tags; len(got) != 2 || got["team"] != "data" || got["storage.osm.dev/bucket"] != "ns/b" {
		t.Errorf("tags after the drift was restored: %v", got)
	}
}

func TestASettingTheServerLacksFailsAloneAndTheRestIsApplied(t *testing.T) {
	in, store := fixture(t)
	store.Fail("Lifecycle", fakes3.Failure{Err: fakes3.NotImplemented})
	store.Fail("BucketTags", fakes3.Failure{Err: errors.New("the network went")})
	failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed
	var fields []string
	for _, f := range failed {
		fields = append(fields, f.Info.Field)
	}
	if want := []string{"lifecycle", "tags"}; !slices.Equal(fields, want) {
		t.Fatalf("failed settings %v, want %v in the order All lists them", fields, want)
	}
	if !objectstore.IsNotImplemented(failed[0].Err) || failed[0].Info.Unsupported != storagev1alpha1.ReasonLifecycleUnsupported {
		t.Errorf("lifecycle failure %+v, want NotImplemented with its reason", failed[0])
	}
	if in.Bucket.Status.Lifecycle != nil || in.Bucket.Status.Tags != nil {
		t.Errorf("status shows what the server never answered: lifecycle %+v, tags %v", in.Bucket.Status.Lifecycle, in.Bucket.Status.Tags)
	}
	if got := store.Bucket("b"); len(got.CORS) != 1 || got.ObjectLock.Days != 7 {
		t.Errorf("the settings the server has were not applied: %+v", got)
	}
}

func TestABucketWithoutObjectLockIsReportedNotChanged(t *testing.T) {
	in, store := fixture(t)
	if _, err := store.CreateBucket(context.Background(), "plain", objectstore.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	in.Bucket.Spec.BucketName = "plain"
	failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed
	if len(failed) != 1 || !errors.Is(failed[0].Err, ErrObjectLockNotEnabled) {
		t.Fatalf("failures %+v, want the missing object lock alone", failed)
	}
	if slices.Contains(store.Calls(), "PutObjectLock") || in.Bucket.Status.ObjectLock != nil {
		t.Errorf("object lock was written or recorded on a bucket made without it: calls %v, status %+v", store.Calls(), in.Bucket.Status.ObjectLock)
	}
}

func TestWhatTheSpecDropsIsRemovedAndWhatItNeverHadIsLeftAlone(t *testing.T) {
	in, store := fixture(t)
	Sync(context.Background(), in, func(string, string, string) {}, All)
	spec := &in.Bucket.Spec
	spec.Lifecycle, spec.CORS, spec.Versioning, spec.Tags = nil, nil, "", nil
	ev := &events{}
	Sync(context.Background(), in, ev.emit, All)
	got := store.Bucket("b")
	if got.Lifecycle != nil || got.CORS != nil {
		t.Errorf("rules the spec dropped are still there: lifecycle %+v, CORS %+v", got.Lifecycle, got.CORS)
	}
	if got.Versioning != "Enabled" {
		t.Errorf("versioning the spec stopped naming became %q; it is left as the server has it", got.Versioning)
	}
	if len(got.Tags) != 1 || got.Tags["storage.osm.dev/bucket"] != "ns/b" {
		t.Errorf("tags after the spec dropped its own: %v, want the owner tag alone", got.Tags)
	}
	st := in.Bucket.Status
	if st.Lifecycle != nil || st.CORS != nil || st.Versioning != "" || st.Tags != nil {
		t.Errorf("status still shows dropped settings: %+v", st)
	}

	// Set outside the operator on a Bucket whose spec has none: not its business, not even read.
	_ = store.PutLifecycle(context.Background(), "b", []objectstore.LifecycleRule{{ID: "theirs", Enabled: true, ExpirationDays: 1}})
	before := len(store.Calls())
	Sync(context.Background(), in, ev.emit, All)
	for _, c := range store.Calls()[before:] {
		if c != "ACL" && c != "Policy" && c != "ObjectLock" {
			t.Errorf("a setting the spec does not have was touched: %s", c)
		}
	}
}

func TestGeneratedRulesCountAsAppliedOnlyAsTheyAreNow(t *testing.T) {
	in, store := fixture(t)
	retention := storagev1alpha1.LifecycleRule{ID: "osm-backup-web", Prefix: "web/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)}}
	in.LifecycleRules = []storagev1alpha1.LifecycleRule{retention}
	Sync(context.Background(), in, func(string, string, string) {}, All)
	in.Applied = true

	retention.Expiration.Days = ptr.To[int32](30) // the Application changed; the Bucket did not
	in.LifecycleRules = []storagev1alpha1.LifecycleRule{retention}
	ev := &events{}
	Sync(context.Background(), in, ev.emit, All)
	if !slices.Contains(ev.got, "Normal LifecycleUpdated") {
		t.Errorf("events %v: a change of a generated rule is an update, not drift", ev.got)
	}
	for _, r := range store.Bucket("b").Lifecycle {
		if r.ID == "osm-backup-web" && r.ExpirationDays != 30 {
			t.Errorf("the generated rule expires after %d days, want 30", r.ExpirationDays)
		}
	}
}

// oneRecordStore is a server that keeps a bucket's settings in one record that each write reads
// and rewrites whole, as Ceph RGW does: it counts the writes in flight at once.
type oneRecordStore struct {
	*fakes3.Store
	mu             sync.Mutex
	inFlight, most int
}

func (s *oneRecordStore) write(put func() error) error {
	s.mu.Lock()
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // long enough for a second write to start, were it allowed
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	return put()
}

func (s *oneRecordStore) PutVersioning(ctx context.Context, name, status string) error {
	return s.write(func() error { return s.Store.PutVersioning(ctx, name, status) })
}

func (s *oneRecordStore) PutLifecycle(ctx context.Context, name string, rules []objectstore.LifecycleRule) error {
	return s.write(func() error { return s.Store.PutLifecycle(ctx, name, rules) })
}

func (s *oneRecordStore) PutCORS(ctx context.Context, name string, rules []objectstore.CORSRule) error {
	return s.write(func() error { return s.Store.PutCORS(ctx, name, rules) })
}

func (s *oneRecordStore) PutBucketTags(ctx context.Context, name string, tags map[string]string) error {
	return s.write(func() error { return s.Store.PutBucketTags(ctx, name, tags) })
}

// Settings are read side by side, but written one at a time: on a server that rewrites one
// record per write, two at once would lose one.
func TestSettingsAreWrittenOneAtATime(t *testing.T) {
	in, fake := fixture(t)
	store := &oneRecordStore{Store: fake}
	in.Store = store
	res := Sync(context.Background(), in, func(string, string, string) {}, All)
	if len(res.Failed) > 0 {
		t.Fatalf("failed: %v", res.Failed)
	}
	if store.most != 1 {
		t.Errorf("%d writes in flight at once, want 1", store.most)
	}
}
