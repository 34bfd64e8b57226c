package v1alpha1

// ObjectOwnership says who owns the objects uploaded to a bucket, and so whether ACLs apply
// (S3 object ownership, the bucket's ownership controls).
// +kubebuilder:validation:Enum=BucketOwnerEnforced;BucketOwnerPreferred;ObjectWriter
type ObjectOwnership string

const (
	// ObjectOwnershipBucketOwnerEnforced: ACLs are off; the bucket's account owns every object,
	// whoever uploads it, and access is decided by policies alone. AWS's default for new
	// buckets since April 2023. S3 refuses every ACL but private on such a bucket.
	ObjectOwnershipBucketOwnerEnforced ObjectOwnership = "BucketOwnerEnforced"
	// ObjectOwnershipBucketOwnerPreferred: ACLs apply; the bucket's account owns an object
	// uploaded with the bucket-owner-full-control canned ACL, the uploader any other.
	ObjectOwnershipBucketOwnerPreferred ObjectOwnership = "BucketOwnerPreferred"
	// ObjectOwnershipObjectWriter: ACLs apply; the uploader owns what it uploads. What the
	// operator creates buckets with when the spec does not say.
	ObjectOwnershipObjectWriter ObjectOwnership = "ObjectWriter"
)

// ReasonOwnershipControlsUnsupported: the S3 server does not implement ownership controls
// (Ceph RGW 16.2 answers 400 InvalidArgument), so spec.ownershipControls cannot be applied;
// ACLs apply there as under ObjectWriter. The rest of the spec is applied.
const ReasonOwnershipControlsUnsupported = "OwnershipControlsUnsupported"
