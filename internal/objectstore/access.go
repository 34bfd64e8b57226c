package objectstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// AccessCheck is what a key was found able to do, with that key itself.
type AccessCheck struct {
	// List: listing the bucket's objects was allowed.
	List bool
	// Read: reading an object was allowed (a missing object answered NoSuchKey, not
	// AccessDenied).
	Read bool
	// Write: writing an object was allowed (the deliberately broken upload was refused for
	// its checksum, not for access).
	Write bool
	// Outside is what the key can do outside the prefix it was checked under: a listing of the
	// whole bucket, an object elsewhere. Nil when it was checked on the whole bucket.
	Outside *AccessCheck
}

// CheckAccess finds out, with the store's own key and without changing anything, whether it
// may list bucket, read from it and write to it: under prefix when one is given (a listing of
// the prefix, an object under it), and then also outside it. The write check sends an upload
// whose Content-MD5 cannot match its body: a server checks access before the body, so an
// allowed write is refused as BadDigest and nothing is stored. An error is returned only when
// an answer says neither yes nor no.
func (s *store) CheckAccess(ctx context.Context, bucket, prefix string) (AccessCheck, error) {
	c, err := s.probe(ctx, bucket, prefix, prefix+probeKey)
	if err != nil || prefix == "" {
		return c, err
	}
	outside, err := s.probe(ctx, bucket, "", outsideKey(prefix))
	c.Outside = &outside
	return c, err
}

// probe tries a listing of prefix, a read and a write of key.
func (s *store) probe(ctx context.Context, bucket, prefix, key string) (AccessCheck, error) {
	var c AccessCheck
	var err error
	list := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(1)}
	if prefix != "" {
		list.Prefix = aws.String(prefix)
	}
	listed, lerr := s.s3.ListObjectsV2(ctx, list)
	if c.List, err = allowed("listing", lerr); err != nil {
		return c, err
	}
	_, gerr := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if c.Read, err = allowed("reading", gerr, "NoSuchKey"); err != nil {
		return c, err
	}
	if !c.Read && c.List && prefix != "" {
		if c.Read, err = s.readUnder(ctx, bucket, listed); err != nil {
			return c, err
		}
	}
	wrongMD5 := base64.StdEncoding.EncodeToString(make([]byte, 16))
	_, perr := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader("osm access check"), ContentMD5: aws.String(wrongMD5),
	})
	if perr == nil {
		// The server stored it after all: it ignores Content-MD5. Say so rather than leave a
		// stray object unmentioned.
		return c, fmt.Errorf("the S3 server accepted an upload with a wrong Content-MD5 (object %q was written)", key)
	}
	if c.Write, err = allowed("writing", perr, "BadDigest", "InvalidDigest"); err != nil {
		return c, err
	}
	return c, nil
}

// readUnder decides a read under a prefix that a missing object did not: AWS and Ceph RGW
// answer AccessDenied, not NoSuchKey, for a missing object to a key that may list the bucket
// only under a prefix. The first object the listing found is read (one byte); when the prefix
// holds none, the listing itself answers: its right and the read's come from the same
// generated statements.
func (s *store) readUnder(ctx context.Context, bucket string, listed *s3.ListObjectsV2Output) (bool, error) {
	if listed == nil || len(listed.Contents) == 0 || listed.Contents[0].Key == nil {
		return true, nil
	}
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: listed.Contents[0].Key, Range: aws.String("bytes=0-0")})
	if err == nil {
		_ = out.Body.Close()
	}
	return allowed("reading", err, "NoSuchKey", "InvalidRange")
}

// outsideKey is the probe's object name outside prefix: its first character differs.
func outsideKey(prefix string) string {
	if strings.HasPrefix(probeKey, prefix[:1]) {
		return "_" + probeKey[1:]
	}
	return probeKey
}

// probeKey is the object the checks name; it is never meant to exist.
const probeKey = ".osm-access-check"

// allowed reads a probe's answer: nil or one of the codes meaning "allowed, but ..." is yes,
// AccessDenied is no, anything else is an error.
func allowed(what string, err error, allowedCodes ...string) (bool, error) {
	if err == nil {
		return true, nil
	}
	code := ErrorCode(err)
	if code == "AccessDenied" || code == "Forbidden" {
		return false, nil
	}
	for _, c := range allowedCodes {
		if code == c {
			return true, nil
		}
	}
	return false, fmt.Errorf("checking %s: %s", what, Describe(err))
}
