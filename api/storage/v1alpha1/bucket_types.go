package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// CannedACL is one of S3's canned ACLs.
// +kubebuilder:validation:Enum=private;public-read;public-read-write;authenticated-read
type CannedACL string

const (
	CannedACLPrivate           CannedACL = "private"
	CannedACLPublicRead        CannedACL = "public-read"
	CannedACLPublicReadWrite   CannedACL = "public-read-write"
	CannedACLAuthenticatedRead CannedACL = "authenticated-read"
)

// GranteeType says how a grantee is named.
// +kubebuilder:validation:Enum=id;emailAddress;url
type GranteeType string

const (
	// GranteeTypeID names an account by its canonical user id.
	GranteeTypeID GranteeType = "id"
	// GranteeTypeEmailAddress names an account by its e-mail address.
	GranteeTypeEmailAddress GranteeType = "emailAddress"
	// GranteeTypeURL names a predefined group by its URI, for example
	// http://acs.amazonaws.com/groups/global/AllUsers.
	GranteeTypeURL GranteeType = "url"
)

// Grantee is who a grant is for.
type Grantee struct {
	// value is the canonical user id, e-mail address or group URI, as type says.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`

	// type says how value names the grantee: id, emailAddress or url.
	// +required
	Type GranteeType `json:"type"`
}

