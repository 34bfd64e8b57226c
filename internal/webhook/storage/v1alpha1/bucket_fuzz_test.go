package v1alpha1

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// FuzzValidateBucket feeds the Bucket validator arbitrary names, grants and policies, on create
// and on update. It must never panic, must answer nil or an Invalid status, and every error in
// that status must name its field, or the user could not tell what to fix. The seeds run with
// every `go test`; `go test -fuzz=FuzzValidateBucket ./internal/webhook/storage/v1alpha1/`
// explores further.
func FuzzValidateBucket(f *testing.F) {
	f.Add("team-a-data", "team-a", `{"Statement":{"Resource":"arn:aws:s3:::team-a-data/*"}}`, "id", "owner", "team-a-data")
	f.Add("Bad_Name", "missing", `{"Statement":[{"Resource":["arn:aws:s3:::other",1]},"x"]}`, "emailAddress", "no-at", "bad..name")
	f.Add("192.168.0.1", "", `[]`, "url", "http://acs.amazonaws.com/groups/global/AllUsers", "")
	f.Add("xn--a-s3alias", "team-a", `null`, "group", " ", "xn--a-s3alias")
	f.Add("", "team-a", `{"Statement":[]}`, "", "", "team-a-data")
	f.Add("a.b-c", "team-a", `{"Statement":"s","NotResource":{}}`, "url", "http://example.com", "a.b-c")
	f.Add("ü..-", "team-a", `{"Statement":[{"NotResource":[]},{"Resource":{"a":1}},{}]}`, "emailAddress", "A <a@example.com>", "")
	f.Add("abc", "team-a", `{`, "id", "\x00", "abc")
	f.Add("abc", "team-a", `"just a string"`, "id", "x", "abd")

	reader := readerWith()
	f.Fuzz(func(t *testing.T, bucketName, contractName, policyJSON, granteeType, granteeValue, oldBucketName string) {
		b := validBucket()
		b.Spec.BucketName = bucketName
		b.Spec.ContractName = contractName
		b.Spec.Policy = policy(policyJSON)
		g := storagev1alpha1.Grantee{Type: storagev1alpha1.GranteeType(granteeType), Value: granteeValue}
		b.Spec.GrantRead = []storagev1alpha1.Grantee{g, g}
		b.Spec.FullControl = []storagev1alpha1.Grantee{g}

		old := validBucket()
		old.Spec.BucketName = oldBucketName

		v := bucketValidator(reader)
		_, createErr := v.ValidateCreate(context.Background(), b)
		_, updateErr := v.ValidateUpdate(context.Background(), old, b)
		for _, err := range []error{createErr, updateErr} {
			if err == nil {
				continue
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
				t.Fatalf("error is not an Invalid status: %v", err)
			}
			details := status.Status().Details
			if details == nil || len(details.Causes) == 0 {
				t.Fatalf("Invalid status without causes: %v", err)
			}
			for _, c := range details.Causes {
				if c.Field == "" {
					t.Errorf("error without a field path: %q", c.Message)
				}
			}
		}
	})
}
