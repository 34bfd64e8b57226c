package contractserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/ceph/go-ceph/rgw/admin"
)

var _ UsageBackend = (*RGWBackend)(nil)

// BucketUsage reads the stats of every bucket of the contract's user in one admin call (RGW's
// `radosgw-admin bucket stats --uid`): its counters, kept as objects are written, never a
// listing. A user that does not exist owns no buckets.
func (b *RGWBackend) BucketUsage(ctx context.Context, account string) ([]BucketUsage, error) {
	uid := rgwAccountOf(account).uid()
	buckets, err := b.api.ListUsersBucketsWithStat(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("reading the bucket stats of rgw user %q: %w", uid, redact(err))
	}
	out := make([]BucketUsage, 0, len(buckets))
	for _, bk := range buckets {
		u := BucketUsage{Name: bk.Bucket, Bytes: counter(bk.Usage.RgwMain.Size), Objects: counter(bk.Usage.RgwMain.NumObjects)}
		if q := bk.BucketQuota; q.Enabled != nil && *q.Enabled {
			u.Quota = BucketQuota{MaxSizeBytes: limit(q.MaxSize), MaxObjects: limit(q.MaxObjects)}
		}
		out = append(out, u)
	}
	return out, nil
}

// SetBucketQuota sets the bucket quota of one of the user's buckets; no limit at all disables
// it. The user's buckets are listed first, so a bucket of another user is never touched.
func (b *RGWBackend) SetBucketQuota(ctx context.Context, account, bucket string, q BucketQuota) error {
	uid := rgwAccountOf(account).uid()
	owned, err := b.api.ListUsersBuckets(ctx, uid)
	if err != nil {
		return fmt.Errorf("listing the buckets of rgw user %q: %w", uid, redact(err))
	}
	if !slices.Contains(owned, bucket) {
		return fmt.Errorf("rgw user %q, bucket %q: %w", uid, bucket, ErrNoSuchBucket)
	}
	// RGW takes -1 for no limit, and a size in KiB: Pacific reads max-size-kb alone, later
	// releases let it win over max-size. So a size limit is rounded up to a whole KiB.
	enabled, maxSize, maxSizeKB, maxObjects := q != (BucketQuota{}), int64(-1), -1, int64(-1)
	if q.MaxSizeBytes > 0 {
		maxSize, maxSizeKB = q.MaxSizeBytes, int((q.MaxSizeBytes+1023)/1024)
	}
	if q.MaxObjects > 0 {
		maxObjects = q.MaxObjects
	}
	err = b.api.SetIndividualBucketQuota(ctx, admin.QuotaSpec{UID: uid, Bucket: bucket, Enabled: &enabled,
		MaxSize: &maxSize, MaxSizeKb: &maxSizeKB, MaxObjects: &maxObjects})
	if err != nil {
		return fmt.Errorf("setting the quota of bucket %q of rgw user %q: %w", bucket, uid, redact(err))
	}
	return nil
}

// counter is an RGW counter, 0 when it is absent (an empty bucket has no rgw.main).
func counter(v *uint64) int64 {
	if v == nil {
		return 0
	}
	return int64(*v) // #nosec G115 -- byte and object counts are far below 2^63
}

// limit is an RGW quota limit, 0 (none) when it is absent or negative.
func limit(v *int64) int64 {
	if v == nil || *v < 0 {
		return 0
	}
	return *v
}