// BucketSpec is the bucket the user asks for and who may do what with it.
// +kubebuilder:validation:XValidation:rule="has(self.objectLock) == has(oldSelf.objectLock)",message="objectLock can be set only when the Bucket is created and cannot be removed: S3 sets object lock only when the bucket is created"
// +kubebuilder:validation:XValidation:rule="!has(self.objectLock) || !has(self.versioning) || self.versioning == 'Enabled'",message="a bucket with objectLock is always versioned: versioning cannot be Suspended"
type BucketSpec struct {
	// bucketName is the name of the bucket at the provider. It follows the S3 naming rules and
	// cannot change.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'bucketName cannot change (was ' + oldSelf + ')'"
	BucketName string `json:"bucketName"`

	// contractName is the Contract, in this namespace, whose account owns the bucket. It cannot
	// change.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be the name of a Contract in this namespace: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'contractName cannot change (was ' + oldSelf + ')'"
	ContractName string `json:"contractName"`

	// bucketReclaimPolicy says whether deleting this resource deletes the bucket (Delete) or
	// leaves it (Retain, the default). A bucket that still holds objects is emptied only when
	// spec.deletion.emptyOnDelete says so; otherwise its deletion waits, and the DeletionBlocked
	// condition says why.
	// +optional
	// +kubebuilder:default=Retain
	BucketReclaimPolicy ReclaimPolicy `json:"bucketReclaimPolicy,omitempty"`

	// cannedAcl is a canned ACL to start from; the grant lists add to it. Defaults to private.
	// +optional
	CannedACL CannedACL `json:"cannedAcl,omitempty"`

	// grantRead lists grantees that may list the bucket.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	GrantRead []Grantee `json:"grantRead,omitempty"`

	// grantWrite lists grantees that may create, overwrite and delete objects in the bucket.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	GrantWrite []Grantee `json:"grantWrite,omitempty"`

	// grantReadAcp lists grantees that may read the bucket's ACL.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	GrantReadACP []Grantee `json:"grantReadAcp,omitempty"`

	// grantWriteAcp lists grantees that may write the bucket's ACL.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	GrantWriteACP []Grantee `json:"grantWriteAcp,omitempty"`

	// fullControl lists grantees that have every permission on the bucket.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	FullControl []Grantee `json:"fullControl,omitempty"`

	// policy is the bucket policy, written inline as a JSON (or YAML) object. Removing it
	// deletes the bucket's policy.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Policy *runtime.RawExtension `json:"policy,omitempty"`

	// versioning turns object versioning on (Enabled) or off for new writes (Suspended; the
	// versions already kept stay). Absent, the bucket is left as the server has it. A bucket with
	// objectLock is always versioned, so it cannot be Suspended.
	// +optional
	Versioning VersioningStatus `json:"versioning,omitempty"`

	// lifecycle holds the rules by which the server expires objects and old versions and aborts
	// unfinished uploads. Removing it deletes the bucket's lifecycle rules.
	// +optional
	Lifecycle *BucketLifecycle `json:"lifecycle,omitempty"`

	// cors holds the rules by which browsers on other origins may use the bucket. Removing it
	// deletes the bucket's CORS rules.
	// +optional
	CORS *BucketCORS `json:"cors,omitempty"`

	// objectLock makes the bucket refuse to overwrite or delete an object version until its
	// retention ends (WORM). S3 turns it on only when a bucket is created, so it can be set
	// only when the Bucket is created and never changed or removed; the bucket is versioned.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="objectLock cannot change: S3 sets object lock only when the bucket is created"
	ObjectLock *ObjectLock `json:"objectLock,omitempty"`

	// tags are the bucket's own tags (S3 bucket tagging), for cost allocation and inventory.
	// The operator keeps two of its own beside them, storage.osm.dev/bucket and
	// storage.osm.dev/bucket-uid, which say whose bucket it is: keys under storage.osm.dev/, and
	// under aws:, which S3 reserves, are refused. Where the server keeps tags given at creation,
	// the bucket is made with them. Tags changed on the server are restored; removing this
	// field removes them.
	// +optional
	// +kubebuilder:validation:MaxProperties=48
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('storage.osm.dev/') && !k.startsWith('aws:'))",message="tag keys under storage.osm.dev/ are the operator's own, and aws: is reserved by S3"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 128 && size(self[k]) <= 256)",message="a tag key has at most 128 characters, and its value at most 256"
	Tags map[string]string `json:"tags,omitempty"`

	// encryption is the bucket's default encryption. Removing it removes the bucket's own
	// (AWS then encrypts with SSE-S3, its default for every bucket).
	// +optional
	Encryption *BucketEncryption `json:"encryption,omitempty"`

	// publicAccessBlock blocks public access to the bucket whatever its ACL and policy say. A
	// public cannedAcl or a public policy under a block that refuses it is refused here.
	// Removing it removes the bucket's block.
	// +optional
	PublicAccessBlock *PublicAccessBlock `json:"publicAccessBlock,omitempty"`

	// ownershipControls says who owns the objects others upload, and so whether ACLs apply:
	// BucketOwnerEnforced (ACLs off, the account owns every object; cannedAcl must then be
	// private and no grants may be listed), BucketOwnerPreferred or ObjectWriter. Absent, the
	// operator leaves the bucket's as it is (it creates buckets with ObjectWriter); removing it
	// keeps the bucket's setting too. See docs/bucket.md.
	// +optional
	OwnershipControls ObjectOwnership `json:"ownershipControls,omitempty"`

	// logging sends the bucket's server access logs to another bucket of the same Contract.
	// Removing it turns logging off.
	// +optional
	Logging *BucketLogging `json:"logging,omitempty"`

	// website serves the bucket as a static website, reached at status.websiteEndpoint where
	// the provider says how. Removing it deletes the bucket's website configuration.
	// +optional
	Website *BucketWebsite `json:"website,omitempty"`

	// notifications send an event to an HTTP endpoint for each object created or removed in the
	// bucket, through a topic the provider makes for each one. Removing one deletes its topic.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	Notifications []BucketNotification `json:"notifications,omitempty"`

	// managementPolicy is Manage (the default) or Observe. An Observe Bucket reads the bucket
	// (it must exist) and reports every setting in status, with the InSync condition saying
	// whether it matches this spec, and never creates, changes, tags or deletes anything at the
	// server, whatever bucketReclaimPolicy says: a team can put an existing bucket under watch
	// first, and switch to Manage once the spec is right.
	// +optional
	// +kubebuilder:default=Manage
	ManagementPolicy ManagementPolicy `json:"managementPolicy,omitempty"`

	// adopt lets this Bucket take over a bucket of its Contract's account that exists and
	// carries no owner tag (one made outside the operator): it is tagged for this resource,
	// then managed. Without it such a bucket is reported as BucketNameTaken. A bucket tagged
	// for another resource is never taken over.
	// +optional
	Adopt bool `json:"adopt,omitempty"`

	// quota is the most the bucket may hold; the provider enforces it, refusing writes past
	// it, and the QuotaNearlyFull condition warns before. Removing it removes the limit.
	// +optional
	Quota *BucketQuota `json:"quota,omitempty"`

	// deletion says what deleting this resource may do to the objects in the bucket.
	// +optional
	Deletion *BucketDeletion `json:"deletion,omitempty"`
}

// DefaultMaxObjectsToEmpty is spec.deletion.maxObjects when emptyOnDelete is set without it, and
// MaxObjectsToEmpty the most it may be: counting a million versions takes a thousand listings.
const (
	DefaultMaxObjectsToEmpty = 1000
	MaxObjectsToEmpty        = 1000000
)

