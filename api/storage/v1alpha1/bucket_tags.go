package v1alpha1

// Tags the operator puts on the buckets it makes, to say whose they are. Every key starts with
// OperatorTagPrefix, which a Bucket's spec.tags may not use.
const (
	// OperatorTagPrefix starts the key of every tag of the operator's.
	OperatorTagPrefix = "storage.osm.dev/"
	// BucketOwnerTag marks a bucket with the Bucket it was made for, "<namespace>/<name>" (or a
	// digest of it, when longer than a tag value may be).
	BucketOwnerTag = OperatorTagPrefix + "bucket"
	// BucketOwnerUIDTag records the UID of the Bucket that made or last adopted the bucket.
	BucketOwnerUIDTag = OperatorTagPrefix + "bucket-uid"
	// COSIBucketTag marks a bucket the COSI driver made, with its COSI Bucket's name.
	COSIBucketTag = OperatorTagPrefix + "cosi-bucket"
)
