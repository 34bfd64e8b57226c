package storage

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore/fake"
)

// A key over several buckets is checked in each. A pass cut short by one failed request keeps
// the checks it made, and the next asks only for the rest; once all are found, none is asked
// again within the resync period, and one older than that is asked again.
func TestAKeyOverSeveralBucketsIsCheckedWhereThePassBeforeStopped(t *testing.T) {
	store := &fake.Store{Buckets: map[string]*fake.Bucket{"ns-photos": {}, "ns-uploads": {}, "ns-backups": {}}}
	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	r := &BucketAccessReconciler{ResyncPeriod: time.Minute, Now: clock, Stores: func(objectstore.Account) objectstore.Store { return store }}
	r.checked.Now, r.progress.Now = clock, clock
	k := accessKind{r}
	a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{UID: types.UID("uid-shared")}}
	tgt := &target{contract: activeContract("acc")}
	for _, name := range []string{"photos", "uploads", "backups"} {
		b := newTestBucket(name, "ns-"+name, storagev1alpha1.ReclaimPolicyRetain)
		b.Status.BucketName = "ns-" + name
		a.Spec.Buckets = append(a.Spec.Buckets, storagev1alpha1.AccessBucket{Name: storagev1alpha1.BucketName(name), Access: storagev1alpha1.AccessReadOnly})
		tgt.buckets = append(tgt.buckets, targetBucket{AccessBucket: a.Spec.Buckets[len(a.Spec.Buckets)-1], bucket: b})
	}
	key := contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "secret"}
	checks := func() int {
		return len(slices.DeleteFunc(store.Calls(), func(op string) bool { return op != "CheckAccess" }))
	}

	// The first check goes through, the second fails.
	store.Fail("CheckAccess", fake.Failure{AfterActing: true}, fake.Failure{Err: errors.New("connection reset")})
	if _, err := k.check(context.Background(), a, tgt, key); err == nil {
		t.Fatal("a failed check went unnoticed")
	}
	if got := checks(); got != 2 {
		t.Fatalf("the first pass made %d checks, want 2 (one found, one failed)", got)
	}
	found, err := k.check(context.Background(), a, tgt, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := checks(); got != 4 {
		t.Errorf("the second pass made %d checks, want the 2 not found yet", got-2)
	}
	if len(found) != 3 {
		t.Fatalf("found %d checks, want one per bucket", len(found))
	}

	now = now.Add(30 * time.Second)
	if _, err := k.check(context.Background(), a, tgt, key); err != nil || checks() != 4 {
		t.Errorf("within the resync period a pass asked again (%d checks, %v)", checks()-4, err)
	}

	// A check kept from a failed pass counts only within the resync period of when it was made.
	store.Fail("CheckAccess", fake.Failure{AfterActing: true}, fake.Failure{Err: errors.New("connection reset")})
	now = now.Add(time.Minute)
	if _, err := k.check(context.Background(), a, tgt, key); err == nil {
		t.Fatal("a failed check went unnoticed")
	}
	now = now.Add(time.Minute)
	if _, err := k.check(context.Background(), a, tgt, key); err != nil || checks() != 9 {
		t.Errorf("a pass after the resync period made %d checks, want all 3 again (%v)", checks()-6, err)
	}
}
