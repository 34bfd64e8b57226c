package v1alpha1

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

const (
	rgwBlockPublicAclsWarning = "spec.publicAccessBlock.blockPublicAcls: on Ceph RGW 16.2 (Pacific) it also refuses every upload to the bucket, " +
		"private ones too (Ceph bug 49135, fixed in later releases); on such a server use ignorePublicAcls, which makes public ACLs " +
		"ineffective without refusing uploads"
	rgwRestrictWarning = "spec.publicAccessBlock.restrictPublicBuckets: Ceph RGW 16.2 accepts it but does not enforce it; " +
		"use blockPublicPolicy to keep public policies off the bucket"
)

func TestAPublicACLOrPolicyUnderABlockThatRefusesItIsRefusedWithBothFields(t *testing.T) {
	logs := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "team-a-logs", ContractName: "team-a"}}
	elsewhere := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other"},
		Spec: storagev1alpha1.BucketSpec{BucketName: "team-a-other", ContractName: "team-a-2"}}
	reader := readerWith(logs, elsewhere)
	tests := []struct {
		name     string
		modify   func(*storagev1alpha1.Bucket)
		want     []string
		warnings []string
	}{
		{name: "a block that allows what the spec asks", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
			b.Spec.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicPolicy: true}
			b.Spec.Encryption = &storagev1alpha1.BucketEncryption{Algorithm: storagev1alpha1.EncryptionSSES3}
			b.Spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "team-a-logs", TargetPrefix: "data/"}
		}},
		{name: "a public canned ACL under blockPublicAcls", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicReadWrite
			b.Spec.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicAcls: true}
		}, want: []string{
			`spec.cannedAcl: Invalid value: "public-read-write": is a public ACL, and spec.publicAccessBlock.blockPublicAcls refuses public ACLs: use private, or turn the flag off`,
		}, warnings: []string{rgwBlockPublicAclsWarning}},
		{name: "a grant to every AWS account under blockPublicAcls", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantRead = []storagev1alpha1.Grantee{grantee(id, "owner"), grantee(url, "http://acs.amazonaws.com/groups/global/AuthenticatedUsers")}
			b.Spec.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicAcls: true, RestrictPublicBuckets: true}
		}, want: []string{
			`spec.grantRead[1]: Invalid value: "": grants to everyone, a public ACL, and spec.publicAccessBlock.blockPublicAcls refuses public ACLs: remove the grant, or turn the flag off`,
		}, warnings: []string{rgwBlockPublicAclsWarning, rgwRestrictWarning}},
		{name: "a public policy under blockPublicPolicy", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/*"}]}`)
			b.Spec.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicPolicy: true}
		}, want: []string{
			`spec.policy: Invalid value: "": is public (it allows a wildcard principal without a condition on source IP, VPC, account or principal), ` +
				`and spec.publicAccessBlock.blockPublicPolicy refuses public policies: narrow the policy, or turn the flag off`,
		}},
		{name: "logs to a bucket of another Contract", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "team-a-other"}
		}, want: []string{
			`spec.logging.targetBucket: Invalid value: "team-a-other": no Bucket of Contract team-a in this namespace has this bucketName: ` +
				`the logs must go to a bucket of the same account that the operator manages`,
		}},
		{name: "logs to itself", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Logging = &storagev1alpha1.BucketLogging{TargetBucket: "team-a-data"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBucket()
			tt.modify(b)
			warnings, err := bucketValidator(reader).ValidateCreate(context.Background(), b)
			if diff := cmp.Diff(tt.warnings, []string(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurningOnABlockOverAPublicACLIsRefusedOnUpdate(t *testing.T) {
	old := validBucket()
	old.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
	b := old.DeepCopy()
	b.Spec.PublicAccessBlock = &storagev1alpha1.PublicAccessBlock{BlockPublicAcls: true}
	_, err := bucketValidator(readerWith()).ValidateUpdate(context.Background(), old, b)
	want := []string{`spec.cannedAcl: Invalid value: "public-read": is a public ACL, and spec.publicAccessBlock.blockPublicAcls refuses public ACLs: use private, or turn the flag off`}
	if diff := cmp.Diff(want, webhooktest.Causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}
