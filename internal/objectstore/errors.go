package objectstore

import (
	"context"
	"errors"
	"net"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// Errors the Bucket controller acts on. Store methods wrap the SDK's error so that both
// errors.Is(err, ErrNoSuchBucket) and the original message work.
var (
	ErrNoSuchBucket         = errors.New("the bucket does not exist")
	ErrBucketNotEmpty       = errors.New("the bucket is not empty")
	ErrBucketTakenElsewhere = errors.New("another account owns a bucket of that name")
	ErrAccessDenied         = errors.New("access denied")
	// ErrNotAnAnswer: the server answered 200 with what the call never returns (an empty
	// bucket list with no owner, a policy that is not a policy): another service answered, or
	// the endpoint is not an S3 API. Nothing of it is kept.
	ErrNotAnAnswer = errors.New("not an answer the call returns")
)

// codes maps S3 error codes to the errors above.
var codes = map[string]error{
	"NoSuchBucket":        ErrNoSuchBucket,
	"NotFound":            ErrNoSuchBucket, // HeadBucket has no body, so no better code
	"BucketNotEmpty":      ErrBucketNotEmpty,
	"BucketAlreadyExists": ErrBucketTakenElsewhere,
	"AccessDenied":        ErrAccessDenied,
	"Forbidden":           ErrAccessDenied,
}

// classified pairs an SDK error with the sentinel it means.
type classified struct {
	kind error
	err  error
}

func (c *classified) Error() string   { return c.err.Error() }
func (c *classified) Unwrap() []error { return []error{c.kind, c.err} }

// classify wraps err with the sentinel its S3 error code means, if any.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if kind, ok := codes[ErrorCode(err)]; ok {
		return &classified{kind: kind, err: err}
	}
	return err
}

// ErrorCode is the S3 error code of err ("NoSuchBucket", "MalformedPolicy", …), or "".
func ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// IsTransient reports whether err may go away by itself: no answer at all, a server error, or
// throttling. Everything else is the server refusing the request as it stands, including 501
// Not Implemented (see IsNotImplemented), which no retry changes.
func IsTransient(err error) bool {
	if egress.Refused(err) || errors.Is(err, ErrNotAnAnswer) {
		return false // a destination not allowed, an answer not read: the same next time
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && Answered(err) {
		status := resp.HTTPStatusCode()
		if status == http.StatusNotImplemented {
			return false
		}
		return status >= http.StatusInternalServerError || status == http.StatusTooManyRequests
	}
	// No HTTP answer at all: connection refused, timeout, DNS. (The SDK wraps those in a
	// ResponseError too, with status 0.)
	return true
}

// Answered says whether the server answered err at all (with an HTTP status), rather than the
// connection failing or timing out. The SDK wraps a request that was never answered in a
// ResponseError too, with status 0.
func Answered(err error) bool {
	var resp *awshttp.ResponseError
	return errors.As(err, &resp) && resp.Response != nil && resp.Response.Response != nil && resp.HTTPStatusCode() > 0
}

// Describe says what went wrong in a sentence fit for a condition message: the S3 error code and
// message, or the network failure. Request ids and host ids are left out, so the same failure
// always reads the same.
func Describe(err error) string {
	if why, ok := egress.Reason(err); ok {
		return why
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		msg := apiErr.ErrorCode()
		if m := apiErr.ErrorMessage(); m != "" {
			msg += ": " + m
		}
		return msg
	}
	var netErr *net.OpError
	if errors.As(err, &netErr) {
		return netErr.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer before the timeout"
	}
	return err.Error()
}

// IsNotImplemented reports whether the server does not implement the call: 501, as versitygw
// answers bucket lifecycle calls (NotImplemented) and, without a versioning directory,
// PutBucketVersioning (VersioningNotConfigured); or 405 MethodNotAllowed, as Ceph RGW answers
// for a bucket sub-resource it lacks (PutBucketLogging) or has switched off (website). It is asked of calls on a bucket's
// sub-resources, which S3 defines for every method used, so there a 405 means the server lacks
// the sub-resource.
func IsNotImplemented(err error) bool {
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) {
		switch resp.HTTPStatusCode() {
		case http.StatusNotImplemented, http.StatusMethodNotAllowed:
			return true
		}
	}
	return ErrorCode(err) == "NotImplemented"
}
