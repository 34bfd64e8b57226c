package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// AccessMode is what a BucketAccess's key may do in its bucket.
// +kubebuilder:validation:Enum=ReadOnly;ReadWrite;WriteOnly
type AccessMode string

const (
	// AccessReadOnly lists the bucket and reads its objects; it cannot write or delete.
	AccessReadOnly AccessMode = "ReadOnly"
	// AccessReadWrite lists, reads, writes and deletes objects; it cannot change the bucket
	// itself (its ACL, policy or configuration) or touch another bucket.
	AccessReadWrite AccessMode = "ReadWrite"
	// AccessWriteOnly puts objects and never reads, lists or deletes them: what a backup job
	// should hold, so that a leaked key cannot read, list or delete earlier backups. It can
	// still overwrite an object whose name it knows; a versioned bucket keeps the old version.
	AccessWriteOnly AccessMode = "WriteOnly"
)

// KeyRotation says how often a BucketAccess gets a new key.
type KeyRotation struct {
	// period is how long a key is handed out before a new one replaces it, as a duration such
	// as "720h". At least one minute.
	// +required
	Period metav1.Duration `json:"period"`

	// overlap is how long the previous key keeps working after the new one is in the Secret,
	// so consumers that read it late do not fail. Shorter than period; defaults to a tenth of
	// period, at most one hour.
	// +optional
	Overlap *metav1.Duration `json:"overlap,omitempty"`
}

// Authentication is how a BucketAccess's workload proves who it is to the S3 server.
// +kubebuilder:validation:Enum=Key;ServiceAccount
type Authentication string

const (
	// AuthenticationKey: a principal of the account with a key pair of its own, written to the
	// Secret, rotated and revoked by the operator.
	AuthenticationKey Authentication = "Key"
	// AuthenticationServiceAccount: no key at all. The account trusts the cluster's
	// ServiceAccount token issuer, and a role that only spec.serviceAccountName's tokens assume
	// holds the grants; the workload exchanges its projected token at the provider's STS
	// (AssumeRoleWithWebIdentity) for credentials that expire by themselves. The Secret holds
	// the role's ARN and the endpoints, nothing secret.
	AuthenticationServiceAccount Authentication = "ServiceAccount"
)

// MaxAccessBuckets is the most Buckets one BucketAccess reaches (spec.buckets). Each adds a
// statement set to a bucket policy and three checks with the key to every verification; sixteen
// covers an application's buckets (COSI v1alpha2 puts no number on it) and keeps a pass's checks
// at 48 requests.
const MaxAccessBuckets = 16

// BucketName is the name of a Bucket in the BucketAccess's namespace.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be the name of a Bucket in this namespace: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
type BucketName string

// ObjectPrefix limits a key to the objects whose names start with it. In a bucket policy "$"
// starts a variable and "*", "?" are wildcards, so it may hold none of them, nor "..", nor a
// leading "/".
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="prefix may not contain '..'"
// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="prefix may not start with '/'"
// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="may not contain control characters (a newline, a tab, ...)"
// +kubebuilder:validation:XValidation:rule="!self.matches('[$*?]')",message="prefix may not contain '$', '*' or '?': in a bucket policy they are variables and wildcards"
type ObjectPrefix string

// AccessBucket is one Bucket of a BucketAccess over several (spec.buckets), with the access and
// prefix the key has there.
type AccessBucket struct {
	// name is the Bucket, in this namespace. All the Buckets of one BucketAccess belong to one
	// Contract: the key is a principal of that Contract's account.
	// +required
	Name BucketName `json:"name"`

	// access is what the key may do in this bucket: ReadOnly, ReadWrite or WriteOnly.
	// +required
	Access AccessMode `json:"access"`

	// prefix, when set, limits the key in this bucket to the objects whose names start with
	// it, as spec.prefix does for a single bucket.
	// +optional
	Prefix ObjectPrefix `json:"prefix,omitempty"`
}

