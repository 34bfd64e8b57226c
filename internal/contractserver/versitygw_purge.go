package contractserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// purgeBucket deletes a bucket with its objects and unfinished uploads, for a forced cancel. The
// client signs as a gateway admin, which versitygw lets past bucket ACLs and policies. A bucket
// already gone counts as deleted, so a retried cancel goes through.
func purgeBucket(ctx context.Context, client *s3.Client, bucket string) error {
	objects := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for objects.HasMorePages() {
		page, err := objects.NextPage(ctx)
		if err != nil {
			if isNoSuchBucket(err) {
				return nil
			}
			return fmt.Errorf("listing objects of bucket %q: %w", bucket, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Contents))
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("deleting objects of bucket %q: %w", bucket, err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("deleting object %q of bucket %q: %s: %s", aws.ToString(e.Key), bucket, aws.ToString(e.Code), aws.ToString(e.Message))
		}
	}

	uploads := s3.NewListMultipartUploadsPaginator(client, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	for uploads.HasMorePages() {
		page, err := uploads.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing uploads of bucket %q: %w", bucket, err)
		}
		for _, u := range page.Uploads {
			_, err := client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId})
			if err != nil {
				return fmt.Errorf("aborting upload of %q in bucket %q: %w", aws.ToString(u.Key), bucket, err)
			}
		}
	}

	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil && !isNoSuchBucket(err) {
		return fmt.Errorf("deleting bucket %q: %w", bucket, err)
	}
	return nil
}

// isNoSuchBucket looks at the error code: only some operations model NoSuchBucket as a type.
func isNoSuchBucket(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket"
}
