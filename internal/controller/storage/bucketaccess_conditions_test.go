package storage

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

func TestBucketAccessConditionsFollowWhatTheKeyWasFoundToDo(t *testing.T) {
	all := objectstore.AccessCheck{List: true, Read: true, Write: true}
	readOnly := objectstore.AccessCheck{List: true, Read: true}
	writeOnly := objectstore.AccessCheck{Write: true}
	nothing := objectstore.AccessCheck{}
	unsupported := contractclient.NewRefusal("creating a principal", contractclient.ErrNotSupported, "")

	tests := []struct {
		name            string
		access          storagev1alpha1.AccessMode
		pass            accessFound
		ready, verified *want // nil: left as it was
	}{
		{name: "a pass that learned nothing leaves both alone", access: storagev1alpha1.AccessReadOnly},
		{name: "a ReadOnly key that reads and cannot write is verified", access: storagev1alpha1.AccessReadOnly,
			pass:     accessFound{ready: accessIssued{}, checks: []keyCheck{{key: "AK1", check: readOnly}}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "Secret reader-credentials"},
			verified: &want{metav1.ConditionTrue, storagev1alpha1.ReasonVerified, "list allowed, read allowed, write refused, as ReadOnly access allows"}},
		{name: "a WriteOnly key that writes and cannot read or list is verified", access: storagev1alpha1.AccessWriteOnly,
			pass:     accessFound{ready: accessIssued{}, checks: []keyCheck{{key: "AK1", check: writeOnly}}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			verified: &want{metav1.ConditionTrue, storagev1alpha1.ReasonVerified, "list refused, read refused, write allowed"}},
		{name: "a key the policy does not carry yet is not Ready", access: storagev1alpha1.AccessReadWrite,
			pass:     accessFound{ready: accessIssued{}, checks: []keyCheck{{key: "AK1", check: nothing}}},
			ready:    &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending, "cannot list or read or write yet"},
			verified: &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending, "key AK1"}},
		{name: "a ReadOnly key that can also write is handed out but not verified, and says why", access: storagev1alpha1.AccessReadOnly,
			pass:     accessFound{ready: accessIssued{}, checks: []keyCheck{{key: "AK1", check: all}}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			verified: &want{metav1.ConditionFalse, storagev1alpha1.ReasonAccessMismatch, "ReadOnly access, but the key can also write"}},
		{name: "a WriteOnly key on a public bucket can also list and read, which is said", access: storagev1alpha1.AccessWriteOnly,
			pass:     accessFound{ready: accessIssued{}, checks: []keyCheck{{key: "AK1", check: all}}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			verified: &want{metav1.ConditionFalse, storagev1alpha1.ReasonAccessMismatch, "can also list and read"}},
		{name: "a missing Bucket is named", access: storagev1alpha1.AccessReadOnly, pass: accessFound{ready: accessBucketMissing{"photos"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonBucketNotFound, `Bucket "photos" does not exist`}},
		{name: "a spec that names no Bucket (past the CRD's rules) says so", access: storagev1alpha1.AccessReadOnly, pass: accessFound{ready: accessBucketMissing{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonBucketNotFound, "The spec names no Bucket"}},
		{name: "a backend without principals says so", access: storagev1alpha1.AccessReadOnly,
			pass:  accessFound{ready: accessAPIFailed{unsupported}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonPrincipalsUnsupported, "HTTP 501"}},
		{name: "a name that cannot label the Secret says nothing was issued", access: storagev1alpha1.AccessReadOnly,
			pass:  accessFound{ready: accessInvalidName{"must be no more than 63 characters"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonInvalidName, "nothing was issued"}},
		{name: "a foreign Secret is never overwritten", access: storagev1alpha1.AccessReadOnly,
			pass:  accessFound{ready: accessSecretTaken{secret: "reader-credentials"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonSecretConflict, "never overwritten"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "ns"},
				Spec: storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: tt.access}}
			for i := range tt.pass.checks {
				tt.pass.checks[i].access = tt.access
			}
			ready, verified := accessConditions(a, tt.pass)
			check(t, "Ready", ready, tt.ready)
			check(t, "AccessVerified", verified, tt.verified)
		})
	}
}

func check(t *testing.T, typ string, got *engine.Condition, want *want) {
	t.Helper()
	switch {
	case want == nil && got == nil:
	case want == nil || got == nil:
		t.Errorf("%s = %+v, want %+v", typ, got, want)
	case got.Status != want.status || got.Reason != want.reason || !strings.Contains(got.Message, want.message):
		t.Errorf("%s = %s %s %q, want %s %s containing %q", typ, got.Status, got.Reason, got.Message, want.status, want.reason, want.message)
	}
}

// Over several Buckets, the first bucket that is not as it should be decides each condition and
// is named; status.buckets says what each bucket was found to do, and a bucket taken out of the
// list stays there until the key is found refused in it.
func TestBucketAccessOverSeveralBuckets(t *testing.T) {
	readOnly := objectstore.AccessCheck{List: true, Read: true}
	writeOnly := objectstore.AccessCheck{Write: true}
	underPrefix := objectstore.AccessCheck{List: true, Read: true, Write: true, Outside: &objectstore.AccessCheck{}}
	a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"},
		Spec: storagev1alpha1.BucketAccessSpec{Buckets: []storagev1alpha1.AccessBucket{
			{Name: "photos", Access: storagev1alpha1.AccessReadOnly},
			{Name: "uploads", Access: storagev1alpha1.AccessReadWrite, Prefix: "web/"},
			{Name: "backups", Access: storagev1alpha1.AccessWriteOnly},
		}},
		Status: storagev1alpha1.BucketAccessStatus{Buckets: []storagev1alpha1.AccessBucketStatus{
			{Name: "photos", BucketName: "ns-photos"}, {Name: "old", BucketName: "ns-old"}, {Name: "never"}}},
	}
	checks := func(old objectstore.AccessCheck, backups objectstore.AccessCheck) []keyCheck {
		return []keyCheck{
			{key: "AK1", bucket: "photos", bucketName: "ns-photos", access: storagev1alpha1.AccessReadOnly, check: readOnly},
			{key: "AK1", bucket: "uploads", bucketName: "ns-uploads", access: storagev1alpha1.AccessReadWrite, prefix: "web/", check: underPrefix},
			{key: "AK1", bucket: "backups", bucketName: "ns-backups", access: storagev1alpha1.AccessWriteOnly, check: backups},
			{key: "AK1", bucket: "old", bucketName: "ns-old", revoked: true, check: old},
		}
	}

	pending := accessFound{ready: accessIssued{}, checks: checks(readOnly, objectstore.AccessCheck{})}
	ready, verified := accessConditions(a, pending)
	check(t, "Ready", ready, &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending, "Bucket backups: The key cannot write yet"})
	check(t, "AccessVerified", verified, &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending, "Bucket backups: "})

	stillIn := accessFound{ready: accessIssued{}, checks: checks(readOnly, writeOnly)}
	ready, verified = accessConditions(a, stillIn)
	check(t, "Ready", ready, &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "Secret app-credentials"})
	check(t, "AccessVerified", verified, &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending,
		"Bucket old: Taken out of spec.buckets, but the key can still list and read there"})
	if revoked := setBucketStatus(a, stillIn); len(revoked) != 0 {
		t.Errorf("revoked = %+v, want none while the key still reads", revoked)
	}
	got := map[string]storagev1alpha1.AccessBucketStatus{}
	var names []string
	for _, st := range a.Status.Buckets {
		got[st.Name] = st
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "photos,uploads,backups,old" {
		t.Errorf("status.buckets = %v, want photos,uploads,backups,old (a bucket never reached leaves)", names)
	}
	if st := got["uploads"]; st.Verified != metav1.ConditionTrue || st.Reason != storagev1alpha1.ReasonVerified || st.Prefix != "web/" ||
		!strings.Contains(st.Message, `under prefix "web/" list allowed, read allowed, write allowed; outside it list refused`) {
		t.Errorf("status.buckets[uploads] = %+v", st)
	}
	if st := got["old"]; !st.Revoked || st.Verified != metav1.ConditionFalse {
		t.Errorf("status.buckets[old] = %+v, want revoked and not yet refused", st)
	}

	done := accessFound{ready: accessIssued{}, checks: checks(objectstore.AccessCheck{}, writeOnly)}
	_, verified = accessConditions(a, done)
	check(t, "AccessVerified", verified, &want{metav1.ConditionTrue, storagev1alpha1.ReasonVerified,
		"in each bucket, as its access allows: photos (ReadOnly) list allowed, read allowed, write refused; uploads (ReadWrite) under prefix"})
	if revoked := setBucketStatus(a, done); len(revoked) != 1 || revoked[0].bucket != "old" {
		t.Errorf("revoked = %+v, want old", revoked)
	}
	if len(a.Status.Buckets) != 3 {
		t.Errorf("status.buckets = %+v, want the three of spec.buckets", a.Status.Buckets)
	}

	mismatch := accessFound{ready: accessContractMismatch{bucket: "backups", contract: "b", first: "photos", firstContract: "a"},
		buckets: map[string]accessFinding{"backups": accessContractMismatch{bucket: "backups", contract: "b", first: "photos", firstContract: "a"}}}
	ready, _ = accessConditions(a, mismatch)
	check(t, "Ready", ready, &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractMismatch, `Bucket "backups" belongs to Contract b`})
	setBucketStatus(a, mismatch)
	if st := a.Status.Buckets[2]; st.Reason != storagev1alpha1.ReasonContractMismatch || st.Verified != metav1.ConditionFalse {
		t.Errorf("status.buckets[backups] = %+v, want ContractMismatch", st)
	}
	if st := a.Status.Buckets[0]; st.Reason != storagev1alpha1.ReasonVerified {
		t.Errorf("status.buckets[photos] = %+v, want what the last check said", st)
	}
}