// BucketAccessSpec asks for credentials that reach one Bucket (spec.bucket, spec.access,
// spec.prefix), or several Buckets of one Contract (spec.buckets), and only those. The single
// form is the shorthand of a one-item list; an object uses one form for its whole life.
// +kubebuilder:validation:XValidation:rule="has(self.bucket) != has(self.buckets)",message="name either spec.bucket (one Bucket) or spec.buckets (several), not both"
// +kubebuilder:validation:XValidation:rule="has(self.bucket) == has(self.access)",message="spec.access goes with spec.bucket; with spec.buckets each item says its access"
// +kubebuilder:validation:XValidation:rule="has(self.bucket) || !has(self.prefix)",message="spec.prefix goes with spec.bucket; with spec.buckets each item says its prefix"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.buckets) == has(self.buckets)",message="a BucketAccess keeps its form: spec.bucket cannot become spec.buckets or the reverse (make a new BucketAccess)"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.authentication) ? oldSelf.authentication : 'Key') == (has(self.authentication) ? self.authentication : 'Key')",message="spec.authentication cannot change: a key and a role are different credentials (make a new BucketAccess)"
// +kubebuilder:validation:XValidation:rule="(has(self.authentication) && self.authentication == 'ServiceAccount') || !has(self.serviceAccountName)",message="spec.serviceAccountName goes with spec.authentication: ServiceAccount"
// +kubebuilder:validation:XValidation:rule="!(has(self.authentication) && self.authentication == 'ServiceAccount') || has(self.serviceAccountName)",message="spec.authentication ServiceAccount needs spec.serviceAccountName: the ServiceAccount, in this namespace, whose tokens assume the role"
// +kubebuilder:validation:XValidation:rule="!(has(self.authentication) && self.authentication == 'ServiceAccount') || !has(self.formats) || self.formats.all(f, f == 'env')",message="with spec.authentication ServiceAccount the Secret holds only the env format: the other formats (aws-files, cosi, obc, rclone, s3cfg) are files of a key pair, and there is no key"
// +kubebuilder:validation:XValidation:rule="!(has(self.authentication) && self.authentication == 'ServiceAccount') || !has(self.rotation)",message="spec.rotation goes with spec.authentication Key: with ServiceAccount there is no key to rotate, the credentials STS returns expire by themselves"
type BucketAccessSpec struct {
	// bucket is the Bucket, in this namespace, the credentials are for. It cannot change.
	// Exactly one of bucket and buckets is set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'bucket cannot change (was ' + oldSelf + ')'"
	Bucket BucketName `json:"bucket,omitempty"`

	// access is what the credentials may do: ReadOnly, ReadWrite or WriteOnly. Set with
	// bucket, never with buckets.
	// +optional
	Access AccessMode `json:"access,omitempty"`

	// buckets are the Buckets, in this namespace and all of one Contract, one key reaches,
	// each with its own access and prefix (COSI v1alpha2's shape), at most 16, each named once.
	// Items can be added and removed: the key stays, and the bucket policies change (a removed
	// bucket refuses the key at once). Exactly one of bucket and buckets is set.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Buckets []AccessBucket `json:"buckets,omitempty"`

	// secretName is the Secret, in this namespace, that receives the credentials. Defaults to
	// "<name>-credentials". It cannot change.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",messageExpression="'secretName cannot change (was ' + oldSelf + ')'"
	SecretName string `json:"secretName,omitempty"`

	// prefix, when set, limits the key to the objects whose names start with it: it may list,
	// read, write and delete only under it, whatever its access (a listing must name a prefix
	// under it). "backups/web/" for one folder. It may not contain "..", "$", "*" or "?", nor
	// start with "/". The Secret's formats carry it (BUCKET_PREFIX). Where the S3 server does
	// not enforce it, the key is not handed out (Ready=False, PrefixUnsupported).
	// Set with bucket, never with buckets.
	// +optional
	Prefix ObjectPrefix `json:"prefix,omitempty"`

	// formats are the shapes the Secret holds the credentials in, several at once: env (the
	// AWS_* variables, BUCKET_NAME and BUCKET_PREFIX), aws-files (credentials and config files
	// for the AWS CLI and SDKs), cosi (COSI's BucketInfo and COSI_S3_* keys), obc (Rook's
	// ObjectBucketClaim keys, also in a ConfigMap of the same name, without the key), rclone
	// (rclone.conf) and s3cfg (s3cmd's .s3cfg). Defaults to [env]. A rotation rewrites them all
	// at once.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:default={env}
	Formats []SecretFormat `json:"formats,omitempty"`

	// authentication is how the workload proves who it is: Key (the default) writes a key pair
	// of a principal of its own to the Secret; ServiceAccount writes no key at all, only the
	// ARN of a role that the tokens of spec.serviceAccountName assume at the provider's STS
	// (docs/bucketaccess.md, "No key at all"). It cannot change. With ServiceAccount, formats
	// is [env] only and rotation is not set.
	// +optional
	// +kubebuilder:default=Key
	Authentication Authentication `json:"authentication,omitempty"`

	// serviceAccountName is the ServiceAccount, in this namespace, whose tokens assume the
	// role: set with authentication ServiceAccount, never with Key. A role trusts exactly one
	// ServiceAccount of exactly this namespace (its token's subject,
	// system:serviceaccount:<namespace>:<name>). It can change; the role then trusts the new one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be the name of a ServiceAccount in this namespace: a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// rotation, when set, replaces the key every period. Without it a key is replaced only when
	// the annotation storage.osm.dev/rotate-key changes value, or when the Secret loses it, and
	// the old key then keeps working for ten minutes. The KeyRotation condition says where a
	// rotation stands.
	// +optional
	Rotation *KeyRotation `json:"rotation,omitempty"`
}

