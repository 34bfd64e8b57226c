package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultNearlyFullPercent is the share of a quota past which a Bucket is QuotaNearlyFull.
const DefaultNearlyFullPercent = 90

// QuotaNearlyFullCondition on a Bucket with a quota is True once the bucket holds more than
// nearlyFullPercent of its maxSize or maxObjects, so that `kubectl wait` and alerts can act
// before the provider refuses writes.
const QuotaNearlyFullCondition = "QuotaNearlyFull"

// Reasons of QuotaNearlyFull, and of Ready for a quota the provider cannot enforce.
const (
	// ReasonQuotaNearlyFull: the bucket holds more than nearlyFullPercent of its quota.
	ReasonQuotaNearlyFull = "QuotaNearlyFull"
	// ReasonBelowThreshold: the bucket holds less than nearlyFullPercent of its quota.
	ReasonBelowThreshold = "BelowThreshold"
	// ReasonUsageUnsupported: the provider cannot tell what the bucket holds (versitygw keeps no
	// usage counters, a Contract of an existing account has no provider to ask), so status.usage
	// stays empty and a quota's fill is unknown.
	ReasonUsageUnsupported = "UsageUnsupported"
	// ReasonQuotaUnsupported: the provider cannot enforce spec.quota (versitygw, a Contract of
	// an existing account); the rest of the spec is applied.
	ReasonQuotaUnsupported = "QuotaUnsupported"
)

// BucketQuota is the most a bucket may hold; the provider refuses writes past it.
// +kubebuilder:validation:XValidation:rule="has(self.maxSize) || has(self.maxObjects)",message="a quota needs maxSize, maxObjects or both"
type BucketQuota struct {
	// maxSize is the most bytes the bucket's objects may hold, as a quantity: 10Gi, 500M.
	// Ceph RGW counts it in whole KiB, so it is rounded up to one.
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="maxSize must be more than 0"
	MaxSize *resource.Quantity `json:"maxSize,omitempty"`

	// maxObjects is the most objects the bucket may hold.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxObjects *int64 `json:"maxObjects,omitempty"`

	// nearlyFullPercent is the share of maxSize or maxObjects past which the QuotaNearlyFull
	// condition turns True (and an event says so). Defaults to 90.
	// +optional
	// +kubebuilder:default=90
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	NearlyFullPercent int32 `json:"nearlyFullPercent,omitempty"`
}

// BucketUsage is what a bucket holds, as its provider counts it.
type BucketUsage struct {
	// bytes its objects hold.
	// +required
	Bytes int64 `json:"bytes"`

	// objects it holds.
	// +required
	Objects int64 `json:"objects"`

	// size is bytes for people, in binary units (5.9Ki, 12Gi).
	// +required
	Size string `json:"size"`

	// observedAt is when the provider first reported these figures. They are asked for once
	// a resync period, and status changes only when they do, so an idle bucket costs no write.
	// +required
	ObservedAt metav1.Time `json:"observedAt"`
}

// ObservedQuota is a bucket's quota as the provider enforces it; 0 is no limit.
type ObservedQuota struct {
	// maxSizeBytes is the size limit in bytes, as the provider rounded it.
	// +optional
	MaxSizeBytes int64 `json:"maxSizeBytes,omitempty"`

	// maxObjects is the object limit.
	// +optional
	MaxObjects int64 `json:"maxObjects,omitempty"`
}

// ContractUsage is what the Buckets naming a Contract hold together, from their status.
type ContractUsage struct {
	// bytes their objects hold.
	// +required
	Bytes int64 `json:"bytes"`

	// objects they hold.
	// +required
	Objects int64 `json:"objects"`

	// size is bytes for people, in binary units.
	// +required
	Size string `json:"size"`

	// buckets is how many Buckets the sum counts: those whose usage is known.
	// +required
	Buckets int32 `json:"buckets"`
}