// BucketDeletion says what deleting a Bucket may do to the objects in its bucket.
type BucketDeletion struct {
	// emptyOnDelete lets the deletion of this resource (with bucketReclaimPolicy Delete) delete
	// every object version and delete marker in the bucket, then the bucket. Objects under
	// object-lock retention or legal hold are never removed: they keep the deletion waiting.
	// Setting it takes the RBAC verb empty on buckets.
	// +optional
	EmptyOnDelete bool `json:"emptyOnDelete,omitempty"`

	// maxObjects is the most object versions and delete markers the deletion removes: a bucket
	// holding more is not touched, and the deletion waits (TooManyObjects). Defaults to 1000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	MaxObjects int64 `json:"maxObjects,omitempty"`
}

// Cap is the most object versions the deletion removes.
func (d *BucketDeletion) Cap() int64 {
	if d == nil || d.MaxObjects == 0 {
		return DefaultMaxObjectsToEmpty
	}
	return d.MaxObjects
}

// Empties says whether deleting the Bucket empties its bucket.
func (d *BucketDeletion) Empties() bool { return d != nil && d.EmptyOnDelete }

// BucketEmptying is the progress of emptying a bucket for its deletion, recorded before and
// after each batch so a pass that stops is resumed by the next, from where it stopped.
type BucketEmptying struct {
	// startedAt is when the emptying began.
	// +optional
	StartedAt metav1.Time `json:"startedAt,omitempty"`

	// counted is how many object versions and delete markers the deletion counted to remove,
	// those earlier rounds removed included: at most spec.deletion.maxObjects. 0 while a round
	// (after the bucket was written to) is still to be counted.
	// +optional
	Counted int64 `json:"counted,omitempty"`

	// removedVersions and removedDeleteMarkers are how many were deleted so far.
	// +optional
	RemovedVersions int64 `json:"removedVersions,omitempty"`
	// +optional
	RemovedDeleteMarkers int64 `json:"removedDeleteMarkers,omitempty"`

	// keyMarker and versionIdMarker are where the listing resumes: everything up to them was
	// dealt with in this round (versionIdMarker is empty after a key dealt with whole).
	// +optional
	KeyMarker string `json:"keyMarker,omitempty"`
	// +optional
	VersionIDMarker string `json:"versionIdMarker,omitempty"`

	// locked is how many versions this round left because object lock holds them, and held
	// says of one of them what holds it.
	// +optional
	Locked int64 `json:"locked,omitempty"`
	// +optional
	Held string `json:"held,omitempty"`
}

// VersioningStatus is a bucket's versioning state.
// +kubebuilder:validation:Enum=Enabled;Suspended
type VersioningStatus string

const (
	VersioningEnabled   VersioningStatus = "Enabled"
	VersioningSuspended VersioningStatus = "Suspended"
)

// GeneratedLifecycleRulePrefix starts the ids of lifecycle rules the operator adds to a bucket's
// own (an Application's backup retention: osm-backup-<name>); a spec's rules may not use it.
const GeneratedLifecycleRulePrefix = "osm-"

// BucketLifecycle is a bucket's lifecycle configuration.
type BucketLifecycle struct {
	// rules are the lifecycle rules, each with a unique id.
	// +required
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Rules []LifecycleRule `json:"rules"`
}

// LifecycleRule applies its actions to the objects its filter (prefix and tags) selects; with
// no filter, to every object. At least one action is required.
// +kubebuilder:validation:XValidation:rule="has(self.expiration) || has(self.noncurrentVersionExpirationDays) || has(self.abortIncompleteMultipartUploadDays)",message="a rule needs at least one action: expiration, noncurrentVersionExpirationDays or abortIncompleteMultipartUploadDays"
type LifecycleRule struct {
	// id names the rule; unique in the bucket.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	ID string `json:"id"`

	// prefix selects the objects whose keys start with it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`

	// tags selects the objects that carry all of these tags.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=10
	Tags []Tag `json:"tags,omitempty"`

	// expiration expires current object versions after a number of days or on a date.
	// +optional
	Expiration *LifecycleExpiration `json:"expiration,omitempty"`

	// noncurrentVersionExpirationDays deletes an object version this many days after a newer
	// version replaced it (in versioned buckets).
	// +optional
	// +kubebuilder:validation:Minimum=1
	NoncurrentVersionExpirationDays *int32 `json:"noncurrentVersionExpirationDays,omitempty"`

	// abortIncompleteMultipartUploadDays aborts multipart uploads not completed this many days
	// after they started. S3 does not allow it in a rule filtered by tags.
	// +optional
	// +kubebuilder:validation:Minimum=1
	AbortIncompleteMultipartUploadDays *int32 `json:"abortIncompleteMultipartUploadDays,omitempty"`
}

