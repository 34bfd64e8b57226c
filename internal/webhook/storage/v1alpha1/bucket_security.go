package v1alpha1

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// validatePublicAccess refuses a public ACL or policy under a public access block that refuses
// it: the server would refuse the write, and the Bucket would never be Ready. Each error is at
// the public field and names the flag of the block. With old set, only a change to one of the
// three is checked.
func validatePublicAccess(spec, old *storagev1alpha1.BucketSpec) field.ErrorList {
	block := spec.PublicAccessBlock
	if block == nil || old != nil && apiequality.Semantic.DeepEqual(block, old.PublicAccessBlock) &&
		spec.CannedACL == old.CannedACL && apiequality.Semantic.DeepEqual(spec.Policy, old.Policy) &&
		apiequality.Semantic.DeepEqual(publicGrants(spec), publicGrants(old)) {
		return nil
	}
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	blockPath := specPath.Child("publicAccessBlock")
	if block.BlockPublicAcls {
		if objectstore.IsPublicCanned(string(spec.CannedACL)) {
			errs = append(errs, field.Invalid(specPath.Child("cannedAcl"), spec.CannedACL, fmt.Sprintf(
				"is a public ACL, and %s refuses public ACLs: use private, or turn the flag off", blockPath.Child("blockPublicAcls"))))
		}
		for _, p := range publicGrants(spec) {
			errs = append(errs, field.Invalid(p, "", fmt.Sprintf(
				"grants to everyone, a public ACL, and %s refuses public ACLs: remove the grant, or turn the flag off", blockPath.Child("blockPublicAcls"))))
		}
	}
	if block.BlockPublicPolicy && spec.Policy != nil && bucketpolicy.IsPublic(string(spec.Policy.Raw)) {
		errs = append(errs, field.Invalid(specPath.Child("policy"), "", fmt.Sprintf(
			"is public (it allows a wildcard principal without a condition on source IP, VPC, account or principal), "+
				"and %s refuses public policies: narrow the policy, or turn the flag off", blockPath.Child("blockPublicPolicy"))))
	}
	return errs
}

// validateOwnership refuses ACLs under spec.ownershipControls BucketOwnerEnforced, which turns
// them off: S3 refuses every ACL but private there (AccessControlListNotSupported), and the
// Bucket would never be Ready. A canned ACL other than private is refused at spec.cannedAcl,
// each grant list at its own path. With old set, only a change to one of them is checked.
func validateOwnership(spec, old *storagev1alpha1.BucketSpec) field.ErrorList {
	if spec.OwnershipControls != storagev1alpha1.ObjectOwnershipBucketOwnerEnforced {
		return nil
	}
	lists := grantListsOf(spec, old)
	if old != nil {
		unchanged := spec.OwnershipControls == old.OwnershipControls && spec.CannedACL == old.CannedACL
		for _, l := range lists {
			unchanged = unchanged && apiequality.Semantic.DeepEqual(l.value, l.old)
		}
		if unchanged {
			return nil
		}
	}
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	why := fmt.Sprintf("%s BucketOwnerEnforced turns ACLs off, and S3 refuses every ACL but private (AccessControlListNotSupported)",
		specPath.Child("ownershipControls"))
	if spec.CannedACL != "" && spec.CannedACL != storagev1alpha1.CannedACLPrivate {
		errs = append(errs, field.Invalid(specPath.Child("cannedAcl"), spec.CannedACL, fmt.Sprintf(
			"%s: use private and grant access with the policy, or choose ObjectWriter or BucketOwnerPreferred", why)))
	}
	for _, l := range lists {
		if len(l.value) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child(l.name), fmt.Sprintf(
				"%s: grant access with the policy instead, or choose ObjectWriter or BucketOwnerPreferred", why)))
		}
	}
	return errs
}

// publicGrants are the paths of the spec's grants to everyone (AllUsers, AuthenticatedUsers).
func publicGrants(spec *storagev1alpha1.BucketSpec) []*field.Path {
	var paths []*field.Path
	for name, list := range map[string][]storagev1alpha1.Grantee{
		"grantRead": spec.GrantRead, "grantWrite": spec.GrantWrite, "grantReadAcp": spec.GrantReadACP,
		"grantWriteAcp": spec.GrantWriteACP, "fullControl": spec.FullControl,
	} {
		for i, g := range list {
			acl := objectstore.ACL{Grants: []objectstore.Grant{{Grantee: objectstore.Grantee{Type: objectstore.GranteeType(g.Type), Value: g.Value}}}}
			if objectstore.IsPublicACL(acl) {
				paths = append(paths, field.NewPath("spec", name).Index(i))
			}
		}
	}
	return paths
}

// securityWarnings says what the servers the operator is tested on do with a public access
// block, where they differ from AWS.
func securityWarnings(spec, old *storagev1alpha1.BucketSpec) admission.Warnings {
	block := spec.PublicAccessBlock
	if block == nil || old != nil && apiequality.Semantic.DeepEqual(block, old.PublicAccessBlock) {
		return nil
	}
	var warnings admission.Warnings
	if block.BlockPublicAcls {
		warnings = append(warnings, "spec.publicAccessBlock.blockPublicAcls: on Ceph RGW 16.2 (Pacific) it also refuses every upload to "+
			"the bucket, private ones too (Ceph bug 49135, fixed in later releases); on such a server use ignorePublicAcls, which makes "+
			"public ACLs ineffective without refusing uploads")
	}
	if block.RestrictPublicBuckets {
		warnings = append(warnings, "spec.publicAccessBlock.restrictPublicBuckets: Ceph RGW 16.2 accepts it but does not enforce it; "+
			"use blockPublicPolicy to keep public policies off the bucket")
	}
	return warnings
}

// checkLoggingTarget returns a field error when spec.logging names a bucket that no Bucket of
// the same Contract in the namespace manages: logs would go to someone else's bucket, or
// nowhere. The cache answers when it has the target; otherwise the API server does, as a target
// Bucket applied in the same file may not have reached the cache yet.
func (v *BucketValidator) checkLoggingTarget(ctx context.Context, b, old *storagev1alpha1.Bucket) (*field.Error, error) {
	l := b.Spec.Logging
	if l == nil || l.TargetBucket == b.Spec.BucketName || old != nil && apiequality.Semantic.DeepEqual(l, old.Spec.Logging) {
		return nil, nil
	}
	found := func(list []storagev1alpha1.Bucket) bool {
		return slices.ContainsFunc(list, func(o storagev1alpha1.Bucket) bool {
			return o.Spec.ContractName == b.Spec.ContractName && o.DeletionTimestamp == nil
		})
	}
	if list, err := index.BucketsNamingBucket(ctx, v.Cache, b.Namespace, l.TargetBucket); err == nil && found(list) {
		return nil, nil
	}
	list, err := index.BucketsNamingBucketUncached(ctx, v.API, b.Namespace, l.TargetBucket)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Listing the Buckets of the namespace")
		return nil, apierrors.NewInternalError(err)
	}
	if found(list) {
		return nil, nil
	}
	return field.Invalid(field.NewPath("spec", "logging", "targetBucket"), l.TargetBucket, fmt.Sprintf(
		"no Bucket of Contract %s in this namespace has this bucketName: the logs must go to a bucket of the same account that the operator manages",
		b.Spec.ContractName)), nil
}
