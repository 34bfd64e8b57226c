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
			pass:     accessFound{ready: accessIssued{}, check: &keyCheck{key: "AK1", check: readOnly}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "Secret reader-credentials"},
			verified: &want{metav1.ConditionTrue, storagev1alpha1.ReasonVerified, "list allowed, read allowed, write refused, as ReadOnly access allows"}},
		{name: "a WriteOnly key that writes and cannot read or list is verified", access: storagev1alpha1.AccessWriteOnly,
			pass:     accessFound{ready: accessIssued{}, check: &keyCheck{key: "AK1", check: writeOnly}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			verified: &want{metav1.ConditionTrue, storagev1alpha1.ReasonVerified, "list refused, read refused, write allowed"}},
		{name: "a key the policy does not carry yet is not Ready", access: storagev1alpha1.AccessReadWrite,
			pass:     accessFound{ready: accessIssued{}, check: &keyCheck{key: "AK1", check: nothing}},
			ready:    &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending, "cannot list or read or write yet"},
			verified: &want{metav1.ConditionFalse, storagev1alpha1.ReasonPolicyPending, "key AK1"}},
		{name: "a ReadOnly key that can also write is handed out but not verified, and says why", access: storagev1alpha1.AccessReadOnly,
			pass:     accessFound{ready: accessIssued{}, check: &keyCheck{key: "AK1", check: all}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			verified: &want{metav1.ConditionFalse, storagev1alpha1.ReasonAccessMismatch, "ReadOnly access, but the key can also write"}},
		{name: "a WriteOnly key on a public bucket can also list and read, which is said", access: storagev1alpha1.AccessWriteOnly,
			pass:     accessFound{ready: accessIssued{}, check: &keyCheck{key: "AK1", check: all}},
			ready:    &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			verified: &want{metav1.ConditionFalse, storagev1alpha1.ReasonAccessMismatch, "can also list and read"}},
		{name: "a missing Bucket is named", access: storagev1alpha1.AccessReadOnly, pass: accessFound{ready: accessBucketMissing{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonBucketNotFound, `Bucket "photos" does not exist`}},
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
