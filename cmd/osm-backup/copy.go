package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/object-storage-manager/object-storage-manager/internal/linkclient"
)

// partSize is how much of an object is held in memory at once: objects up to it are put in one
// request, larger ones in parts of it (S3's smallest part is 5 MiB). The image has no writable
// file system to spool to.
var partSize int64 = 8 << 20

// copier copies the objects under one prefix of a bucket to another prefix, of another bucket
// or the same one, one object at a time, listing only the source.
type copier struct {
	from, to             linkclient.Bucket
	fromPrefix, toPrefix string
	maxObjects           int
}

func (c copier) run(ctx context.Context) (n int, size int64, err error) {
	pages := s3.NewListObjectsV2Paginator(c.from.Client, &s3.ListObjectsV2Input{
		Bucket: aws.String(c.from.Name), Prefix: aws.String(c.fromPrefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, size, fmt.Errorf("listing s3://%s/%s: %w", c.from.Name, c.fromPrefix, err)
		}
		for _, o := range page.Contents {
			if n >= c.maxObjects {
				return n, size, fmt.Errorf("more than %d objects under s3://%s/%s (--max-objects)", c.maxObjects, c.from.Name, c.fromPrefix)
			}
			key := aws.ToString(o.Key)
			written, err := c.object(ctx, key, snapshotKey(key, c.fromPrefix, c.toPrefix))
			if err != nil {
				return n, size, err
			}
			n, size = n+1, size+written
		}
	}
	return n, size, nil
}

// object copies one object by reading it and writing it again: the two keys are different
// principals, so a server-side copy (which reads with the writer's key) is not allowed.
func (c copier) object(ctx context.Context, key, target string) (int64, error) {
	got, err := c.from.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.from.Name), Key: aws.String(key)})
	if err != nil {
		return 0, fmt.Errorf("reading s3://%s/%s: %w", c.from.Name, key, err)
	}
	defer func() { _ = got.Body.Close() }()
	first, err := readPart(got.Body)
	if err != nil {
		return 0, fmt.Errorf("reading s3://%s/%s: %w", c.from.Name, key, err)
	}
	if int64(len(first)) < partSize {
		_, err = c.to.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.to.Name), Key: aws.String(target),
			Body: bytes.NewReader(first), ContentLength: aws.Int64(int64(len(first))), ContentType: got.ContentType})
		if err != nil {
			return 0, fmt.Errorf("writing s3://%s/%s: %w", c.to.Name, target, err)
		}
		return int64(len(first)), nil
	}
	return c.multipart(ctx, target, got, first)
}

func (c copier) multipart(ctx context.Context, target string, got *s3.GetObjectOutput, part []byte) (int64, error) {
	up, err := c.to.Client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(c.to.Name),
		Key: aws.String(target), ContentType: got.ContentType})
	if err != nil {
		return 0, fmt.Errorf("writing s3://%s/%s: %w", c.to.Name, target, err)
	}
	var done []types.CompletedPart
	var size int64
	for number := int32(1); len(part) > 0; number++ {
		out, err := c.to.Client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(c.to.Name), Key: aws.String(target),
			UploadId: up.UploadId, PartNumber: aws.Int32(number), Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part)))})
		if err == nil {
			done = append(done, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(number)})
			size += int64(len(part))
			part, err = readPart(got.Body)
		}
		if err != nil {
			// Best effort: a WriteOnly key may not abort; the bucket's lifecycle rule for
			// incomplete uploads, where there is one, takes what is left.
			_, _ = c.to.Client.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{
				Bucket: aws.String(c.to.Name), Key: aws.String(target), UploadId: up.UploadId})
			return 0, fmt.Errorf("writing s3://%s/%s, part %d: %w", c.to.Name, target, number, err)
		}
	}
	_, err = c.to.Client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(c.to.Name),
		Key: aws.String(target), UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		return 0, fmt.Errorf("writing s3://%s/%s: %w", c.to.Name, target, err)
	}
	return size, nil
}

// readPart reads up to partSize bytes; fewer only at the end of r.
func readPart(r io.Reader) ([]byte, error) {
	buf := make([]byte, partSize)
	n, err := io.ReadFull(r, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return buf[:n], err
}