// LifecycleExpiration is when current object versions expire: after days, or on date.
// +kubebuilder:validation:XValidation:rule="has(self.days) != has(self.date)",message="set exactly one of days and date"
type LifecycleExpiration struct {
	// days after an object's creation at which it expires.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Days *int32 `json:"days,omitempty"`

	// date on which objects expire, at midnight UTC as S3 requires: 2027-01-01 or
	// 2027-01-01T00:00:00Z.
	// +optional
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}(T00:00:00([.]0+)?Z)?$')",message="must be a date (2027-01-01) or midnight UTC (2027-01-01T00:00:00Z), as S3 requires"
	Date string `json:"date,omitempty"`
}

// Tag is an object tag a lifecycle rule selects on.
type Tag struct {
	// key of the tag.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Key string `json:"key"`

	// value of the tag.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
}

// BucketCORS is a bucket's CORS configuration.
type BucketCORS struct {
	// rules are the CORS rules; a browser's request is answered by the first that matches.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Rules []CORSRule `json:"rules"`
}

// CORSMethod is an HTTP method a CORS rule allows.
// +kubebuilder:validation:Enum=GET;PUT;POST;DELETE;HEAD
type CORSMethod string

// CORSRule lets browsers on some origins make some requests.
type CORSRule struct {
	// allowedOrigins are the origins allowed, such as https://app.example.com; one "*" may
	// stand for any part of a name (https://*.example.com), and "*" alone for any origin.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	AllowedOrigins []string `json:"allowedOrigins"`

	// allowedMethods are the methods allowed: GET, PUT, POST, DELETE, HEAD.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	AllowedMethods []CORSMethod `json:"allowedMethods"`

	// allowedHeaders are the request headers a preflight may ask for; "*" allows any.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	AllowedHeaders []string `json:"allowedHeaders,omitempty"`

	// exposeHeaders are the response headers browsers let scripts read.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	ExposeHeaders []string `json:"exposeHeaders,omitempty"`

	// maxAgeSeconds is how long a browser may cache the answer to a preflight.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxAgeSeconds *int32 `json:"maxAgeSeconds,omitempty"`
}

// RetentionMode is an object lock retention mode.
// +kubebuilder:validation:Enum=GOVERNANCE;COMPLIANCE
type RetentionMode string

const (
	// RetentionGovernance: users with a special permission may still delete a locked version.
	RetentionGovernance RetentionMode = "GOVERNANCE"
	// RetentionCompliance: no one can delete a locked version until its retention ends.
	RetentionCompliance RetentionMode = "COMPLIANCE"
)

// ObjectLock is a bucket's object lock.
type ObjectLock struct {
	// defaultRetention locks every new object version for a time; without it, only versions
	// given a retention of their own are locked.
	// +optional
	DefaultRetention *DefaultRetention `json:"defaultRetention,omitempty"`
}

// DefaultRetention is the retention every new object version gets.
type DefaultRetention struct {
	// mode is GOVERNANCE or COMPLIANCE.
	// +required
	Mode RetentionMode `json:"mode"`

	// days each new version is locked.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=36500
	Days int32 `json:"days"`
}

// ObservedGrant is one grant as the S3 endpoint reported it.
type ObservedGrant struct {
	// grantee is who the grant is for.
	// +required
	Grantee Grantee `json:"grantee"`

	// permission is one of FULL_CONTROL, READ, WRITE, READ_ACP, WRITE_ACP.
	// +required
	Permission string `json:"permission"`
}

// ObservedACL is a bucket's ACL as the S3 endpoint reported it.
type ObservedACL struct {
	// owner is the canonical id of the bucket's owner.
	// +optional
	Owner string `json:"owner,omitempty"`

	// grants are the bucket's grants, sorted.
	// +optional
	// +listType=atomic
	Grants []ObservedGrant `json:"grants,omitempty"`
}

