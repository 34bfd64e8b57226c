package storage_test

import (
	"context"
	"reflect"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"

	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// s3Calls counts the S3 calls the operator makes, per bucket, through SDK middleware installed
// into the manager.
type s3Calls struct {
	mu       sync.Mutex
	all      map[string]int
	mutating map[string]int
}

func newS3Calls() *s3Calls { return &s3Calls{all: map[string]int{}, mutating: map[string]int{}} }

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
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}

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