// KeyStatus is a resource's key pair as the operator issued it: the key in the Secret, a
// rotation under way, and the keys it replaced that still work. Each step of a rotation is
// written here before the step that depends on it, so a pass that stops anywhere is finished by
// the next; the Secret is written from it, never read back as the truth.
type KeyStatus struct {
	// accessKeyID is the public half of the key in the Secret.
	// +optional
	AccessKeyID string `json:"accessKeyID,omitempty"`

	// keyIssuedAt is when that key was written to the Secret.
	// +optional
	KeyIssuedAt *metav1.Time `json:"keyIssuedAt,omitempty"`

	// keysIssued counts the keys rotation has issued so far; it names the next rotation.
	// +optional
	KeysIssued int32 `json:"keysIssued,omitempty"`

	// pendingKey is a rotation under way: a new key that is not in the Secret yet. It is
	// recorded before the provider is asked, so a lost answer is asked for again with the same
	// idempotency key rather than issuing a second key.
	// +optional
	PendingKey *PendingKey `json:"pendingKey,omitempty"`

	// retiringKeys are replaced keys that still work until their time is up; then the
	// operator revokes them.
	// +optional
	// +listType=atomic
	RetiringKeys []RetiringKey `json:"retiringKeys,omitempty"`

	// rotatedFor is the last value of the rotate-key annotation that was acted on.
	// +optional
	RotatedFor string `json:"rotatedFor,omitempty"`
}

// RetiringKey is a key that was replaced and still works until revokeAfter.
type RetiringKey struct {
	// accessKeyID is the key's public half.
	AccessKeyID string `json:"accessKeyID"`
	// revokeAfter is when the operator revokes it.
	RevokeAfter metav1.Time `json:"revokeAfter"`
}

// PendingKey is a key being issued: recorded before the provider is asked, so a lost answer is
// asked for again with the same idempotency key rather than issuing a second key.
type PendingKey struct {
	// idempotencyKey is what the provider is asked with.
	IdempotencyKey string `json:"idempotencyKey"`
	// accessKeyID is the key's public half, once the provider has answered.
	// +optional
	AccessKeyID string `json:"accessKeyID,omitempty"`
	// trigger is the value of the rotate-key annotation this rotation answers, if any.
	// +optional
	Trigger string `json:"trigger,omitempty"`
}