// BucketStatus is what the controller last observed at the S3 endpoint.
type BucketStatus struct {
	// bucketName is the name of the bucket that exists at the provider.
	// +optional
	BucketName string `json:"bucketName,omitempty"`

	// creatingBucket names the bucket the operator is creating for this resource. It is written
	// before CreateBucket, so a pass that stops between creating and tagging the bucket is
	// finished by the next, and a deletion finds the bucket. A server that keeps the tags given
	// at creation (AWS, versitygw) needs none: the bucket appears tagged with this resource's
	// UID, which the next pass and a deletion look for. It lives in status, which only the
	// operator writes: a user cannot make it adopt someone else's untagged bucket.
	// +optional
	CreatingBucket string `json:"creatingBucket,omitempty"`

	// emptying is the progress of emptying the bucket for the deletion of this resource
	// (spec.deletion.emptyOnDelete). It lives in status, which only the operator writes.
	// +optional
	Emptying *BucketEmptying `json:"emptying,omitempty"`

	// endpoint is the S3 endpoint URL that serves the bucket.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// region is the bucket's region.
	// +optional
	Region string `json:"region,omitempty"`

	// acl is the bucket's ACL as observed.
	// +optional
	ACL *ObservedACL `json:"acl,omitempty"`

	// policy is the bucket's policy as observed, in canonical form.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Policy *runtime.RawExtension `json:"policy,omitempty"`

	// versioning is the bucket's versioning state as observed while the spec sets one:
	// Enabled, Suspended, or empty for a bucket never versioned.
	// +optional
	Versioning string `json:"versioning,omitempty"`

	// lifecycle is the bucket's lifecycle rules as observed while the spec has some.
	// +optional
	Lifecycle *BucketLifecycle `json:"lifecycle,omitempty"`

	// cors is the bucket's CORS rules as observed while the spec has some.
	// +optional
	CORS *BucketCORS `json:"cors,omitempty"`

	// objectLock is the bucket's object lock as observed, when the spec has one.
	// +optional
	ObjectLock *ObjectLock `json:"objectLock,omitempty"`

	// tags are the bucket's tags as observed while the spec has some, apart from the
	// operator's own.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// encryption is the bucket's default encryption as observed while the spec sets one.
	// +optional
	Encryption *BucketEncryption `json:"encryption,omitempty"`

	// publicAccessBlock is the bucket's public access block as observed while the spec sets one.
	// +optional
	PublicAccessBlock *PublicAccessBlock `json:"publicAccessBlock,omitempty"`

	// ownershipControls is the bucket's object ownership as observed while the spec sets one;
	// empty when the bucket has no ownership controls.
	// +optional
	OwnershipControls string `json:"ownershipControls,omitempty"`

	// logging is where the bucket's access logs go, as observed while the spec sets it.
	// +optional
	Logging *BucketLogging `json:"logging,omitempty"`

	// website is the bucket's website configuration as observed while the spec sets one.
	// +optional
	Website *BucketWebsite `json:"website,omitempty"`

	// websiteEndpoint is the URL at which the provider serves the bucket's website, while it
	// has one and the provider says how its websites are reached.
	// +optional
	WebsiteEndpoint string `json:"websiteEndpoint,omitempty"`

	// notifications are the bucket's event notifications as observed while the spec has some,
	// each with the topic it publishes to.
	// +optional
	// +listType=atomic
	Notifications []ObservedNotification `json:"notifications,omitempty"`

	// topics are the topics the operator asked the provider for, for this Bucket's
	// notifications: each is recorded before it is asked for, so one whose answer was lost is
	// still found and deleted when its notification or the Bucket goes.
	// +optional
	// +listType=map
	// +listMapKey=name
	Topics []NotificationTopic `json:"topics,omitempty"`

	// quota is the bucket's quota as the provider enforces it, while the spec sets one.
	// +optional
	Quota *ObservedQuota `json:"quota,omitempty"`

	// usage is what the bucket holds, as the provider counts it; absent where the provider
	// cannot tell (see the UsageUnsupported reason).
	// +optional
	Usage *BucketUsage `json:"usage,omitempty"`

	// managementPolicy is Observe when the settings in this status were observed by an Observe
	// pass, and absent otherwise. What an Observe pass recorded was never written by the
	// operator, so a switch to Manage does not take it for the operator's own (and remove it
	// when the spec does not name it).
	// +optional
	ManagementPolicy ManagementPolicy `json:"managementPolicy,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, and DeletionBlocked when a deletion waits on the user.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=osm
// +kubebuilder:printcolumn:name="Bucket",type=string,JSONPath=`.spec.bucketName`
// +kubebuilder:printcolumn:name="Contract",type=string,JSONPath=`.spec.contractName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.status.usage.size`
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.usage.objects`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:selectablefield:JSONPath=`.spec.bucketName`
// +kubebuilder:selectablefield:JSONPath=`.spec.contractName`

// Bucket is an S3 bucket in the account of a Contract, with the ACL and policy its spec asks for.
type Bucket struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user asks for.
	// +required
	Spec BucketSpec `json:"spec"`

	// status is what the controller observed.
	// +optional
	Status BucketStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BucketList is a list of Buckets.
type BucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Bucket `json:"items"`
}
