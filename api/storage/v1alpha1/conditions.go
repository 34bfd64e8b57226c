package v1alpha1

// AbandonAnnotation, set to "true" on a Contract, Bucket or BucketAccess being deleted, tells
// its controller to let it go without touching the provider: for when the provider is gone for
// good, or its contract API cannot be reached any more. What stays behind at the provider (a
// contract, a bucket, a principal and its keys) is named in an Abandoned event. What stays
// keeps costing, so setting it, like removing the Finalizer by hand, takes the RBAC verb
// VerbAbandon on the resource (a validating webhook asks the API server); a user who has it
// can do both while the manager is down.
const AbandonAnnotation = "storage.osm.dev/abandon"

// Finalizer keeps a Contract, Bucket or BucketAccess until its controller has dealt with the
// provider side: cancelled or kept the contract, deleted or kept the bucket, revoked the keys,
// and waited for what depends on it. The defaulting webhooks put it on at creation, so it is
// there from the resource's first moment at no write of its own; a controller puts it on where
// no webhook did.
const Finalizer = "storage.osm.dev/finalizer"

// Powers with a cost are RBAC verbs of their own on contracts, buckets and bucketaccesses, as
// Kubernetes has escalate, bind and approve: no built-in role grants them (cluster-admin's "*"
// does), and the install's ClusterRole cost-admin, bound to no one, grants them.
const (
	// VerbAbandon lets a user set AbandonAnnotation or remove the Finalizer: a resource let go
	// that way leaves its contract, bucket or keys at the provider.
	VerbAbandon = "abandon"
	// VerbRetain lets a user give a bought Contract reclaimPolicy Retain, which keeps the
	// contract running, and paid for, after the Contract is deleted.
	VerbRetain = "retain"
	// VerbEmpty lets a user set spec.deletion.emptyOnDelete on a Bucket, whose deletion then
	// destroys the objects in its bucket.
	VerbEmpty = "empty"
)

// Condition types shared by Contract and Bucket.
const (
	// ReadyCondition summarises a resource: True once what it asks for exists at the provider and
	// matches its spec.
	ReadyCondition = "Ready"

	// InUseCondition is True while other resources depend on this one: Buckets naming a
	// Contract, Applications linking a Bucket. It is not removed until they are gone.
	InUseCondition = "InUse"

	// DeletionBlockedCondition on a Bucket is True when deleting it would destroy data the user
	// has not given up (a non-empty bucket with bucketReclaimPolicy Delete).
	DeletionBlockedCondition = "DeletionBlocked"

	// InSyncCondition on an Observe Bucket says whether the bucket at the server matches the
	// spec: False lists the settings that Manage would change. Manage Buckets do not have it:
	// their Ready says so.
	InSyncCondition = "InSync"
)

