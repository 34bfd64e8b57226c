package storage_test

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"

	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// s3Calls counts the S3 calls the operator makes, per bucket, through SDK middleware installed
// into the manager, and fails the calls a spec asks it to.
type s3Calls struct {
	mu       sync.Mutex
	all      map[string]int
	mutating map[string]int
	faults   map[string]s3Fault // by bucket and operation
}

// s3Fault makes a call fail without an answer; with afterSending the server has acted on it.
type s3Fault struct{ afterSending bool }

func newS3Calls() *s3Calls {
	return &s3Calls{all: map[string]int{}, mutating: map[string]int{}, faults: map[string]s3Fault{}}
}

// fail makes every call of operation on bucket fail until the returned function is called.
func (c *s3Calls) fail(bucket, operation string, f s3Fault) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults[bucket+" "+operation] = f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.faults, bucket+" "+operation)
	}
}

func (c *s3Calls) middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			bucket := bucketOf(in.Parameters)
			op := middleware.GetOperationName(ctx)
			c.mu.Lock()
			c.all[bucket]++
			if objectstore.IsMutating(op) {
				c.mutating[bucket]++
			}
			fault, failing := c.faults[bucket+" "+op]
			c.mu.Unlock()
			if !failing {
				return next.HandleInitialize(ctx, in)
			}
			if fault.afterSending {
				out, md, _ := next.HandleInitialize(ctx, in)
				return out, md, errInjected
			}
			return middleware.InitializeOutput{}, middleware.Metadata{}, errInjected
		}), middleware.Before)
}

// errInjected is the failure a spec injects: no answer, which the operator retries.
var errInjected = errors.New("injected fault: no answer")

// counts returns how many calls, and how many mutating calls, the operator made for a bucket.
func (c *s3Calls) counts(bucket string) (all, mutating int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all[bucket], c.mutating[bucket]
}

// bucketOf reads the Bucket field every bucket-level S3 input has.
func bucketOf(params any) string {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	f := v.Elem().FieldByName("Bucket")
	if !f.IsValid() {
		return ""
	}
	if p, ok := f.Interface().(*string); ok {
		return aws.ToString(p)
	}
	return ""
}
