package objectstore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// MaxDeleteBatch is the most versions one DeleteObjects call takes, as S3 defines it.
const MaxDeleteBatch = 1000

// ObjectVersion is one version of an object, or one delete marker. VersionID "" names the
// object by key alone: what a server without versions lists, and what a never-versioned
// bucket deletes.
type ObjectVersion struct {
	Key          string
	VersionID    string
	DeleteMarker bool
}

// VersionPage is one page of a bucket's versions and delete markers, in listing order.
type VersionPage struct {
	Versions []ObjectVersion
	// More says the listing goes on, after Next.
	More bool
	// Next is where the next page starts: after the page's last version.
	Next ObjectVersion
}

// Refusal is a version DeleteObjects did not delete, with the server's code ("AccessDenied"
// for a version object lock keeps) and message.
type Refusal struct {
	Version ObjectVersion
	Code    string
	Message string
}

// Hold is what object lock keeps on one version: a retention until a time, a legal hold, or both.
type Hold struct {
	Mode        string
	RetainUntil time.Time
	LegalHold   bool
}

// Emptier lists and deletes what a bucket holds, for the deletion of a Bucket that may empty it.
type Emptier interface {
	// ObjectVersions lists up to limit (at most 1000) versions and delete markers after after
	// (the zero value: from the start); a server without ListObjectVersions is listed with
	// ListObjectsV2. A server that lists after again (versitygw does) is not believed: it is
	// left out.
	ObjectVersions(ctx context.Context, bucket string, after ObjectVersion, limit int32) (VersionPage, error)
	// DeleteVersions deletes up to MaxDeleteBatch versions in one DeleteObjects call, never
	// bypassing governance retention, and returns those the server refused.
	DeleteVersions(ctx context.Context, bucket string, versions []ObjectVersion) ([]Refusal, error)
	// Hold reads what object lock keeps on one version.
	Hold(ctx context.Context, bucket string, v ObjectVersion) (Hold, error)
}

func (s *store) ObjectVersions(ctx context.Context, bucket string, after ObjectVersion, limit int32) (VersionPage, error) {
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(limit), KeyMarker: optional(after.Key)}
	if after.Key != "" {
		in.VersionIdMarker = optional(after.VersionID)
	}
	out, err := s.s3.ListObjectVersions(ctx, in)
	if IsNotImplemented(err) {
		return s.objectsAfter(ctx, bucket, after.Key, limit)
	}
	if err != nil {
		return VersionPage{}, classify(wrap("listing object versions of bucket", bucket, err))
	}
	page := VersionPage{More: aws.ToBool(out.IsTruncated),
		Next: ObjectVersion{Key: aws.ToString(out.NextKeyMarker), VersionID: aws.ToString(out.NextVersionIdMarker)}}
	for _, v := range out.Versions {
		page.add(after, ObjectVersion{Key: aws.ToString(v.Key), VersionID: aws.ToString(v.VersionId)})
	}
	for _, m := range out.DeleteMarkers {
		page.add(after, ObjectVersion{Key: aws.ToString(m.Key), VersionID: aws.ToString(m.VersionId), DeleteMarker: true})
	}
	return page, nil
}

// add puts v on the page, unless it is the version the page was asked to start after.
func (p *VersionPage) add(after, v ObjectVersion) {
	if after.Key != "" && v.Key == after.Key && v.VersionID == after.VersionID {
		return
	}
	p.Versions = append(p.Versions, v)
}

// objectsAfter lists the objects of a server without versions, after key.
func (s *store) objectsAfter(ctx context.Context, bucket, key string, limit int32) (VersionPage, error) {
	out, err := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(limit), StartAfter: optional(key)})
	if err != nil {
		return VersionPage{}, classify(wrap("listing objects of bucket", bucket, err))
	}
	page := VersionPage{More: aws.ToBool(out.IsTruncated)}
	for _, o := range out.Contents {
		page.add(ObjectVersion{Key: key}, ObjectVersion{Key: aws.ToString(o.Key)})
	}
	if n := len(out.Contents); n > 0 {
		page.Next = ObjectVersion{Key: aws.ToString(out.Contents[n-1].Key)}
	}
	return page, nil
}

func (s *store) DeleteVersions(ctx context.Context, bucket string, versions []ObjectVersion) ([]Refusal, error) {
	if len(versions) == 0 {
		return nil, nil
	}
	if len(versions) > MaxDeleteBatch {
		return nil, fmt.Errorf("deleting %d versions of bucket %q: at most %d in one call", len(versions), bucket, MaxDeleteBatch)
	}
	ids := make([]types.ObjectIdentifier, 0, len(versions))
	for _, v := range versions {
		ids = append(ids, types.ObjectIdentifier{Key: aws.String(v.Key), VersionId: optional(v.VersionID)})
	}
	out, err := s.s3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	if err != nil {
		return nil, classify(wrap("deleting objects of bucket", bucket, err))
	}
	refused := make([]Refusal, 0, len(out.Errors))
	for _, e := range out.Errors {
		refused = append(refused, Refusal{Version: ObjectVersion{Key: aws.ToString(e.Key), VersionID: aws.ToString(e.VersionId)},
			Code: aws.ToString(e.Code), Message: aws.ToString(e.Message)})
	}
	return refused, nil
}

func (s *store) Hold(ctx context.Context, bucket string, v ObjectVersion) (Hold, error) {
	var h Hold
	r, err := s.s3.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String(bucket), Key: aws.String(v.Key), VersionId: optional(v.VersionID)})
	switch {
	case err == nil && r.Retention != nil:
		h.Mode, h.RetainUntil = string(r.Retention.Mode), aws.ToTime(r.Retention.RetainUntilDate)
	case err != nil && !noObjectLock(err):
		return Hold{}, classify(wrap("reading the retention of an object of bucket", bucket, err))
	}
	l, err := s.s3.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String(bucket), Key: aws.String(v.Key), VersionId: optional(v.VersionID)})
	switch {
	case err == nil && l.LegalHold != nil:
		h.LegalHold = l.LegalHold.Status == types.ObjectLockLegalHoldStatusOn
	case err != nil && !noObjectLock(err):
		return Hold{}, classify(wrap("reading the legal hold of an object of bucket", bucket, err))
	}
	return h, nil
}

// noObjectLock says a version has no retention, or no legal hold: AWS answers
// NoSuchObjectLockConfiguration, Ceph RGW 16.2 404 ObjectLockConfigurationNotFoundError.
func noObjectLock(err error) bool {
	switch ErrorCode(err) {
	case "NoSuchObjectLockConfiguration", "ObjectLockConfigurationNotFoundError":
		return true
	}
	return false
}