// BucketAccessStatus is what the operator issued and checked.
type BucketAccessStatus struct {
	// bucketName is the S3 bucket the credentials reach.
	// +optional
	BucketName string `json:"bucketName,omitempty"`

	// secretName is the Secret that holds the credentials.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// principalRequested is set before the provider is first asked for this BucketAccess's
	// principal (with authentication ServiceAccount: its role), so a deletion finds a
	// principal or a role whose answer was lost.
	// +optional
	PrincipalRequested bool `json:"principalRequested,omitempty"`

	// contractID is the provider's contract whose account holds the principal, recorded with
	// principalRequested, so the principal can be deleted even when the Bucket is gone.
	// +optional
	ContractID string `json:"contractID,omitempty"`

	// principalID is the provider's identifier of the principal that holds the keys.
	// +optional
	PrincipalID string `json:"principalID,omitempty"`

	// policyPrincipal is how the Bucket's policy names the principal, as the provider reports
	// it; the Bucket's controller adds a statement for it.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	PolicyPrincipal *runtime.RawExtension `json:"policyPrincipal,omitempty"`

	// roleARN is the role the tokens of spec.serviceAccountName assume, with authentication
	// ServiceAccount, as the provider named it; the Secret's AWS_ROLE_ARN.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	RoleARN string `json:"roleARN,omitempty"`

	// buckets says, for a BucketAccess over several Buckets (spec.buckets), what the key was
	// found to reach in each, in the order of spec.buckets; a bucket taken out of spec.buckets
	// stays here, Revoked=true, until its policy no longer names the key. Empty for the single
	// form, whose status.bucketName and conditions say the same.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Buckets []AccessBucketStatus `json:"buckets,omitempty"`

	// The key in the Secret, a rotation under way, and the replaced keys still working.
	KeyStatus `json:",inline"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, AccessVerified with what the key itself was checked to do, and
	// KeyRotation once a rotation is asked for.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AccessBucketStatus is what a BucketAccess's key was found to reach in one of its Buckets.
type AccessBucketStatus struct {
	// name is the Bucket, in the BucketAccess's namespace.
	// +required
	Name string `json:"name"`

	// bucketName is the S3 bucket it stands for, once known.
	// +optional
	BucketName string `json:"bucketName,omitempty"`

	// access and prefix are what the key is granted there, as spec.buckets said when it was
	// last checked.
	// +optional
	Access AccessMode `json:"access,omitempty"`
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// revoked is true for a Bucket taken out of spec.buckets: its policy is to stop naming
	// the key, and the key was checked to be refused there.
	// +optional
	Revoked bool `json:"revoked,omitempty"`

	// verified is True when the key itself was checked to do here what access allows and,
	// under a prefix, nothing outside it; False with reason and message otherwise; Unknown
	// before the first check.
	// +optional
	Verified metav1.ConditionStatus `json:"verified,omitempty"`

	// reason is one CamelCase word: why verified is what it is (Verified, PolicyPending,
	// BucketNotFound, ContractMismatch, ...).
	// +optional
	Reason string `json:"reason,omitempty"`

	// message says the same for people, with what the key was checked to do.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=osm
// +kubebuilder:printcolumn:name="Bucket",type=string,JSONPath=`.spec.bucket`
// +kubebuilder:printcolumn:name="Access",type=string,JSONPath=`.spec.access`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.secretName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Verified",type=string,JSONPath=`.status.conditions[?(@.type=="AccessVerified")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:selectablefield:JSONPath=`.spec.bucket`

// BucketAccess is a set of credentials that reach one Bucket with the access its spec names,
// held by a principal of the Bucket's Contract's account that has no rights of its own: every
// right comes from a statement the operator adds to the bucket's policy.
type BucketAccess struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user asks for.
	// +required
	Spec BucketAccessSpec `json:"spec"`

	// status is what the controller issued and observed.
	// +optional
	Status BucketAccessStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BucketAccessList is a list of BucketAccesses.
type BucketAccessList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BucketAccess `json:"items"`
}

// SecretNameOrDefault is the Secret that receives the credentials.
func (a *BucketAccess) SecretNameOrDefault() string {
	if a.Spec.SecretName != "" {
		return a.Spec.SecretName
	}
	return a.Name + "-credentials"
}

// DefaultKeyOverlap is how long a replaced key keeps working when no rotation says: long enough
// for Buckets to move to a Contract's new key and for Applications to roll out with it.
const DefaultKeyOverlap = 10 * time.Minute

// KeyOverlap is how long a key replaced under rotation r keeps working: r's overlap, by default
// a tenth of its period but at most an hour, and DefaultKeyOverlap without a rotation (a
// replacement the rotate-key annotation or a lost Secret asked for).
func KeyOverlap(r *KeyRotation) time.Duration {
	switch {
	case r == nil:
		return DefaultKeyOverlap
	case r.Overlap != nil:
		return r.Overlap.Duration
	}
	return min(r.Period.Duration/10, time.Hour)
}

// Keys and labels of a BucketAccess's Secret, beyond the AWS_* keys of a Contract's.
const (
	// SecretKeyBucketName holds the bucket's name, so a client needs nothing else.
	SecretKeyBucketName = "BUCKET_NAME"
	// SecretKeyBucketPrefix holds spec.prefix, when it is set.
	SecretKeyBucketPrefix = "BUCKET_PREFIX"
	// BucketAccessLabel is set on a BucketAccess's Secret with the BucketAccess's name.
	BucketAccessLabel = "storage.osm.dev/bucket-access"
	// RotateKeyAnnotation on a BucketAccess: a new value asks for a new key now.
	RotateKeyAnnotation = "storage.osm.dev/rotate-key"
	// SecretKeyRoleARN holds, with authentication ServiceAccount, the role to assume.
	SecretKeyRoleARN = "AWS_ROLE_ARN"
	// SecretKeyEndpointSTS holds the STS endpoint: the Go SDK builds its STS client before it
	// reads AWS_ENDPOINT_URL, so it needs its own.
	SecretKeyEndpointSTS = "AWS_ENDPOINT_URL_STS"
	// SecretKeyTokenAudience holds the audience the ServiceAccount token must be minted for
	// (a projected volume's serviceAccountToken.audience). No SDK reads it: it is for the
	// workload's manifest, and for tools that request the token themselves.
	SecretKeyTokenAudience = "OSM_TOKEN_AUDIENCE"
	// ReleasedAnnotation on a BucketAccess made for another resource (its controller, an
	// Application) holds that resource's UID once it no longer needs the key: deleting the
	// BucketAccess then revokes it at once, instead of waiting for the resource to go.
	ReleasedAnnotation = "storage.osm.dev/released-by"
)

// Conditions and reasons of a BucketAccess.
const (
	// AccessVerifiedCondition is True when the key in the Secret was checked, with itself,
	// to do what its access allows and, where it matters, refused what it does not.
	AccessVerifiedCondition = "AccessVerified"

	// ReasonBucketNotFound: the BucketAccess names a Bucket that does not exist in its namespace.
	ReasonBucketNotFound = "BucketNotFound"
	// ReasonBucketNotReady: the Bucket exists but is not Ready, so its policy cannot carry
	// the access yet.
	ReasonBucketNotReady = "BucketNotReady"
	// ReasonVerified: the key did what its access allows and was refused what it does not.
	ReasonVerified = "Verified"
	// ReasonPolicyPending: the key works but the bucket's policy does not grant it yet.
	ReasonPolicyPending = "PolicyPending"
	// ReasonAccessMismatch: the key could do something its access does not allow (or could
	// not do what it should), so it is not handed out.
	ReasonAccessMismatch = "AccessMismatch"
	// ReasonPrincipalsUnsupported: the provider cannot make principals for this contract.
	ReasonPrincipalsUnsupported = "PrincipalsUnsupported"
	// ReasonPrefixUnsupported: the key can reach objects outside spec.prefix: the S3 server
	// does not enforce the policy's prefix condition (or the bucket's ACL or policy allows
	// more), so the key is not handed out.
	ReasonPrefixUnsupported = "PrefixUnsupported"
	// ReasonContractMismatch: a Bucket of spec.buckets belongs to another Contract than the
	// others; one key is a principal of one account, so it cannot reach it.
	ReasonContractMismatch = "ContractMismatch"
	// ReasonAuthenticationUnsupported: authentication ServiceAccount cannot be served: the
	// manager has no OIDC issuer configured, or the provider has no STS for this contract.
	ReasonAuthenticationUnsupported = "AuthenticationUnsupported"
	// ReasonPrincipalLost: the provider no longer has the BucketAccess's principal (deleted
	// outside the operator); deleting and re-creating the BucketAccess issues new credentials.
	ReasonPrincipalLost = "PrincipalLost"
)

// Keys is the state of the BucketAccess's key pair.
func (a *BucketAccess) Keys() *KeyStatus { return &a.Status.KeyStatus }

// Rotation is how the BucketAccess's key rotates (nil: only when asked), and the field that
// says so.
func (a *BucketAccess) Rotation() (*KeyRotation, string) { return a.Spec.Rotation, "spec.rotation" }

// SecretFormats is what the BucketAccess's Secret holds.
func (a *BucketAccess) SecretFormats() []SecretFormat { return FormatsOrDefault(a.Spec.Formats) }

// EnvNameOf is how environment variable names spell a Bucket's name: upper case, every character
// other than A-Z and 0-9 replaced by "_", "B_" in front when it would start with a digit.
// "photos" gives "PHOTOS", "user-uploads" "USER_UPLOADS", "2024.logs" "B_2024_LOGS". Different
// names can give the same ("a-b" and "a.b"): admission refuses such a pair where both would be
// written. An Application's default envPrefix is this and "_"; a BucketAccess over several
// Buckets names BUCKET_NAME_<this> and BUCKET_PREFIX_<this> in its Secret.
func EnvNameOf(bucket string) string {
	if bucket == "" {
		return ""
	}
	out := make([]byte, 0, len(bucket)+2)
	if bucket[0] >= '0' && bucket[0] <= '9' {
		out = append(out, "B_"...)
	}
	for _, r := range bucket {
		switch {
		case r >= 'a' && r <= 'z':
			out = append(out, byte(r-'a'+'A'))
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			out = append(out, byte(r))
		default:
			out = append(out, '_')
		}
	}
	return string(out)
}

// AccessBuckets are the Buckets the key reaches, with their access and prefix: spec.buckets, or
// the one-item list spec.bucket, spec.access and spec.prefix are the shorthand of.
func (a *BucketAccess) AccessBuckets() []AccessBucket {
	if len(a.Spec.Buckets) > 0 {
		return a.Spec.Buckets
	}
	if a.Spec.Bucket == "" {
		return nil
	}
	return []AccessBucket{{Name: a.Spec.Bucket, Access: a.Spec.Access, Prefix: a.Spec.Prefix}}
}

// Keyless says whether the BucketAccess uses authentication ServiceAccount: a role, no key.
func (a *BucketAccess) Keyless() bool { return a.Spec.Authentication == AuthenticationServiceAccount }

// MultiBucket says whether the BucketAccess uses the list form (spec.buckets).
func (a *BucketAccess) MultiBucket() bool { return len(a.Spec.Buckets) > 0 }

// AccessBucketNamed is the item of AccessBuckets for Bucket name, and whether there is one.
func (a *BucketAccess) AccessBucketNamed(name string) (AccessBucket, bool) {
	for _, b := range a.AccessBuckets() {
		if string(b.Name) == name {
			return b, true
		}
	}
	return AccessBucket{}, false
}