// Reasons for the conditions above. Each is one CamelCase word that tools can match on; the
// condition's message says the same for people.
const (
	// ReasonAvailable: the resource exists at the provider and matches its spec.
	ReasonAvailable = "Available"
	// ReasonProvisioning: the provider has been asked and the result is not there yet.
	ReasonProvisioning = "Provisioning"
	// ReasonContractAPIUnavailable: the contract API could not be reached or answered 5xx or 429;
	// the controller retries with backoff.
	ReasonContractAPIUnavailable = "ContractAPIUnavailable"
	// ReasonContractAPIRejected: the contract API refused the request (4xx); the controller waits
	// for the spec to change.
	ReasonContractAPIRejected = "ContractAPIRejected"
	// ReasonContractNotFound: the Bucket names a Contract that does not exist in its namespace.
	ReasonContractNotFound = "ContractNotFound"
	// ReasonContractNotReady: the Bucket's Contract exists but is not Ready yet.
	ReasonContractNotReady = "ContractNotReady"
	// ReasonContractCancelled: the provider reports the contract as cancelled.
	ReasonContractCancelled = "ContractCancelled"
	// ReasonBucketsExist: the Contract is still named by Buckets.
	ReasonBucketsExist = "BucketsExist"
	// ReasonNoBuckets: no Bucket names the Contract.
	ReasonNoBuckets = "NoBuckets"
	// ReasonInUse: resources such as Applications use the Bucket.
	ReasonInUse = "InUse"
	// ReasonNotInUse: nothing uses the Bucket.
	ReasonNotInUse = "NotInUse"
	// ReasonSecretConflict: the Secret the credentials should go to exists and belongs to
	// something else; it is never overwritten.
	ReasonSecretConflict = "SecretConflict"
	// ReasonUnsafeValue: a value of the credentials (the region, the endpoint, a key) cannot be
	// written as it is in a format of spec.formats (an INI file, where it could start a section
	// or key of its own); the Secret is not written.
	ReasonUnsafeValue = "UnsafeValue"
	// ReasonBucketAlreadyExists: the bucket exists in the contract's account but was not made for
	// this resource, so it is not adopted.
	ReasonBucketAlreadyExists = "BucketAlreadyExists"
	// ReasonBucketNameTaken: another account owns a bucket of that name.
	ReasonBucketNameTaken = "BucketNameTaken"
	// ReasonS3Unavailable: the S3 endpoint could not be reached or answered 5xx.
	ReasonS3Unavailable = "S3Unavailable"
	// ReasonS3Rejected: the S3 endpoint refused a request the spec needs (for example an invalid
	// policy or grantee).
	ReasonS3Rejected = "S3Rejected"
	// ReasonBucketNotEmpty: deletion is blocked because the bucket still holds objects.
	ReasonBucketNotEmpty = "BucketNotEmpty"
	// ReasonTooManyObjects: deletion is blocked because the bucket holds more object versions
	// than spec.deletion.maxObjects lets it remove; nothing was removed.
	ReasonTooManyObjects = "TooManyObjects"
	// ReasonObjectsLocked: deletion is blocked because object lock (retention or legal hold)
	// keeps object versions the emptying may not remove.
	ReasonObjectsLocked = "ObjectsLocked"
	// ReasonEmptying: the bucket is being emptied for its deletion.
	ReasonEmptying = "Emptying"
	// ReasonCredentialsIncomplete: a Contract of spec.credentials cannot find what it needs: its
	// Secret, the keys in it, or the endpoint.
	ReasonCredentialsIncomplete = "CredentialsIncomplete"
	// ReasonInvalidCredentials: the S3 endpoint refused the keys of a Contract of
	// spec.credentials (an unknown key, a wrong secret, a signature for the wrong region).
	ReasonInvalidCredentials = "InvalidCredentials"
	// ReasonEndpointUnreachable: the S3 endpoint of a Contract of spec.credentials did not
	// answer, or its TLS certificate is not trusted.
	ReasonEndpointUnreachable = "EndpointUnreachable"
	// ReasonEndpointNotAllowed: an endpoint the resource names (a Contract's S3 endpoint, a
	// Bucket's notification receiver) is not on the platform's list of allowed endpoints; the
	// operator never calls it.
	ReasonEndpointNotAllowed = "EndpointNotAllowed"
	// ReasonAnswerRefused: an S3 endpoint answered with what the operator does not accept: longer
	// than the operator reads of it, a redirect to another host, or not what the call returns.
	ReasonAnswerRefused = "AnswerRefused"
	// ReasonInvalidConfiguration: a value the resource or its Secret gives cannot be used, for
	// example a region that is not one.
	ReasonInvalidConfiguration = "InvalidConfiguration"
	// ReasonLoggingTargetNotAllowed: a Bucket's logging target is a bucket the operator made for
	// someone else (a COSI bucket, another namespace's Bucket).
	ReasonLoggingTargetNotAllowed = "LoggingTargetNotAllowed"
	// ReasonInvalidName: the resource's name cannot work (for example a Contract name too long
	// to label its Secret); nothing was bought or created.
	ReasonInvalidName = "InvalidName"
	// ReasonBucketNameConflict: another Bucket in the namespace already manages a bucket of this
	// name; exactly one may.
	ReasonBucketNameConflict = "BucketNameConflict"
	// ReasonContractDeleting: the Bucket's Contract is being deleted, so no bucket is created for it.
	ReasonContractDeleting = "ContractDeleting"
	// ReasonAccessDeniedByPolicy: the server denied the bucket's own account a request on a
	// bucket this resource owns: a bucket policy locks the owner out.
	ReasonAccessDeniedByPolicy = "AccessDeniedByPolicy"
	// ReasonVersioningUnsupported, ReasonLifecycleUnsupported, ReasonCORSUnsupported,
	// ReasonObjectLockUnsupported, ReasonTagsUnsupported, ReasonACLUnsupported and
	// ReasonPolicyUnsupported, ReasonEncryptionUnsupported, ReasonPublicAccessBlockUnsupported,
	// ReasonLoggingUnsupported, ReasonWebsiteUnsupported and ReasonNotificationsUnsupported
	// (also when the provider makes no topics): the S3 server does not implement what the spec asks for (it
	// answered 501, or 405 for a sub-resource it lacks); the rest of the spec is applied, and the
	// server is asked again once a resync period.
	ReasonVersioningUnsupported        = "VersioningUnsupported"
	ReasonLifecycleUnsupported         = "LifecycleUnsupported"
	ReasonCORSUnsupported              = "CORSUnsupported"
	ReasonObjectLockUnsupported        = "ObjectLockUnsupported"
	ReasonTagsUnsupported              = "TagsUnsupported"
	ReasonACLUnsupported               = "ACLUnsupported"
	ReasonPolicyUnsupported            = "PolicyUnsupported"
	ReasonEncryptionUnsupported        = "EncryptionUnsupported"
	ReasonPublicAccessBlockUnsupported = "PublicAccessBlockUnsupported"
	ReasonLoggingUnsupported           = "LoggingUnsupported"
	ReasonWebsiteUnsupported           = "WebsiteUnsupported"
	ReasonNotificationsUnsupported     = "NotificationsUnsupported"
	// ReasonObjectLockNotEnabled: the spec asks for object lock, but the bucket was created
	// without it (an adopted bucket), and S3 turns it on only at creation.
	ReasonObjectLockNotEnabled = "ObjectLockNotEnabled"
	// ReasonObserved: an Observe Bucket was read, and status shows what the server has.
	ReasonObserved = "Observed"
	// ReasonMatchesSpec and ReasonDiffersFromSpec: InSync's reasons.
	ReasonMatchesSpec     = "MatchesSpec"
	ReasonDiffersFromSpec = "DiffersFromSpec"
	// ReasonBucketMissing: an Observe Bucket names a bucket its Contract's account does not
	// have; the operator never creates one for it.
	ReasonBucketMissing = "BucketMissing"
	// ReasonDeleting: the resource is being deleted.
	ReasonDeleting = "Deleting"
)
