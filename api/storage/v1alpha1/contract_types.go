package v1alpha1

import (
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReclaimPolicy says what happens at the provider when the resource is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type ReclaimPolicy string

const (
	// ReclaimPolicyDelete removes the provider-side object (cancels the contract, deletes the
	// bucket) before the resource goes.
	ReclaimPolicyDelete ReclaimPolicy = "Delete"
	// ReclaimPolicyRetain leaves the provider-side object in place; only the resource goes.
	ReclaimPolicyRetain ReclaimPolicy = "Retain"
)

// ContractSpec is what the user buys from the object-storage provider, or the account the user
// already has.
// +kubebuilder:validation:XValidation:rule="has(self.plan) != has(self.credentials)",message="set exactly one of plan (buy an account through the provider's contract API) and credentials (use an account you already have)"
// +kubebuilder:validation:XValidation:rule="has(self.credentials) == has(oldSelf.credentials)",message="plan or credentials is chosen when the Contract is created and cannot be swapped"
// +kubebuilder:validation:XValidation:rule="has(self.region) == has(oldSelf.region)",message="region cannot be added or removed after creation"
// +kubebuilder:validation:XValidation:rule="has(self.displayName) == has(oldSelf.displayName)",message="displayName cannot be added or removed after creation: the provider keeps the name the contract was bought with"
type ContractSpec struct {
	// plan is the provider's plan to buy, for example "standard". It cannot change. Exactly one
	// of plan and credentials is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'plan cannot change (was ' + oldSelf + ')'"
	Plan string `json:"plan,omitempty"`

	// credentials use an account that exists (AWS S3, a MinIO or Ceph cluster run by another
	// team, any S3 service) instead of buying one: nothing is bought and nothing is cancelled, so
	// reclaimPolicy, secretName and keyRotation do not apply. Buckets use the account as they
	// use a bought one; what needs the provider's contract API (BucketAccess principals, key
	// rotation) says it is unsupported. It cannot change; the keys in its Secret can, and are
	// picked up without a restart.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="credentials cannot change: create another Contract for another account (the keys in the Secret may change)"
	Credentials *ContractCredentials `json:"credentials,omitempty"`

	// region is where the storage lives. When empty the provider chooses, and status.region
	// says what it chose. It cannot change.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9._-]*$')",message="a region is letters, digits, '.', '_' and '-', starting with a letter or digit: us-east-1"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'region cannot change (was ' + oldSelf + ')'"
	Region string `json:"region,omitempty"`

	// displayName is a label for people, shown by the provider. It is sent when the contract is
	// bought, and the contract API has no call to rename a contract, so it cannot change.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'displayName cannot change (was ' + oldSelf + '): the provider keeps the name the contract was bought with'"
	DisplayName string `json:"displayName,omitempty"`

	// reclaimPolicy says whether deleting this resource cancels the contract at the provider
	// (Delete) or leaves it running (Retain). A bought Contract defaults to Delete, so deleting
	// it stops what it costs; Retain takes the RBAC verb "retain" on contracts (ClusterRole
	// cost-admin), which tenants do not have. An existing account (credentials) is never closed,
	// and defaults to Retain. The admission webhook writes the default at creation; an empty
	// value (a Contract created with the webhooks off) keeps the contract.
	// +optional
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`

	// secretName is the Secret, in this namespace, that receives the credentials. Defaults to
	// "<name>-credentials".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`

	// formats are the shapes the Secret holds the account's credentials in, several at once:
	// env, aws-files, cosi, obc, rclone, s3cfg, as for a BucketAccess (docs/bucketaccess.md),
	// without a bucket. Defaults to [env].
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:default={env}
	Formats []SecretFormat `json:"formats,omitempty"`

	// keyRotation, when set, replaces the account's key every period, where the provider's
	// accounts can hold more than one key (Ceph RGW can, versitygw cannot: the KeyRotation
	// condition then says so). Without it a key is replaced only when the annotation
	// storage.osm.dev/rotate-key changes value. Its overlap is how long a replaced key keeps
	// working, also for a rotation the annotation asks for; without keyRotation that is ten
	// minutes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self.period) >= duration('1m')",message="keyRotation.period must be at least one minute"
	// +kubebuilder:validation:XValidation:rule="!has(self.overlap) || (duration(self.overlap) >= duration('0s') && duration(self.overlap) < duration(self.period))",message="keyRotation.overlap must not be negative and must be shorter than period"
	KeyRotation *KeyRotation `json:"keyRotation,omitempty"`
}

// ContractCredentials name an account that exists: its keys, and where its S3 endpoint is.
type ContractCredentials struct {
	// secretName is a Secret in this namespace with the account's AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY, and, unless endpoint and region say them here, AWS_ENDPOINT_URL and
	// AWS_REGION. The operator reads it and labels it storage.osm.dev/contract (so a change of
	// its keys wakes the Contract and its Buckets); it never copies or changes its data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`

	// endpoint is the S3 endpoint URL, for example https://s3.eu-west-1.amazonaws.com or
	// https://minio.example.com:9000. Absent, the Secret's AWS_ENDPOINT_URL.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="endpoint must be an http:// or https:// URL"
	Endpoint string `json:"endpoint,omitempty"`

	// region is the region requests are signed for. Absent, the Secret's AWS_REGION, or
	// us-east-1.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9._-]*$')",message="a region is letters, digits, '.', '_' and '-', starting with a letter or digit: us-east-1"
	Region string `json:"region,omitempty"`

	// forcePathStyle addresses buckets as <endpoint>/<bucket> (MinIO, Ceph RGW, most S3 servers
	// on premises) rather than <bucket>.<endpoint host> (AWS's virtual-hosted style). Absent:
	// virtual-hosted on amazonaws.com, path style elsewhere.
	// +optional
	ForcePathStyle *bool `json:"forcePathStyle,omitempty"`
}

// regionPattern is what a region may be, as the CRD's rule on spec.region and
// spec.credentials.region says: it goes into request signatures and into the Secret formats.
var regionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidRegion reports whether region is one the CRD would admit: for a region that reaches the
// operator another way (a Secret's AWS_REGION).
func ValidRegion(region string) bool { return len(region) <= 63 && regionPattern.MatchString(region) }

// ContractStatus is what the provider reported for the contract.
type ContractStatus struct {
	// contractID is the provider's identifier for the contract.
	// +optional
	ContractID string `json:"contractID,omitempty"`

	// state is the provider's state of the contract, for example "active".
	// +optional
	State string `json:"state,omitempty"`

	// endpoint is the S3 endpoint URL the credentials work against.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// region is the region of the S3 endpoint.
	// +optional
	Region string `json:"region,omitempty"`

	// virtualHostedStyle is true when buckets are addressed as <bucket>.<endpoint host> rather
	// than <endpoint>/<bucket> (an account of spec.credentials on AWS).
	// +optional
	VirtualHostedStyle bool `json:"virtualHostedStyle,omitempty"`

	// plan is the plan the provider reports.
	// +optional
	Plan string `json:"plan,omitempty"`

	// secretName is the Secret that holds the credentials.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// bucketPolicy is how bucket policies on the endpoint name things, as the provider reports
	// it; absent, the AWS forms.
	// +optional
	BucketPolicy *BucketPolicyForm `json:"bucketPolicy,omitempty"`

	// websiteEndpoint is where the provider serves a bucket's static website, as it reports it:
	// a URL in which {bucket} stands for the bucket's name, such as
	// http://{bucket}.s3-website.example.com. Absent, the provider does not say, and Buckets
	// show no websiteEndpoint.
	// +optional
	WebsiteEndpoint string `json:"websiteEndpoint,omitempty"`

	// quotaBytes is the storage quota of the plan, as the provider reports it; absent when the
	// plan has none.
	// +optional
	QuotaBytes int64 `json:"quotaBytes,omitempty"`

	// usage is what the Buckets naming this Contract hold together, summed from their status.
	// +optional
	Usage *ContractUsage `json:"usage,omitempty"`

	// purchaseRequested is set by the operator before it first asks the provider for this
	// Contract's contract, so that a deletion finds a purchase whose answer was lost. It lives in
	// status, which only the operator writes: a user cannot make it replay a purchase.
	// +optional
	PurchaseRequested bool `json:"purchaseRequested,omitempty"`

	// boughtAtDeletion is set when a deletion, asking again for a purchase whose answer was
	// lost, bought the contract itself: the first request had never reached the provider, so no
	// one ever held its keys, and it is cancelled whatever the reclaim policy. It is recorded
	// before the cancellation, so a failed one is tried again.
	// +optional
	BoughtAtDeletion bool `json:"boughtAtDeletion,omitempty"`

	// The key in the Secret, a rotation under way, and the replaced keys still working.
	KeyStatus `json:",inline"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, InUse while Buckets name this Contract, and KeyRotation once a
	// rotation is asked for.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BucketPolicyForm says how bucket policies on a contract's endpoint name things.
type BucketPolicyForm struct {
	// resourcePrefix is what a policy's Resource starts with before the bucket name, for
	// example "arn:aws:s3:::".
	// +required
	ResourcePrefix string `json:"resourcePrefix"`

	// ownerPrincipal names the contract's account in a policy's Principal, for example
	// {"AWS": "arn:aws:iam:::user/contract-7h2kq9x4mv3np8dz"}.
	// +optional
	OwnerPrincipal map[string]string `json:"ownerPrincipal,omitempty"`

	// ownerNeedsAllow is true when the server judges a bucket's owner by the bucket policy
	// alone: the operator then adds a statement that allows the owner to every policy it writes.
	// +optional
	OwnerNeedsAllow bool `json:"ownerNeedsAllow,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=osm
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.plan`
// +kubebuilder:printcolumn:name="Contract ID",type=string,JSONPath=`.status.contractID`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.secretName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.status.usage.size`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Contract buys object storage from a provider: an account with credentials on an S3 endpoint.
// The credentials land in a Secret in the same namespace; everything else is in status.
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a Contract's name is at most 63 characters: it is the value of the storage.osm.dev/contract label on its Secret"
type Contract struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user asks for.
	// +required
	Spec ContractSpec `json:"spec"`

	// status is what the controller observed.
	// +optional
	Status ContractStatus `json:"status,omitempty"`
}

// SecretNameOrDefault is the Secret that holds the credentials: the one spec.credentials names,
// or the one the operator writes.
func (c *Contract) SecretNameOrDefault() string {
	if c.Spec.Credentials != nil {
		return c.Spec.Credentials.SecretName
	}
	if c.Spec.SecretName != "" {
		return c.Spec.SecretName
	}
	return c.Name + "-credentials"
}

// +kubebuilder:object:root=true

// ContractList is a list of Contracts.
type ContractList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Contract `json:"items"`
}

