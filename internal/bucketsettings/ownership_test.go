package bucketsettings

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/smithy-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	fakes3 "github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// ownershipFixture is bucket "b" made as the operator makes it (ObjectWriter) with ACL acl, and
// a Bucket whose spec asks for ownership and cannedAcl.
func ownershipFixture(t *testing.T, acl storagev1alpha1.CannedACL, ownership storagev1alpha1.ObjectOwnership) (*Input, *fakes3.Store) {
	t.Helper()
	store := &fakes3.Store{Owner: "AK"}
	ctx := context.Background()
	if _, err := store.CreateBucket(ctx, "b", objectstore.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutACL(ctx, "b", objectstore.DesiredACL("AK", string(storagev1alpha1.CannedACLPublicRead), nil)); err != nil {
		t.Fatal(err)
	}
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "b", CannedACL: acl, OwnershipControls: ownership}}
	return &Input{Bucket: b, Store: store}, store
}

func mutations(calls []string) []string {
	var out []string
	for _, c := range calls {
		if objectstore.IsMutating(c) {
			out = append(out, c)
		}
	}
	return out
}

// Turning ACLs off over a public ACL takes one pass: the ACL is made private first (AWS refuses
// BucketOwnerEnforced over any other; versitygw takes it and then refuses to change the ACL).
func TestBucketOwnerEnforcedOverAPublicACLIsAppliedInOnePass(t *testing.T) {
	in, store := ownershipFixture(t, storagev1alpha1.CannedACLPrivate, storagev1alpha1.ObjectOwnershipBucketOwnerEnforced)
	ev := &events{}
	made := len(store.Calls())
	if failed := Sync(context.Background(), in, ev.emit, All).Failed; len(failed) > 0 {
		t.Fatalf("Sync failed: %+v", failed)
	}
	if got, want := mutations(store.Calls()[made:]), []string{"PutACL", "PutOwnershipControls"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if got := store.Bucket("b").Ownership; got != "BucketOwnerEnforced" {
		t.Errorf("ownership at the server = %q", got)
	}
	if got := in.Bucket.Status.OwnershipControls; got != "BucketOwnerEnforced" {
		t.Errorf("status.ownershipControls = %q", got)
	}
	if want := []string{"Normal OwnershipControlsUpdated"}; !slices.Equal(ev.got, want) {
		t.Errorf("events %v, want %v", ev.got, want)
	}
}

// Turning ACLs back on for a public ACL takes one pass too: ownership is a gate, written before
// the ACL, which a bucket under BucketOwnerEnforced refuses.
func TestACLsTurnedBackOnAreWrittenBeforeThePublicACL(t *testing.T) {
	// Without the gate the two would race, and the ACL's write could come first.
	if !Of[string](OwnershipControls{}).isGate() {
		t.Fatal("ownership controls are not a gate: the ACL may be written before them")
	}
	in, store := ownershipFixture(t, storagev1alpha1.CannedACLPublicRead, storagev1alpha1.ObjectOwnershipObjectWriter)
	ctx := context.Background()
	if err := store.PutACL(ctx, "b", objectstore.DesiredACL("AK", string(storagev1alpha1.CannedACLPrivate), nil)); err != nil {
		t.Fatal(err)
	}
	if err := store.PutOwnershipControls(ctx, "b", "BucketOwnerEnforced"); err != nil {
		t.Fatal(err)
	}
	made := len(store.Calls())
	if failed := Sync(ctx, in, func(string, string, string) {}, All).Failed; len(failed) > 0 {
		t.Fatalf("Sync failed: %+v", failed)
	}
	if got, want := mutations(store.Calls()[made:]), []string{"PutOwnershipControls", "PutACL"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
}

func TestOwnershipControlsInSyncDriftAndDropped(t *testing.T) {
	tests := []struct {
		name string
		// server is the bucket's ownership before the pass; spec the Bucket's; applied says an
		// earlier pass applied the spec and recorded recorded.
		server, recorded string
		spec             storagev1alpha1.ObjectOwnership
		applied          bool
		wantWrites       []string
		wantEvents       []string
		wantServer       string
		wantStatus       string
	}{
		{name: "a bucket without controls is ObjectWriter already", server: "",
			spec: storagev1alpha1.ObjectOwnershipObjectWriter, wantServer: "", wantStatus: ""},
		{name: "in sync costs no write", server: "BucketOwnerPreferred", recorded: "BucketOwnerPreferred", applied: true,
			spec: storagev1alpha1.ObjectOwnershipBucketOwnerPreferred, wantServer: "BucketOwnerPreferred", wantStatus: "BucketOwnerPreferred"},
		{name: "changed at the server: restored with a warning", server: "ObjectWriter", recorded: "BucketOwnerPreferred", applied: true,
			spec: storagev1alpha1.ObjectOwnershipBucketOwnerPreferred, wantWrites: []string{"PutOwnershipControls"},
			wantEvents: []string{"Warning OwnershipControlsDriftCorrected"}, wantServer: "BucketOwnerPreferred", wantStatus: "BucketOwnerPreferred"},
		{name: "dropped from the spec: left on the server, forgotten in status", server: "BucketOwnerPreferred", recorded: "BucketOwnerPreferred",
			applied: true, wantServer: "BucketOwnerPreferred", wantStatus: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, store := ownershipFixture(t, storagev1alpha1.CannedACLPublicRead, tt.spec)
			ctx := context.Background()
			if err := store.PutOwnershipControls(ctx, "b", tt.server); err != nil {
				t.Fatal(err)
			}
			in.Applied, in.Bucket.Status.OwnershipControls = tt.applied, tt.recorded
			in.Bucket.Status.ACL = ObservedACL(objectstore.DesiredACL("AK", string(storagev1alpha1.CannedACLPublicRead), nil))
			ev := &events{}
			made := len(store.Calls())
			if failed := Sync(ctx, in, ev.emit, All).Failed; len(failed) > 0 {
				t.Fatalf("Sync failed: %+v", failed)
			}
			if got := mutations(store.Calls()[made:]); !slices.Equal(got, tt.wantWrites) {
				t.Errorf("writes %v, want %v", got, tt.wantWrites)
			}
			if !slices.Equal(ev.got, tt.wantEvents) {
				t.Errorf("events %v, want %v", ev.got, tt.wantEvents)
			}
			if got := store.Bucket("b").Ownership; got != tt.wantServer {
				t.Errorf("ownership at the server = %q, want %q", got, tt.wantServer)
			}
			if got := in.Bucket.Status.OwnershipControls; got != tt.wantStatus {
				t.Errorf("status.ownershipControls = %q, want %q", got, tt.wantStatus)
			}
		})
	}
}

// Ceph RGW 16.2 answers PutBucketOwnershipControls with 400 InvalidArgument: the setting is
// reported unsupported with its own reason, and the rest of the spec is applied.
func TestOwnershipControlsAServerRefusesAreUnsupportedAndTheRestIsApplied(t *testing.T) {
	in, store := ownershipFixture(t, storagev1alpha1.CannedACLPrivate, storagev1alpha1.ObjectOwnershipBucketOwnerPreferred)
	in.Bucket.Spec.Versioning = storagev1alpha1.VersioningEnabled
	store.Fail("PutOwnershipControls", fakes3.Failure{Err: &smithy.GenericAPIError{Code: "InvalidArgument", Message: "UnknownError"}})
	failed := Sync(context.Background(), in, func(string, string, string) {}, All).Failed
	if len(failed) != 1 || !failed[0].Unsupported || failed[0].Info.Unsupported != storagev1alpha1.ReasonOwnershipControlsUnsupported {
		t.Fatalf("failures %+v, want ownership controls alone, unsupported, with their reason", failed)
	}
	if got := store.Bucket("b"); got.Versioning != "Enabled" || !got.ACL.Equal(objectstore.DesiredACL("AK", "private", nil)) {
		t.Errorf("the rest of the spec was not applied: versioning %q, ACL %+v", got.Versioning, got.ACL)
	}
	if in.Bucket.Status.OwnershipControls != "" {
		t.Errorf("status shows ownership the server never took: %q", in.Bucket.Status.OwnershipControls)
	}
}
