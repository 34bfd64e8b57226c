package v1alpha1

// EncryptionAlgorithm is how a bucket encrypts new objects by default.
// +kubebuilder:validation:Enum=SSE-S3;SSE-KMS
type EncryptionAlgorithm string

const (
	// EncryptionSSES3: keys the S3 service manages.
	EncryptionSSES3 EncryptionAlgorithm = "SSE-S3"
	// EncryptionSSEKMS: a key of the key management service (KMS).
	EncryptionSSEKMS EncryptionAlgorithm = "SSE-KMS"
)

// BucketEncryption is a bucket's default encryption: what the server encrypts new objects with
// when the upload asks for nothing else.
// +kubebuilder:validation:XValidation:rule="self.algorithm == 'SSE-KMS' || !has(self.kmsKeyId)",message="kmsKeyId is for SSE-KMS only: SSE-S3 uses keys the S3 service manages"
// +kubebuilder:validation:XValidation:rule="self.algorithm == 'SSE-KMS' || !has(self.bucketKeyEnabled) || !self.bucketKeyEnabled",message="bucketKeyEnabled is for SSE-KMS only: a bucket key saves calls to KMS"
type BucketEncryption struct {
	// algorithm is SSE-S3 (keys the S3 service manages) or SSE-KMS (a KMS key).
	// +required
	Algorithm EncryptionAlgorithm `json:"algorithm"`

	// kmsKeyId is the KMS key (its id, alias or ARN) for SSE-KMS; absent, the account's default
	// KMS key for S3.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	KMSKeyID string `json:"kmsKeyId,omitempty"`

	// bucketKeyEnabled makes SSE-KMS use a bucket-level key, which cuts the calls to KMS (and
	// their cost) for each object.
	// +optional
	BucketKeyEnabled bool `json:"bucketKeyEnabled,omitempty"`
}

// PublicAccessBlock blocks public access to a bucket, whatever its ACL and policy say. A public
// ACL grants anything to everyone (AllUsers) or to every AWS account (AuthenticatedUsers); a
// public policy allows a wildcard principal without a condition that ties it to fixed
// networks, accounts or principals.
type PublicAccessBlock struct {
	// blockPublicAcls refuses requests that set a public ACL on the bucket or its objects.
	// +optional
	BlockPublicAcls bool `json:"blockPublicAcls,omitempty"`

	// ignorePublicAcls makes the server ignore public ACLs on the bucket and its objects.
	// +optional
	IgnorePublicAcls bool `json:"ignorePublicAcls,omitempty"`

	// blockPublicPolicy refuses a bucket policy that is public.
	// +optional
	BlockPublicPolicy bool `json:"blockPublicPolicy,omitempty"`

	// restrictPublicBuckets limits access to a bucket with a public policy to the account and
	// the services it uses.
	// +optional
	RestrictPublicBuckets bool `json:"restrictPublicBuckets,omitempty"`
}

// BucketLogging sends a bucket's server access logs to another bucket.
type BucketLogging struct {
	// targetBucket is the bucketName of the bucket the logs go to: a Bucket in this namespace
	// of the same Contract.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	TargetBucket string `json:"targetBucket"`

	// targetPrefix starts the key of every log object, so one target can hold the logs of
	// several buckets.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	TargetPrefix string `json:"targetPrefix,omitempty"`
}

// ManagementPolicy says what the operator may do to a bucket.
// +kubebuilder:validation:Enum=Manage;Observe
type ManagementPolicy string

const (
	// ManagementManage: the operator creates the bucket, brings it to the spec and deletes it
	// as bucketReclaimPolicy says.
	ManagementManage ManagementPolicy = "Manage"
	// ManagementObserve: the operator reads the bucket and reports it in status and conditions,
	// and never creates, changes, tags or deletes anything at the server.
	ManagementObserve ManagementPolicy = "Observe"
)