// A public bucket taken out of spec.buckets still lets the key list and read, as it lets every
// key: that is no grant of the key's, so the bucket leaves status.buckets once the key can do
// no more there than that. A write it could still make is its own, and keeps it there.
func TestAPublicBucketTakenOutIsRevokedOnceTheKeyCanDoNoMoreThanAnyKey(t *testing.T) {
	public := objectstore.AccessCheck{List: true, Read: true}
	a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"},
		Spec: storagev1alpha1.BucketAccessSpec{Buckets: []storagev1alpha1.AccessBucket{{Name: "photos", Access: storagev1alpha1.AccessReadOnly}}},
		Status: storagev1alpha1.BucketAccessStatus{Buckets: []storagev1alpha1.AccessBucketStatus{
			{Name: "photos", BucketName: "ns-photos"}, {Name: "site", BucketName: "ns-site"}}},
	}
	found := func(site objectstore.AccessCheck) accessFound {
		return accessFound{ready: accessIssued{}, checks: []keyCheck{
			{key: "AK1", bucket: "photos", bucketName: "ns-photos", access: storagev1alpha1.AccessReadOnly, check: public},
			{key: "AK1", bucket: "site", bucketName: "ns-site", revoked: true, check: site, everyone: public},
		}}
	}

	stillWrites := found(objectstore.AccessCheck{List: true, Read: true, Write: true})
	_, verified := accessConditions(a, stillWrites)
	check(t, "AccessVerified", verified, &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending,
		"Bucket site: Taken out of spec.buckets, but the key can still write there"})
	if revoked := setBucketStatus(a, stillWrites); len(revoked) != 0 {
		t.Errorf("revoked = %+v, want none while the key still writes", revoked)
	}

	asAnyKey := found(public)
	_, verified = accessConditions(a, asAnyKey)
	check(t, "AccessVerified", verified, &want{metav1.ConditionTrue, storagev1alpha1.ReasonVerified, "in each bucket"})
	if revoked := setBucketStatus(a, asAnyKey); len(revoked) != 1 || revoked[0].bucket != "site" {
		t.Errorf("revoked = %+v, want site", revoked)
	}
	if v := verifiedIn(asAnyKey.checks[1]); !strings.Contains(v.Message, "only as every key can, by the bucket's canned ACL") {
		t.Errorf("site: %s, want it to say the ACL is why the key still lists and reads", v.Message)
	}
}
