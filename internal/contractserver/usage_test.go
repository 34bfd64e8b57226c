package contractserver

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// testUsageAndQuotaOnRGW: through the server, one usage call answers the bytes and objects of
// every bucket of the contract, and a bucket quota set through the API is one RGW enforces.
func testUsageAndQuotaOnRGW(t *testing.T, b *RGWBackend) {
	ctx := t.Context()
	ts := startServer(t, Config{Backend: b})
	c := createContract(t, ts.client, "usage-"+newContractID(), contractapi.ContractRequest{Plan: "standard"})
	client := rgwS3(b, Credentials{AccessKeyID: c.Credentials.AccessKeyId, SecretAccessKey: c.Credentials.SecretAccessKey},
		func(o *s3.Options) { o.RetryMaxAttempts = 10 })
	one, two := "usage-one-"+c.Id, "usage-two-"+c.Id
	for _, bucket := range []string{one, two} {
		if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatalf("CreateBucket: %v", err)
		}
	}
	put := func(key string, size int) error {
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(one), Key: aws.String(key),
			Body: bytes.NewReader(bytes.Repeat([]byte("x"), size))})
		return err
	}
	for i, size := range []int{1000, 2000, 3000} {
		if err := put("o"+itoa(i), size); err != nil {
			t.Fatalf("PutObject: %v", err)
		}
	}

	got := usageOf(t, ts, c.Id)
	if u := got[one]; u.Bytes != 6000 || u.Objects != 3 || u.Quota.MaxObjects != nil || u.Quota.MaxSizeBytes != nil {
		t.Errorf("usage of %s: %+v, want 6000 bytes in 3 objects and no quota", one, u)
	}
	if u, ok := got[two]; !ok || u.Bytes != 0 || u.Objects != 0 {
		t.Errorf("usage of the empty %s: %+v (listed: %v), want 0 bytes, 0 objects", two, u, ok)
	}

	maxObjects := int64(4)
	resp, err := ts.client.SetBucketQuotaWithResponse(ctx, c.Id, one, contractapi.BucketQuota{MaxObjects: &maxObjects})
	if err != nil || resp.JSON200 == nil || resp.JSON200.MaxObjects == nil || *resp.JSON200.MaxObjects != 4 {
		t.Fatalf("SetBucketQuota: %v %s", err, resp.Body)
	}
	if u := usageOf(t, ts, c.Id)[one]; u.Quota.MaxObjects == nil || *u.Quota.MaxObjects != 4 || u.Quota.MaxSizeBytes != nil {
		t.Errorf("quota of %s after setting it: %+v, want maxObjects 4 alone", one, u.Quota)
	}
	if err := put("fourth", 10); err != nil {
		t.Fatalf("the fourth object, within the quota: %v", err)
	}
	if err := put("fifth", 10); rgwErrorCode(err) != "QuotaExceeded" {
		t.Fatalf("the fifth object, past maxObjects 4: error %v, want QuotaExceeded", err)
	}

	resp, err = ts.client.SetBucketQuotaWithResponse(ctx, c.Id, "not-"+one, contractapi.BucketQuota{MaxObjects: &maxObjects})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "quota of a bucket the contract does not own", resp.HTTPResponse, resp.ApplicationproblemJSON404, http.StatusNotFound, contractapi.ProblemNotFound)

	resp, err = ts.client.SetBucketQuotaWithResponse(ctx, c.Id, one, contractapi.BucketQuota{})
	if err != nil || resp.StatusCode() != http.StatusOK {
		t.Fatalf("removing the quota: %v %s", err, resp.Body)
	}
	if u := usageOf(t, ts, c.Id)[one]; u.Quota.MaxObjects != nil || u.Quota.MaxSizeBytes != nil {
		t.Errorf("quota of %s after removing it: %+v, want none", one, u.Quota)
	}
	if err := put("fifth", 10); err != nil {
		t.Errorf("the fifth object once the quota is removed: %v", err)
	}

	// RGW counts a size limit in KiB: 6020 bytes held, a limit of 7000 bytes is 7 KiB.
	maxSize := int64(7000)
	if resp, err = ts.client.SetBucketQuotaWithResponse(ctx, c.Id, one, contractapi.BucketQuota{MaxSizeBytes: &maxSize}); err != nil || resp.JSON200 == nil {
		t.Fatalf("SetBucketQuota of a size: %v %s", err, resp.Body)
	}
	if u := usageOf(t, ts, c.Id)[one]; u.Quota.MaxSizeBytes == nil || *u.Quota.MaxSizeBytes != 7*1024 || u.Quota.MaxObjects != nil {
		t.Errorf("quota of %s after setting 7000 bytes: %+v, want maxSizeBytes 7168 alone", one, u.Quota)
	}
	if err := put("big", 2000); rgwErrorCode(err) != "QuotaExceeded" {
		t.Errorf("2000 bytes more than the 6020 held, past 7 KiB: error %v, want QuotaExceeded", err)
	}
}

// usageOf reads the usage of a contract through the API, by bucket.
func usageOf(t *testing.T, ts *testServer, contractID string) map[string]contractapi.BucketUsage {
	t.Helper()
	resp, err := ts.client.GetUsageWithResponse(t.Context(), contractID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetUsage: %v %s", err, resp.Body)
	}
	out := map[string]contractapi.BucketUsage{}
	for _, u := range resp.JSON200.Buckets {
		out[u.Name] = u
	}
	return out
}

// TestVersityGWAnswersUsageAndQuotaNotSupported: versitygw keeps no usage counters and
// enforces no quota, so both calls answer 501 not-supported rather than listing objects.
func TestVersityGWAnswersUsageAndQuotaNotSupported(t *testing.T) {
	gw := startGateway(t, localenv.VersityGWOptions{})
	ts := startServer(t, Config{Backend: gatewayBackend(t, gw)})
	c := createContract(t, ts.client, "usage-"+newContractID(), contractapi.ContractRequest{Plan: "standard"})

	usage, err := ts.client.GetUsageWithResponse(t.Context(), c.Id)
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "usage on versitygw", usage.HTTPResponse, usage.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	maxObjects := int64(3)
	quota, err := ts.client.SetBucketQuotaWithResponse(t.Context(), c.Id, "any", contractapi.BucketQuota{MaxObjects: &maxObjects})
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, "a bucket quota on versitygw", quota.HTTPResponse, quota.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
}
