package localenv_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The harness starts a real API server: a Namespace created through it can be read back.
func TestControlPlaneServesTheKubernetesAPI(t *testing.T) {
	env, cfg, err := localenv.StartControlPlane(localenv.ControlPlaneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "harness-check"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	var got corev1.Namespace
	if err := c.Get(ctx, client.ObjectKeyFromObject(ns), &got); err != nil {
		t.Fatalf("reading the namespace back: %v", err)
	}
	if got.UID == "" {
		t.Error("the API server returned a namespace without a UID")
	}
}

// The harness starts a real S3 server: a bucket can be created, listed and deleted on it.
func TestVersityGWServesS3(t *testing.T) {
	ctx := context.Background()
	gw, err := localenv.StartVersityGW(ctx, localenv.VersityGWOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.Stop()
		_ = os.RemoveAll(gw.Dir)
	})
	s3c := localenv.NewS3Client(gw.Endpoint, gw.Region, gw.RootAccessKey, gw.RootSecretKey)

	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("harness-check")}); err != nil {
		t.Fatalf("creating a bucket: %v", err)
	}
	list, err := s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("listing buckets: %v", err)
	}
	if len(list.Buckets) != 1 || aws.ToString(list.Buckets[0].Name) != "harness-check" {
		t.Fatalf("listing buckets: got %v, want exactly harness-check", list.Buckets)
	}
	if _, err := s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("harness-check")}); err != nil {
		t.Fatalf("deleting the bucket: %v", err)
	}
	list, err = s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("listing buckets after delete: %v", err)
	}
	if len(list.Buckets) != 0 {
		t.Fatalf("the bucket is still listed after delete: %v", list.Buckets)
	}

	pid := gw.PID()
	if err := gw.Stop(); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Errorf("versitygw (pid %d) still runs after Stop", pid)
	}
}

func processAlive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
