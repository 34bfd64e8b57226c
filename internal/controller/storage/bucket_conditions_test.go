package storage

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// want is a condition a test expects: its status, reason and a part of its message.
type want struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func TestBucketConditionsFollowWhatThePassFound(t *testing.T) {
	denied := refused("AccessDenied")
	slowDown := errors.New("dial tcp 127.0.0.1:1: connection refused") // no HTTP answer: transient

	tests := []struct {
		name     string
		deleting bool
		pass     bucketFound
		ready    *want // nil: Ready is left as it was
		inUse    *want
		blocked  *want
	}{
		{name: "a pass that learned nothing leaves Ready alone", pass: bucketFound{}},
		{name: "Ready once the bucket has its spec", pass: bucketFound{ready: bucketAvailable{}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, "Bucket photos exists with the ACL and policy"}},
		{name: "a missing Contract is named with its namespace", pass: bucketFound{ready: contractMissing{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractNotFound, "Contract acme does not exist in namespace team"}},
		{name: "a Contract not Ready says why", pass: bucketFound{ready: contractNotReady{"ContractAPIUnavailable: down"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractNotReady, "Contract acme is not Ready (ContractAPIUnavailable: down)"}},
		{name: "a Contract without keys names its Secret", pass: bucketFound{ready: noCredentials{"acme-credentials"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractNotReady, "no credentials in Secret acme-credentials"}},
		{name: "no bucket for a Contract being deleted", pass: bucketFound{ready: contractDeleting{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonContractDeleting, "Contract acme is being deleted"}},
		{name: "the other Bucket holding the name is named", pass: bucketFound{ready: nameHeld{"first"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonBucketNameConflict, "Bucket first in this namespace already manages bucket photos"}},
		{name: "a bucket tagged for another resource is left alone", pass: bucketFound{ready: taggedForAnother{"other/x"}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonBucketAlreadyExists, `tag is "other/x", not "team/photos"`}},
		{name: "a name another account owns", pass: bucketFound{ready: nameOwnedElsewhere{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonBucketNameTaken, "Another account owns a bucket named photos"}},
		{name: "a policy locking the owner out is never called someone else's name", pass: bucketFound{ready: policyDenies{denied}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonAccessDeniedByPolicy, "denies that account a request on it (AccessDenied)"}},
		{name: "an S3 failure with no answer is retried", pass: bucketFound{ready: s3Failed{slowDown}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonS3Unavailable, "; retrying"}},
		{name: "an S3 refusal waits for the spec", pass: bucketFound{ready: s3Failed{refused("InvalidArgument")}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonS3Rejected, "refused a request the spec needs: InvalidArgument"}},
		{name: "a feature the server lacks is named, with its field and the server's answer",
			pass: bucketFound{ready: settingsUnsupported{[]bucketsettings.Failure{
				{Info: bucketsettings.Lifecycle{}.Info(), Err: refused("NotImplemented")}}, true}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonLifecycleUnsupported,
				"does not implement lifecycle rules (spec.lifecycle: NotImplemented); the rest of the spec is applied: remove those fields"}},
		{name: "several features the server lacks are all named; the reason is the first's",
			pass: bucketFound{ready: settingsUnsupported{[]bucketsettings.Failure{
				{Info: bucketsettings.Versioning{}.Info(), Err: refused("VersioningNotConfigured")},
				{Info: bucketsettings.Lifecycle{}.Info(), Err: refused("NotImplemented")}}, true}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonVersioningUnsupported,
				"bucket versioning (spec.versioning: VersioningNotConfigured), nor lifecycle rules (spec.lifecycle: NotImplemented)"}},
		{name: "a bucket without the object lock its spec asks for says how to get one",
			pass: bucketFound{ready: objectLockNotEnabled{}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonObjectLockNotEnabled,
				"Bucket photos has no object lock: S3 turns it on only when a bucket is created"}},
		{name: "InUse lists the users by kind", pass: bucketFound{ready: bucketAvailable{}, users: &bucketUsers{names: []string{"2 Applications: a, b"}}},
			ready: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, ""},
			inUse: &want{metav1.ConditionTrue, storagev1alpha1.ReasonInUse, "Used by 2 Applications: a, b"}},
		{name: "InUse is False when users were listed and none found", pass: bucketFound{users: &bucketUsers{}},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNotInUse, "Nothing uses this Bucket"}},

		{name: "deletion waits for users without being blocked", deleting: true,
			pass:  bucketFound{users: &bucketUsers{names: []string{"1 Application: web"}}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting, "Deletion waits until nothing uses this Bucket"},
			inUse: &want{metav1.ConditionTrue, storagev1alpha1.ReasonInUse, "web"}},
		{name: "a non-empty bucket blocks its deletion and says the way out", deleting: true,
			pass:    bucketFound{ready: notEmpty{"3 objects"}},
			ready:   &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting, "Deletion is blocked (see DeletionBlocked)"},
			blocked: &want{metav1.ConditionTrue, storagev1alpha1.ReasonBucketNotEmpty, "still holds 3 objects and is not emptied without spec.deletion.emptyOnDelete: delete its objects"}},
		{name: "a deletion the policy denies is blocked with the way out", deleting: true,
			pass:    bucketFound{ready: deletionDenied{denied}},
			ready:   &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting, "blocked"},
			blocked: &want{metav1.ConditionTrue, storagev1alpha1.ReasonAccessDeniedByPolicy, "cannot be deleted: the server denies its own account (AccessDenied)"}},
		{name: "a Contract not Ready blocks a deletion with the Contract's reason", deleting: true,
			pass:    bucketFound{ready: contractNotReady{"ContractCancelled: gone"}, holdsUp: "Bucket photos cannot be deleted yet"},
			ready:   &want{metav1.ConditionFalse, storagev1alpha1.ReasonDeleting, "blocked"},
			blocked: &want{metav1.ConditionTrue, storagev1alpha1.ReasonContractNotReady, "Bucket photos cannot be deleted yet: Contract acme is not Ready (ContractCancelled: gone)"}},
		{name: "a transient failure during deletion is retried, not blocked", deleting: true,
			pass:  bucketFound{ready: s3Failed{slowDown}},
			ready: &want{metav1.ConditionFalse, storagev1alpha1.ReasonS3Unavailable, "retrying"}},
		{name: "a deletion going ahead leaves Ready alone", deleting: true, pass: bucketFound{users: &bucketUsers{}},
			inUse: &want{metav1.ConditionFalse, storagev1alpha1.ReasonNotInUse, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &storagev1alpha1.Bucket{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "photos"},
				Spec:       storagev1alpha1.BucketSpec{BucketName: "photos", ContractName: "acme"},
				Status:     storagev1alpha1.BucketStatus{BucketName: "photos", Endpoint: "https://s3.example"},
			}
			if tt.deleting {
				now := metav1.Now()
				b.DeletionTimestamp = &now
			}
			ready, inUse, blocked := bucketConditions(b, tt.pass)
			checkCondition(t, "Ready", ready, tt.ready)
			checkCondition(t, "InUse", inUse, tt.inUse)
			checkCondition(t, "DeletionBlocked", blocked, tt.blocked)
		})
	}
}

// checkCondition compares a derived condition with the status, reason and part of the message
// wanted; want nil means the condition must be left alone.
func checkCondition(t *testing.T, typ string, got *engine.Condition, want *want) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %+v, want it left alone", typ, *got)
	case want != nil && got == nil:
		t.Errorf("%s left alone, want %s %s", typ, want.status, want.reason)
	case want != nil && (got.Status != want.status || got.Reason != want.reason || !strings.Contains(got.Message, want.message)):
		t.Errorf("%s = %s %s %q, want %s %s with %q", typ, got.Status, got.Reason, got.Message, want.status, want.reason, want.message)
	}
}
