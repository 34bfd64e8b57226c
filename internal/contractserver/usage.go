package contractserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// BucketUsage is what one bucket of an account holds, and the quota enforced on it.
type BucketUsage struct {
	Name           string
	Bytes, Objects int64
	Quota          BucketQuota
}

// BucketQuota is a bucket's limits; 0 is no limit.
type BucketQuota struct {
	MaxSizeBytes, MaxObjects int64
}

// ErrNoSuchBucket is returned by SetBucketQuota for a bucket the account does not own.
var ErrNoSuchBucket = errors.New("the account owns no such bucket")

// UsageBackend is implemented by a backend that can tell what each bucket of an account holds,
// from counters of its own (never by listing objects), and enforce a quota per bucket. A
// backend without it answers both calls 501 not-supported.
type UsageBackend interface {
	// BucketUsage answers for every bucket the account of contractID owns, in one go.
	BucketUsage(ctx context.Context, contractID string) ([]BucketUsage, error)
	// SetBucketQuota makes the backend enforce q on bucket, a bucket of the account
	// (ErrNoSuchBucket otherwise). Idempotent.
	SetBucketQuota(ctx context.Context, contractID, bucket string, q BucketQuota) error
}

// GetUsage answers the usage of every bucket of a contract. A cancelled contract owns none.
func (s *Server) GetUsage(ctx context.Context, req contractapi.GetUsageRequestObject) (contractapi.GetUsageResponseObject, error) {
	ub, rec, err := s.usageOf(req.Id, false)
	if err != nil {
		return nil, err
	}
	answer := contractapi.GetUsage200JSONResponse{Buckets: []contractapi.BucketUsage{}, ObservedAt: now()}
	if rec.State == stateCancelled {
		return answer, nil
	}
	bctx, cancel := context.WithTimeout(ctx, BackendTimeout)
	defer cancel()
	usage, err := ub.BucketUsage(bctx, rec.account())
	if err != nil {
		return nil, backendProblem("reading the usage", fmt.Errorf("reading the usage of contract %s: %w", rec.ID, err))
	}
	for _, u := range usage {
		answer.Buckets = append(answer.Buckets, contractapi.BucketUsage{Name: u.Name, Bytes: u.Bytes, Objects: u.Objects,
			Quota: toAPIQuota(u.Quota)})
	}
	return answer, nil
}

// SetBucketQuota sets the quota of one bucket of a contract.
func (s *Server) SetBucketQuota(ctx context.Context, req contractapi.SetBucketQuotaRequestObject) (contractapi.SetBucketQuotaResponseObject, error) {
	q, err := fromAPIQuota(req.Body)
	if err != nil {
		return nil, err
	}
	defer s.locks.Lock("contract/" + req.Id)()
	ub, rec, err := s.usageOf(req.Id, true)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	err = ub.SetBucketQuota(bctx, rec.account(), req.Bucket, q)
	if errors.Is(err, ErrNoSuchBucket) {
		return nil, newProblem(contractapi.ProblemNotFound, http.StatusNotFound, "contract %s owns no bucket %q", rec.ID, req.Bucket)
	}
	if err != nil {
		return nil, backendProblem("setting the bucket quota", fmt.Errorf("setting the quota of bucket %q of contract %s: %w", req.Bucket, rec.ID, err))
	}
	s.log.Info("Bucket quota set", "contract", rec.ID, "bucket", req.Bucket, "maxSizeBytes", q.MaxSizeBytes, "maxObjects", q.MaxObjects)
	return contractapi.SetBucketQuota200JSONResponse(toAPIQuota(q)), nil
}

// usageOf is the usage backend and the record of a contract a client may see; active: one
// that is not cancelled.
func (s *Server) usageOf(id string, active bool) (UsageBackend, *record, error) {
	ub, err := capability[UsageBackend](s, "keeps no usage counters and enforces no bucket quota")
	if err != nil {
		return nil, nil, err
	}
	find := s.visible
	if active {
		find = s.activeContract
	}
	rec, err := find(id)
	return ub, rec, err
}

func toAPIQuota(q BucketQuota) contractapi.BucketQuota {
	var out contractapi.BucketQuota
	if q.MaxSizeBytes > 0 {
		out.MaxSizeBytes = &q.MaxSizeBytes
	}
	if q.MaxObjects > 0 {
		out.MaxObjects = &q.MaxObjects
	}
	return out
}

// fromAPIQuota checks a requested quota: a limit that is given is at least 1.
func fromAPIQuota(body *contractapi.BucketQuota) (BucketQuota, error) {
	if body == nil {
		return BucketQuota{}, newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, "the body must be a quota")
	}
	var q BucketQuota
	for _, l := range []struct {
		name string
		v    *int64
		to   *int64
	}{{"maxSizeBytes", body.MaxSizeBytes, &q.MaxSizeBytes}, {"maxObjects", body.MaxObjects, &q.MaxObjects}} {
		if l.v == nil {
			continue
		}
		if *l.v < 1 {
			return BucketQuota{}, newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest,
				"%s must be at least 1; leave it out for no limit", l.name)
		}
		*l.to = *l.v
	}
	return q, nil
}
