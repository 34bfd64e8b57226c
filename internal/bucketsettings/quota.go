package bucketsettings

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// Provider is the bucket's provider through the contract API, for what it enforces beyond S3.
// A provider that cannot (versitygw, a Contract of an existing account) answers an error that
// is contractclient.ErrNotSupported.
type Provider interface {
	// Quota is the quota the provider enforces on bucket now; the zero value is none.
	Quota(ctx context.Context, bucket string) (storagev1alpha1.ObservedQuota, error)
	// SetQuota makes the provider enforce q on bucket; the zero value removes the quota.
	SetQuota(ctx context.Context, bucket string, q storagev1alpha1.ObservedQuota) error
}

// Quota is the bucket's quota, enforced by the provider (spec.quota), not by S3: read and
// written through Input.Provider. The provider may round a size to its unit (RGW: KiB); what it
// showed after the write counts as the spec from then on, as for any setting.
type Quota struct{}

func (Quota) Info() Info {
	return Info{Field: "quota", Title: "a bucket quota", Event: "Quota", Unsupported: storagev1alpha1.ReasonQuotaUnsupported}
}

func (Quota) Wanted(in *Input) bool { return in.Bucket.Spec.Quota != nil }

func (Quota) Observe(ctx context.Context, in *Input) (storagev1alpha1.ObservedQuota, error) {
	if in.Provider == nil {
		return storagev1alpha1.ObservedQuota{}, errNoProvider
	}
	return in.Provider.Quota(ctx, in.Name())
}

// errNoProvider: the pass has no provider to ask.
var errNoProvider = fmt.Errorf("no contract API enforces quotas for this bucket (its Contract is an account of its own, spec.credentials): %w", contractclient.ErrNotSupported)

// Unsupported: the provider says it cannot enforce quotas.
func (Quota) Unsupported(err error) bool { return errors.Is(err, contractclient.ErrNotSupported) }

// Desired is the spec's quota, a size in bytes (a quantity rounds up).
func (Quota) Desired(in *Input, _ storagev1alpha1.ObservedQuota) storagev1alpha1.ObservedQuota {
	return WantedQuota(in.Bucket.Spec.Quota)
}

// WantedQuota is the limits spec asks for; the zero value for none.
func WantedQuota(spec *storagev1alpha1.BucketQuota) storagev1alpha1.ObservedQuota {
	var q storagev1alpha1.ObservedQuota
	if spec == nil {
		return q
	}
	if spec.MaxSize != nil {
		q.MaxSizeBytes = spec.MaxSize.Value()
	}
	if spec.MaxObjects != nil {
		q.MaxObjects = *spec.MaxObjects
	}
	return q
}

func (Quota) Equal(a, b storagev1alpha1.ObservedQuota) bool { return a == b }

func (Quota) Write(ctx context.Context, in *Input, q storagev1alpha1.ObservedQuota) error {
	if in.Provider == nil {
		return errNoProvider
	}
	return in.Provider.SetQuota(ctx, in.Name(), q)
}

func (Quota) Describe(in *Input, q storagev1alpha1.ObservedQuota) string {
	return fmt.Sprintf("Set the quota of bucket %s to %s", in.Name(), DescribeQuota(q))
}

// DescribeQuota says what a quota allows: "10Gi and 1000 objects".
func DescribeQuota(q storagev1alpha1.ObservedQuota) string {
	var parts []string
	if q.MaxSizeBytes > 0 {
		parts = append(parts, resource.NewQuantity(q.MaxSizeBytes, resource.BinarySI).String())
	}
	if q.MaxObjects > 0 {
		parts = append(parts, plural(int(q.MaxObjects), "object"))
	}
	if len(parts) == 0 {
		return "no limit"
	}
	return strings.Join(parts, " and ")
}

func (Quota) Recorded(in *Input) (storagev1alpha1.ObservedQuota, bool) {
	if in.Bucket.Status.Quota == nil {
		return storagev1alpha1.ObservedQuota{}, false
	}
	return *in.Bucket.Status.Quota, true
}

func (Quota) Record(_ *Input, st *storagev1alpha1.BucketStatus, q storagev1alpha1.ObservedQuota, ok bool) {
	st.Quota = nil
	if ok {
		st.Quota = &q
	}
}

// Remove lifts the quota the spec no longer sets.
func (Quota) Remove(ctx context.Context, in *Input) error {
	if in.Provider == nil {
		return errNoProvider
	}
	return in.Provider.SetQuota(ctx, in.Name(), storagev1alpha1.ObservedQuota{})
}

func (Quota) Removed(in *Input) string {
	return fmt.Sprintf("Removed the quota of bucket %s", in.Name())
}