// Keys of the credentials Secret: the environment variable names every S3 client already reads,
// so the Secret can be mounted with envFrom as it is.
const (
	SecretKeyAccessKeyID     = "AWS_ACCESS_KEY_ID"
	SecretKeySecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	SecretKeyEndpointURL     = "AWS_ENDPOINT_URL"
	SecretKeyRegion          = "AWS_REGION"
)

// ContractLabel is set on every Secret the operator writes, with the Contract's name as value.
// The manager caches only Secrets that carry it.
const ContractLabel = "storage.osm.dev/contract"

// The KeyRotation condition of a Contract or a BucketAccess and its reasons. It appears once a
// rotation is asked for (spec.keyRotation or spec.rotation, the storage.osm.dev/rotate-key
// annotation, or a Secret that lost its key).
const (
	// KeyRotationCondition is True while the account's keys rotate as asked: the last rotation
	// finished, or the next one is scheduled. False says why a rotation is not happening or not
	// finished; the key in the Secret keeps working meanwhile.
	KeyRotationCondition = "KeyRotation"

	// ReasonKeyRotated: a new key is in the Secret; the replaced one works until status.retiringKeys says.
	ReasonKeyRotated = "KeyRotated"
	// ReasonKeyRotationScheduled: a rotation period is set and the first rotation is not due yet.
	ReasonKeyRotationScheduled = "KeyRotationScheduled"
	// ReasonKeyRotationInProgress: a new key was asked for and is not in the Secret yet.
	ReasonKeyRotationInProgress = "KeyRotationInProgress"
	// ReasonKeyRotationUnsupported: the provider's accounts hold one key (versitygw), so the
	// key cannot be rotated; the key in the Secret stays as it is.
	ReasonKeyRotationUnsupported = "KeyRotationUnsupported"
	// ReasonNewKeyRefused: the S3 endpoint refused the new key when it was tried, so it is not
	// written to the Secret; it is tried again.
	ReasonNewKeyRefused = "NewKeyRefused"
	// ReasonNewKeyPending: the new key works, but cannot yet do what it is for (the Bucket's
	// policy does not name it yet), so it is not written to the Secret; it is tried again.
	ReasonNewKeyPending = "NewKeyPending"
)

// Keys is the state of the Contract's key pair.
func (c *Contract) Keys() *KeyStatus { return &c.Status.KeyStatus }

// Rotation is how the Contract's key rotates (nil: only when asked), and the field that says so.
func (c *Contract) Rotation() (*KeyRotation, string) { return c.Spec.KeyRotation, "spec.keyRotation" }

// SecretFormats is what the Contract's Secret holds.
func (c *Contract) SecretFormats() []SecretFormat { return FormatsOrDefault(c.Spec.Formats) }
