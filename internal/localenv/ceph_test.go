package localenv

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const allUsersURI = "http://acs.amazonaws.com/groups/global/AllUsers"

func TestStartCeph(t *testing.T) {
	ctx := t.Context()
	ceph, err := StartCeph(ctx, CephOptions{})
	if err != nil {
		t.Fatalf("StartCeph: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = ceph.Stop()
		}
		if t.Failed() {
			t.Logf("Ceph state and logs kept in %s", ceph.Dir)
			return
		}
		_ = os.RemoveAll(ceph.Dir)
	})
	t.Logf("Ceph started in %s", ceph.StartDuration)

	client := newCephS3Client(ceph, ceph.Region)
	bucket := "osm-" + RandomHex(4)

	// boto3 and others send the client's region as LocationConstraint; RGW only takes its
	// zonegroup's api_name there, so this proves Region is the right one.
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{
		Bucket: &bucket,
		CreateBucketConfiguration: &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(ceph.Region),
		},
	}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if names := listBuckets(ctx, t, client); !slices.Contains(names, bucket) {
		t.Fatalf("ListBuckets = %v, want it to contain %q", names, bucket)
	}

	acl, err := client.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("GetBucketAcl: %v", err)
	}
	if _, err := client.PutBucketAcl(ctx, &s3.PutBucketAclInput{
		Bucket: &bucket,
		AccessControlPolicy: &types.AccessControlPolicy{
			Owner: acl.Owner,
			Grants: []types.Grant{
				{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: acl.Owner.ID}, Permission: types.PermissionFullControl},
				{Grantee: &types.Grantee{Type: types.TypeGroup, URI: aws.String(allUsersURI)}, Permission: types.PermissionRead},
			},
		},
	}); err != nil {
		t.Fatalf("PutBucketAcl: %v", err)
	}
	acl, err = client.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("GetBucketAcl after put: %v", err)
	}
	if !slices.ContainsFunc(acl.Grants, func(g types.Grant) bool {
		return g.Grantee != nil && g.Grantee.Type == types.TypeGroup &&
			aws.ToString(g.Grantee.URI) == allUsersURI && g.Permission == types.PermissionRead
	}) {
		t.Fatalf("bucket ACL has no AllUsers READ grant: %+v", acl.Grants)
	}

	// RGW takes a SigV4 signature for any region name, so a client left on us-east-1 works too.
	if _, err := newCephS3Client(ceph, "us-east-1").ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("ListBuckets signed for us-east-1: %v", err)
	}

	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if names := listBuckets(ctx, t, client); slices.Contains(names, bucket) {
		t.Fatalf("ListBuckets = %v after DeleteBucket, still contains %q", names, bucket)
	}

	pids := ceph.PIDs()
	if len(pids) != 3 {
		t.Fatalf("PIDs = %v, want mon, osd and rgw", pids)
	}
	if err := ceph.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	for _, pid := range pids {
		// Signal 0 checks existence; each daemon led its own process group, so check that too.
		for _, target := range []int{pid, -pid} {
			if err := syscall.Kill(target, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process (group) %d still exists after Stop: kill 0 = %v", target, err)
			}
		}
	}
}

// newCephS3Client is a path-style S3 client with the cluster's admin keys, signing for region.
func newCephS3Client(ceph *Ceph, region string) *s3.Client {
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(ceph.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(ceph.AdminAccessKey, ceph.AdminSecretKey, ""),
	})
}

func listBuckets(ctx context.Context, t *testing.T, client *s3.Client) []string {
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

func TestStartCephNamesThePackagesWhenBinariesAreMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := StartCeph(t.Context(), CephOptions{})
	if err == nil || !strings.Contains(err.Error(), cephInstall) {
		t.Fatalf("StartCeph without Ceph on PATH: %v, want an error naming `%s`", err, cephInstall)
	}
}
