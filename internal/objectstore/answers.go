package objectstore

import (
	"context"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// answerLimit is the most read of the answer to an S3 operation: a policy is at most 20 KiB at
// AWS, listings are longer than the configurations of a bucket, and everything else is
// bounded by the client's tuning.MaxS3Answer. A server that answers more fails the call
// (egress.ErrAnswerTooLarge), so one tenant's endpoint cannot fill the manager's memory.
func answerLimit(operation string) int64 {
	switch operation {
	case "GetBucketPolicy":
		return tuning.MaxPolicyAnswer
	case "ListBuckets", "ListObjectsV2", "ListObjectVersions":
		return tuning.MaxS3ListAnswer
	}
	return tuning.MaxS3Answer
}

// answerLimits puts each call's answerLimit in the context its HTTP request is sent with.
func answerLimits(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc("osmAnswerLimit",
		func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			return next.HandleBuild(egress.WithAnswerLimit(ctx, answerLimit(awsmiddleware.GetOperationName(ctx))), in)
		}), middleware.After)
}
