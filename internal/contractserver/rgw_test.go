package contractserver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/ceph/go-ceph/rgw/admin"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// TestRGWBackend runs every RGW backend case against one real single-node Ceph cluster, started
// here and stopped when the subtests are done. Each subtest works on its own contracts.
func TestRGWBackend(t *testing.T) {
	ceph := startCeph(t)
	b, err := NewRGWBackend(RGWConfig{
		Endpoint:       ceph.Endpoint,
		Region:         ceph.Region,
		AdminAccessKey: ceph.AdminAccessKey,
		AdminSecretKey: ceph.AdminSecretKey,
	})
	if err != nil {
		t.Fatalf("NewRGWBackend: %v", err)
	}

	t.Run("keys create buckets, rotate and revoke", func(t *testing.T) {
		ctx := t.Context()
		id := newContractID()
		first := newCredentials(FirstAccessKeyID(id))
		if err := b.CreateAccount(ctx, id, first, Plan{Name: "standard"}); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		bucket := "rgw-" + id
		if err := rgwPutObject(ctx, rgwS3(b, first), bucket, "object", 5); err != nil {
			t.Fatalf("first key: %v", err)
		}

		second := newCredentials(newAccessKeyID())
		for i := range 2 {
			if err := b.AddKey(ctx, id, second); err != nil {
				t.Fatalf("AddKey, attempt %d: %v", i+1, err)
			}
		}
		if got := rgwListBuckets(ctx, t, rgwS3(b, second)); !slices.Contains(got, bucket) {
			t.Fatalf("second key lists %v, want %q", got, bucket)
		}

		for i := range 2 {
			if err := b.RemoveKey(ctx, id, first.AccessKeyID); err != nil {
				t.Fatalf("RemoveKey, attempt %d: %v", i+1, err)
			}
		}
		_, err := rgwS3(b, first).ListBuckets(ctx, &s3.ListBucketsInput{})
		if code := rgwErrorCode(err); code != "InvalidAccessKeyId" {
			t.Fatalf("revoked key: ListBuckets error %v, want InvalidAccessKeyId", err)
		}
		if got := rgwListBuckets(ctx, t, rgwS3(b, second)); !slices.Contains(got, bucket) {
			t.Fatalf("second key after revoking the first lists %v, want %q", got, bucket)
		}
	})

	t.Run("a contract cannot revoke another contract's key", func(t *testing.T) {
		ctx := t.Context()
		id, other := newContractID(), newContractID()
		creds := newCredentials(FirstAccessKeyID(id))
		if err := b.CreateAccount(ctx, id, creds, Plan{Name: "standard"}); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		if err := b.CreateAccount(ctx, other, newCredentials(FirstAccessKeyID(other)), Plan{Name: "standard"}); err != nil {
			t.Fatalf("CreateAccount of the other contract: %v", err)
		}
		if err := b.RemoveKey(ctx, other, creds.AccessKeyID); err != nil {
			t.Fatalf("RemoveKey of a key the contract does not hold: %v", err)
		}
		if _, err := rgwS3(b, creds).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
			t.Fatalf("key revoked through another contract: %v", err)
		}
	})

	t.Run("plan quota becomes an enforced user quota", func(t *testing.T) {
		ctx := t.Context()
		id := newContractID()
		creds := newCredentials(FirstAccessKeyID(id))
		const quota = 1 << 20
		if err := b.CreateAccount(ctx, id, creds, Plan{Name: "tiny", QuotaBytes: quota}); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		q, err := b.api.GetUserQuota(ctx, admin.QuotaSpec{UID: rgwUserID(id)})
		if err != nil {
			t.Fatalf("GetUserQuota: %v", err)
		}
		if q.Enabled == nil || !*q.Enabled || q.MaxSize == nil || *q.MaxSize != quota {
			t.Fatalf("user quota enabled=%v max_size=%v, want enabled with %d bytes", deref(q.Enabled), deref(q.MaxSize), quota)
		}
		// Fill the quota exactly, then go one byte over. About one refused PUT in four reaches
		// the SDK as a 403 whose body it fails to read ("failed to copy error response body:
		// use of closed network connection"), whatever the body size. Those attempts are
		// retried; a QuotaExceeded answer is not, so the check stays exact.
		client := rgwS3(b, creds, func(o *s3.Options) { o.RetryMaxAttempts = 10 })
		bucket := "rgw-" + id
		if err := rgwPutObject(ctx, client, bucket, "full", quota); err != nil {
			t.Fatalf("object as large as the quota: %v", err)
		}
		err = rgwPutObject(ctx, client, bucket, "over", 1)
		if code := rgwErrorCode(err); code != "QuotaExceeded" {
			t.Fatalf("one byte over the quota: error %v, want QuotaExceeded", err)
		}
	})

	t.Run("usage and bucket quotas through the server", func(t *testing.T) { testUsageAndQuotaOnRGW(t, b) })

	t.Run("create is idempotent", func(t *testing.T) {
		ctx := t.Context()
		id := newContractID()
		creds := newCredentials(FirstAccessKeyID(id))
		for i := range 2 {
			if err := b.CreateAccount(ctx, id, creds, Plan{Name: "standard"}); err != nil {
				t.Fatalf("CreateAccount, attempt %d: %v", i+1, err)
			}
		}
		if err := b.CreateAccount(ctx, id, newCredentials(creds.AccessKeyID), Plan{Name: "standard"}); err == nil {
			t.Errorf("CreateAccount with another secret for an existing user succeeded")
		}
		// The first key belongs to id; another contract must not get it.
		if err := b.CreateAccount(ctx, newContractID(), creds, Plan{Name: "standard"}); err == nil {
			t.Errorf("CreateAccount with a key another user holds succeeded")
		}
		if _, err := rgwS3(b, creds).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
			t.Fatalf("key after the refused attempts: %v", err)
		}
	})

	t.Run("principals through the server", func(t *testing.T) {
		ts := startServer(t, Config{Backend: b})
		testPrincipalLifecycle(t, ts, func(c contractapi.Credentials) *s3.Client {
			return rgwS3(b, Credentials{AccessKeyID: c.AccessKeyId, SecretAccessKey: c.SecretAccessKey})
		})
	})

	t.Run("principal calls are idempotent", func(t *testing.T) {
		ctx := t.Context()
		contractID, principalID := newContractID(), newPrincipalID()
		if err := b.CreateAccount(ctx, contractID, newCredentials(FirstAccessKeyID(contractID)), Plan{Name: "standard"}); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		first, second := newCredentials(newPrincipalAccessKeyID()), newCredentials(newPrincipalAccessKeyID())
		for i := range 2 {
			if err := b.CreatePrincipal(ctx, contractID, principalID, first); err != nil {
				t.Fatalf("CreatePrincipal, attempt %d: %v", i+1, err)
			}
			if err := b.AddPrincipalKey(ctx, contractID, principalID, second); err != nil {
				t.Fatalf("AddPrincipalKey, attempt %d: %v", i+1, err)
			}
		}
		if err := b.CreatePrincipal(ctx, contractID, principalID, newCredentials(first.AccessKeyID)); err == nil {
			t.Errorf("CreatePrincipal with another secret for an existing principal succeeded")
		}
		uid := rgwPrincipalUserID(contractID, principalID)
		user, err := b.api.GetUser(ctx, admin.User{ID: uid})
		if err != nil {
			t.Fatalf("GetUser: %v", err)
		}
		if user.MaxBuckets == nil || *user.MaxBuckets >= 0 || len(user.Keys) != 2 {
			t.Errorf("principal user: max_buckets %v and %d keys, want bucket creation disabled and 2 keys", deref(user.MaxBuckets), len(user.Keys))
		}
		_, err = rgwS3(b, first).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own-" + principalID)})
		if err == nil {
			t.Errorf("a principal made a bucket of its own")
		}
		for i := range 2 {
			if err := b.RemovePrincipalKey(ctx, contractID, principalID, first.AccessKeyID); err != nil {
				t.Fatalf("RemovePrincipalKey, attempt %d: %v", i+1, err)
			}
		}
		if code := rgwErrorCode(listErr(ctx, rgwS3(b, first))); code != "InvalidAccessKeyId" {
			t.Errorf("revoked principal key: %q, want InvalidAccessKeyId", code)
		}
		if err := listErr(ctx, rgwS3(b, second)); err != nil {
			t.Errorf("remaining principal key: %v", err)
		}
		for i := range 2 {
			if err := b.DeletePrincipal(ctx, contractID, principalID, []string{second.AccessKeyID}); err != nil {
				t.Fatalf("DeletePrincipal, attempt %d: %v", i+1, err)
			}
		}
		if _, err := b.api.GetUser(ctx, admin.User{ID: uid}); !errors.Is(err, admin.ErrNoSuchUser) {
			t.Errorf("GetUser after DeletePrincipal: %v, want NoSuchUser", err)
		}
		if _, err := b.api.GetUser(ctx, admin.User{ID: rgwUserID(contractID)}); err != nil {
			t.Errorf("the contract's own user after DeletePrincipal: %v", err)
		}
	})

	t.Run("delete refuses while buckets exist unless forced", func(t *testing.T) {
		ctx := t.Context()
		id := newContractID()
		creds := newCredentials(FirstAccessKeyID(id))
		if err := b.CreateAccount(ctx, id, creds, Plan{Name: "standard"}); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		bucket := "rgw-" + id
		if err := rgwPutObject(ctx, rgwS3(b, creds), bucket, "object", 5); err != nil {
			t.Fatalf("filling a bucket: %v", err)
		}

		if err := b.DeleteAccount(ctx, id, false); !errors.Is(err, ErrAccountHasBuckets) {
			t.Fatalf("DeleteAccount without force: %v, want ErrAccountHasBuckets", err)
		}
		if _, err := b.api.GetUser(ctx, admin.User{ID: rgwUserID(id)}); err != nil {
			t.Fatalf("user after refused delete: %v", err)
		}

		for i := range 2 {
			if err := b.DeleteAccount(ctx, id, true); err != nil {
				t.Fatalf("DeleteAccount with force, attempt %d: %v", i+1, err)
			}
		}
		if _, err := b.api.GetUser(ctx, admin.User{ID: rgwUserID(id)}); !errors.Is(err, admin.ErrNoSuchUser) {
			t.Fatalf("GetUser after forced delete: %v, want NoSuchUser", err)
		}
		buckets, err := b.api.ListBuckets(ctx)
		if err != nil {
			t.Fatalf("ListBuckets: %v", err)
		}
		if slices.Contains(buckets, bucket) {
			t.Fatalf("bucket %q survived the forced delete", bucket)
		}
		if err := b.DeleteAccount(ctx, id, false); err != nil {
			t.Fatalf("DeleteAccount of a deleted account: %v", err)
		}
	})
}

