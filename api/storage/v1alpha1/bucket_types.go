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
	// leaves it (Retain, the default). A bucket that still holds objects is never emptied: its
	// deletion waits, and the DeletionBlocked condition says why.
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
	// finished by the next, and a deletion finds the bucket. It lives in status, which only the
	// operator writes: a user cannot make it adopt someone else's untagged bucket.
	// +optional
	CreatingBucket string `json:"creatingBucket,omitempty"`

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
