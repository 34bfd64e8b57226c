package storage

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// accessFound is what a BucketAccess pass found, which decides its conditions.
type accessFound int

const (
	accessUndecided accessFound = iota
	accessInvalidName
	accessBucketMissing
	accessBucketNotReady
	accessContractNotReady
	accessSecretConflict
	accessAPIFailed
	accessPrincipalLost
	accessS3Failed
	accessIssued
	accessDeleting
	// accessWaitingForUser: being deleted, it waits for the resource it serves (p.why) to go.
	accessWaitingForUser
)

// accessPass records what one pass of the BucketAccess controller found.
type accessPass struct {
	found accessFound
	// why explains accessBucketNotReady, accessContractNotReady, accessInvalidName.
	why string
	// secret is the Secret of an accessSecretConflict.
	secret string
	apiErr *contractclient.Error
	s3Err  error
	// check is what the key in the Secret was found able to do, when it was checked.
	check *objectstore.AccessCheck
	// checkedKey is the key that check is about.
	checkedKey string
}

// accessConditions derives Ready and AccessVerified from a pass; nil leaves one as it is.
func accessConditions(a *storagev1alpha1.BucketAccess, p *accessPass) (ready, verified *condition) {
	switch p.found {
	case accessUndecided:
		return nil, nil
	case accessInvalidName:
		return falseCondition(storagev1alpha1.ReasonInvalidName, fmt.Sprintf(
			"The name cannot label the credentials Secret (%s); nothing was issued. Use a name of at most 63 characters.", p.why)), nil
	case accessBucketMissing:
		return falseCondition(storagev1alpha1.ReasonBucketNotFound, fmt.Sprintf(
			"Bucket %q does not exist in namespace %s.", a.Spec.Bucket, a.Namespace)), nil
	case accessBucketNotReady:
		return falseCondition(storagev1alpha1.ReasonBucketNotReady, fmt.Sprintf(
			"Waiting for Bucket %q: %s.", a.Spec.Bucket, p.why)), nil
	case accessContractNotReady:
		return falseCondition(storagev1alpha1.ReasonContractNotReady, fmt.Sprintf(
			"Waiting for the Contract of Bucket %q: %s.", a.Spec.Bucket, p.why)), nil
	case accessSecretConflict:
		return falseCondition(storagev1alpha1.ReasonSecretConflict, fmt.Sprintf(
			"Secret %q exists and does not belong to this BucketAccess; it is never overwritten. Delete it or set spec.secretName.", p.secret)), nil
	case accessAPIFailed:
		reason := storagev1alpha1.ReasonContractAPIRejected
		if p.apiErr.Retryable() {
			reason = storagev1alpha1.ReasonContractAPIUnavailable
		}
		if errors.Is(p.apiErr, contractclient.ErrNotSupported) {
			reason = storagev1alpha1.ReasonPrincipalsUnsupported
		}
		return falseCondition(reason, "The contract API: "+p.apiErr.Summary()), nil
	case accessPrincipalLost:
		return falseCondition("PrincipalLost",
			"The provider no longer has this BucketAccess's principal (deleted outside the operator). Delete and re-create the BucketAccess to get new credentials."), nil
	case accessS3Failed:
		return falseCondition(storagev1alpha1.ReasonS3Unavailable, "Checking the key: "+objectstore.Describe(p.s3Err)), nil
	case accessDeleting:
		return falseCondition(storagev1alpha1.ReasonDeleting, "Revoking the credentials."), nil
	case accessWaitingForUser:
		return falseCondition(storagev1alpha1.ReasonDeleting, fmt.Sprintf(
			"Deletion waits until %s, which these credentials were made for, is gone: it must not lose its key first.", p.why)), nil
	}
	// Issued: the Secret holds a key. Ready says whether that key can do what its access
	// allows; AccessVerified also says whether it can do more.
	if p.check == nil {
		return nil, nil
	}
	missing, extra := accessGaps(a.Spec.Access, *p.check)
	did := fmt.Sprintf("key %s, %s", p.checkedKey, describeCheck(*p.check))
	switch {
	case len(missing) > 0:
		msg := fmt.Sprintf("The key cannot %s yet (%s): the Bucket's policy does not carry this access yet.", strings.Join(missing, " or "), did)
		return falseCondition(storagev1alpha1.ReasonPolicyPending, msg), falseCondition(storagev1alpha1.ReasonPolicyPending, msg)
	case len(extra) > 0:
		msg := fmt.Sprintf("%s access, but the key can also %s (%s): the bucket's ACL or the user's policy allows it to more than this key.",
			a.Spec.Access, strings.Join(extra, " and "), did)
		return &condition{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, fmt.Sprintf("The credentials are in Secret %s.", a.SecretNameOrDefault())},
			falseCondition(storagev1alpha1.ReasonAccessMismatch, msg)
	}
	return &condition{metav1.ConditionTrue, storagev1alpha1.ReasonAvailable, fmt.Sprintf("The credentials are in Secret %s.", a.SecretNameOrDefault())},
		&condition{metav1.ConditionTrue, storagev1alpha1.ReasonVerified, fmt.Sprintf("Checked with the key itself: %s, as %s access allows.", describeCheck(*p.check), a.Spec.Access)}
}

// accessGaps lists what a key cannot do that its access allows (missing), and what it can do
// that its access does not allow (extra).
func accessGaps(access storagev1alpha1.AccessMode, c objectstore.AccessCheck) (missing, extra []string) {
	want := map[storagev1alpha1.AccessMode]objectstore.AccessCheck{
		storagev1alpha1.AccessReadOnly:  {List: true, Read: true},
		storagev1alpha1.AccessReadWrite: {List: true, Read: true, Write: true},
		storagev1alpha1.AccessWriteOnly: {Write: true},
	}[access]
	for _, d := range []struct {
		what      string
		want, got bool
	}{{"list", want.List, c.List}, {"read", want.Read, c.Read}, {"write", want.Write, c.Write}} {
		switch {
		case d.want && !d.got:
			missing = append(missing, d.what)
		case !d.want && d.got:
			extra = append(extra, d.what)
		}
	}
	return missing, extra
}

func describeCheck(c objectstore.AccessCheck) string {
	word := func(ok bool, what string) string {
		if ok {
			return what + " allowed"
		}
		return what + " refused"
	}
	return strings.Join([]string{word(c.List, "list"), word(c.Read, "read"), word(c.Write, "write")}, ", ")
}
