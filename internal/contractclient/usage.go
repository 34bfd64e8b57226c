package contractclient

import (
	"context"
	"fmt"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// Usage is what the Bucket controller asks the provider about the buckets of a contract: what
// each holds, for all of them in one call, and the quota the provider enforces on one. A
// provider that cannot answers ErrNotSupported.
type Usage interface {
	// BucketUsage reads the usage and quota of every bucket the account of contractID owns.
	BucketUsage(ctx context.Context, contractID string) (ContractUsage, error)
	// SetBucketQuota makes the provider enforce q on one bucket of the account (ErrNotFound
	// when the account has no such bucket) and returns the quota as the provider now enforces
	// it, which may be rounded to the provider's units.
	SetBucketQuota(ctx context.Context, contractID, bucket string, q Quota) (Quota, error)
}

// ContractUsage is the provider's answer for every bucket of a contract, by bucket name.
type ContractUsage struct {
	Buckets map[string]BucketUsage
	// ObservedAt is when the provider read its counters.
	ObservedAt time.Time
}

// BucketUsage is what one bucket holds, and its quota.
type BucketUsage struct {
	Bytes, Objects int64
	Quota          Quota
}

// Quota is the limits the provider enforces on a bucket; 0 is no limit.
type Quota struct {
	MaxSizeBytes, MaxObjects int64
}

var _ Usage = (*Client)(nil)

// BucketUsage implements Usage.
func (c *Client) BucketUsage(ctx context.Context, contractID string) (ContractUsage, error) {
	op := fmt.Sprintf("reading the usage of contract %s", contractID)
	resp, err := c.gen.GetUsageWithResponse(ctx, contractID, sendTenant)
	if err != nil {
		return ContractUsage{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "usage"), resp.HTTPResponse, resp.Body); err != nil {
		return ContractUsage{}, err
	}
	got := resp.JSON200
	if got == nil {
		return ContractUsage{}, noBody(op, resp.StatusCode(), "the usage")
	}
	out := ContractUsage{Buckets: make(map[string]BucketUsage, len(got.Buckets)), ObservedAt: got.ObservedAt}
	for _, b := range got.Buckets {
		out.Buckets[b.Name] = BucketUsage{Bytes: b.Bytes, Objects: b.Objects, Quota: fromQuota(b.Quota)}
	}
	return out, nil
}

// SetBucketQuota implements Usage.
func (c *Client) SetBucketQuota(ctx context.Context, contractID, bucket string, q Quota) (Quota, error) {
	op := fmt.Sprintf("setting the quota of bucket %s of contract %s", bucket, contractID)
	var body contractapi.BucketQuota
	if q.MaxSizeBytes > 0 {
		body.MaxSizeBytes = &q.MaxSizeBytes
	}
	if q.MaxObjects > 0 {
		body.MaxObjects = &q.MaxObjects
	}
	resp, err := c.gen.SetBucketQuotaWithResponse(ctx, contractID, bucket, body, sendTenant)
	if err != nil {
		return Quota{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "buckets", bucket, "quota"), resp.HTTPResponse, resp.Body); err != nil {
		return Quota{}, err
	}
	if resp.JSON200 == nil {
		return Quota{}, noBody(op, resp.StatusCode(), "a quota")
	}
	return fromQuota(*resp.JSON200), nil
}

func fromQuota(q contractapi.BucketQuota) Quota {
	var out Quota
	if q.MaxSizeBytes != nil {
		out.MaxSizeBytes = *q.MaxSizeBytes
	}
	if q.MaxObjects != nil {
		out.MaxObjects = *q.MaxObjects
	}
	return out
}