// startCeph starts a Ceph cluster for one test. Its state directory is removed when the test
// passes and kept, with the logs, when it fails.
func startCeph(t *testing.T) *localenv.Ceph {
	t.Helper()
	return startCephWith(t, localenv.CephOptions{})
}

// startCephWith is startCeph with options.
func startCephWith(t *testing.T, opts localenv.CephOptions) *localenv.Ceph {
	t.Helper()
	ceph, err := localenv.StartCeph(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting Ceph: %v", err)
	}
	t.Cleanup(func() {
		_ = ceph.Stop()
		if t.Failed() {
			t.Logf("Ceph state and logs kept in %s", ceph.Dir)
			return
		}
		_ = os.RemoveAll(ceph.Dir)
	})
	return ceph
}

// rgwS3 is a path-style S3 client for the backend's endpoint signing with creds, without
// retries so that a refused key fails at once.
func rgwS3(b *RGWBackend, creds Credentials, optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint:     aws.String(b.Endpoint()),
		Region:           b.Region(),
		UsePathStyle:     true,
		Credentials:      credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""),
		RetryMaxAttempts: 1,
	}, optFns...)
}

// rgwPutObject creates bucket (RGW answers success when the caller owns it already) and
// writes an object of size bytes into it.
func rgwPutObject(ctx context.Context, client *s3.Client, bucket, key string, size int) error {
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return err
	}
	_, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket),
		Key:    aws.String(key),
		Body:   bytes.NewReader(bytes.Repeat([]byte("x"), size)),
	})
	return err
}

func listErr(ctx context.Context, client *s3.Client) error {
	_, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
	return err
}

func rgwListBuckets(ctx context.Context, t *testing.T, client *s3.Client) []string {
	t.Helper()
	out, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	var names []string
	for _, b := range out.Buckets {
		names = append(names, aws.ToString(b.Name))
	}
	return names
}

// rgwErrorCode is the S3 error code of err, or its text when it is no S3 error.
func rgwErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
