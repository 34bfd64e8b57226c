package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/keylock"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
)

// providerUsage is the provider's last answer about the buckets of each contract: one contract
// API call answers for all the Buckets of a Contract, and is asked again only once it is older
// than a resync period, so a thousand Buckets over ten Contracts cost ten calls a period. A
// provider's "not supported" is kept as long; any other failure is not kept.
type providerUsage struct {
	api     contractclient.Usage
	answers ttlcache.Cache[string, usageAnswer]
	// asking lets one pass per contract ask while the others wait for its answer.
	asking keylock.Map
}

type usageAnswer struct {
	usage contractclient.ContractUsage
	err   error
}

// read answers the usage of every bucket of contractID, no older than maxAge.
func (u *providerUsage) read(ctx context.Context, contractID string, maxAge time.Duration) (contractclient.ContractUsage, error) {
	if a, _, ok := u.answers.Get(contractID, maxAge); ok {
		return a.usage, a.err
	}
	defer u.asking.Lock(contractID)()
	if a, _, ok := u.answers.Get(contractID, maxAge); ok {
		return a.usage, a.err
	}
	got, err := u.api.BucketUsage(ctx, contractID)
	if err == nil || errors.Is(err, contractclient.ErrNotSupported) {
		u.answers.Put(contractID, usageAnswer{got, err})
	}
	return got, err
}

// contractProvider is the bucketsettings.Provider of the Buckets of one contract.
type contractProvider struct {
	usage      *providerUsage
	contractID string
	maxAge     time.Duration
}

// Quota is the quota the provider reports with the usage; a bucket it does not list yet (made
// after the answer) has none.
func (p contractProvider) Quota(ctx context.Context, bucket string) (storagev1alpha1.ObservedQuota, error) {
	got, err := p.usage.read(ctx, p.contractID, p.maxAge)
	if err != nil {
		return storagev1alpha1.ObservedQuota{}, err
	}
	q := got.Buckets[bucket].Quota
	return storagev1alpha1.ObservedQuota{MaxSizeBytes: q.MaxSizeBytes, MaxObjects: q.MaxObjects}, nil
}

// SetQuota sets the quota and forgets the contract's answer, so the read back asks again.
func (p contractProvider) SetQuota(ctx context.Context, bucket string, q storagev1alpha1.ObservedQuota) error {
	defer p.usage.answers.Delete(p.contractID)
	_, err := p.usage.api.SetBucketQuota(ctx, p.contractID, bucket, contractclient.Quota{MaxSizeBytes: q.MaxSizeBytes, MaxObjects: q.MaxObjects})
	return err
}

// provider is the provider of the Buckets of contract; nil when there is none to ask.
func (k bucketKind) provider(contract *storagev1alpha1.Contract) *contractProvider {
	if k.Usage == nil || contract.Status.ContractID == "" {
		return nil
	}
	return &contractProvider{usage: &k.usage, contractID: contract.Status.ContractID, maxAge: k.ResyncPeriod}
}

// observeUsage records in status what the provider says the bucket holds. Status changes only
// when the figures do. A failure to ask is no failure of the Bucket: status keeps what it
// showed, and the next resync asks again.
func (k bucketKind) observeUsage(ctx context.Context, b *storagev1alpha1.Bucket, p *contractProvider) usageFinding {
	if p == nil {
		return usageUnsupported{"its Contract is an account of its own (spec.credentials), with no contract API to ask"}
	}
	got, err := p.usage.read(ctx, p.contractID, p.maxAge)
	switch {
	case errors.Is(err, contractclient.ErrNotSupported):
		b.Status.Usage = nil
		return usageUnsupported{"the provider keeps no usage counters"}
	case err != nil:
		return nil
	}
	u := got.Buckets[b.Status.BucketName]
	if old := b.Status.Usage; old == nil || old.Bytes != u.Bytes || old.Objects != u.Objects {
		b.Status.Usage = &storagev1alpha1.BucketUsage{Bytes: u.Bytes, Objects: u.Objects, Size: humanBytes(u.Bytes),
			ObservedAt: metav1.NewTime(got.ObservedAt)}
	}
	return usageKnown{}
}

// humanBytes is n in binary units with one decimal: 512, 5.9Ki, 12.0Gi.
func humanBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f%ci", v, units[i])
}

func isAPIError(err error) bool {
	_, ok := contractclient.AsError(err)
	return ok
}

// endOnAPIFailure ends a pass on a failed contract API call.
func endOnAPIFailure(found bucketFound, err error) bucketOutcome {
	apiErr, after, err := engine.APIFailure(err)
	return found.end(providerFailed{apiErr}, after, err)
}
