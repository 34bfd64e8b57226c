package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// bound is the physical bound of a burst on these servers, measured in the same run: what S3
// and the API server take for the same work with nothing in between.
type bound struct {
	mix        []string // S3 calls per Bucket, in order
	s3Rate     float64  // S3 calls per second at s3Workers
	s3Workers  int
	writes     int     // API writes per Bucket (the create included)
	apiRate    float64 // writes per second at apiWorkers
	apiWorkers int
	apiCPU     counts // CPU seconds by process while the API half ran at apiWorkers (machineCPU)
	s3Time     time.Duration
	apiTime    time.Duration
	time       time.Duration // the larger of the two
	s3Tried    map[int]float64
	apiTried   map[int]float64
}

// s3Ops are the calls a bucket's mix may hold, in the order a Bucket needs them.
var s3Ops = []struct {
	name string
	do   func(ctx context.Context, c *s3.Client, bucket string) error
}{
	{"HeadBucket", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b})
		return err
	}},
	{"CreateBucket", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b, ObjectOwnership: types.ObjectOwnershipObjectWriter})
		return err
	}},
	{"ListBuckets", func(ctx context.Context, c *s3.Client, _ string) error {
		_, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
		return err
	}},
	{"PutBucketTagging", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &b, Tagging: &types.Tagging{TagSet: []types.Tag{
			{Key: aws.String("storage.osm.dev/bucket"), Value: aws.String("bound/" + b)},
			{Key: aws.String("storage.osm.dev/bucket-uid"), Value: aws.String("00000000-0000-0000-0000-000000000000")},
		}}})
		return err
	}},
	{"GetBucketTagging", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &b})
		return err
	}},
	{"GetBucketAcl", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: &b})
		return err
	}},
	{"GetBucketPolicy", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &b})
		return err
	}},
	{"DeleteBucket", func(ctx context.Context, c *s3.Client, b string) error {
		_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &b})
		return err
	}},
}

// s3Mix turns the calls counted over n Buckets into the calls of one Bucket: each operation
// as many times as it was made per Bucket, rounded. Operations the bound cannot make are
// named in skipped.
func s3Mix(calls counts, n int) (mix []string, skipped []string) {
	known := map[string]bool{}
	for _, op := range s3Ops {
		known[op.name] = true
		for range int(math.Round(calls[op.name] / float64(n))) {
			mix = append(mix, op.name)
		}
	}
	for _, name := range calls.names() {
		if !known[name] && calls[name]/float64(n) >= 0.5 {
			skipped = append(skipped, name)
		}
	}
	return mix, skipped
}

// measureS3 makes the mix for n fresh buckets with a plain aws-sdk-go-v2 client straight at the
// server, at several concurrencies, and keeps the best rate. The buckets are deleted after
// each try (not timed).
func measureS3(ctx context.Context, s *servers, mix []string, n int, accessKey, secretKey string) (rate float64, workers int, tried map[int]float64, err error) {
	c := localenv.NewS3Client(s.stk.S3.Direct, s.stk.S3.Region, accessKey, secretKey)
	tried = map[int]float64{}
	do := map[string]func(context.Context, *s3.Client, string) error{}
	for _, op := range s3Ops {
		do[op.name] = op.do
	}
	for _, w := range []int{4, 16, 64} {
		var failures atomic.Int64
		prefix := fmt.Sprintf("bound-%d-", w)
		start := time.Now()
		err := parallel(ctx, n, w, func(i int) error {
			for _, op := range mix {
				// Errors are answers too (a HEAD of a bucket not made yet is a 404): the bound
				// is how fast the server answers.
				if do[op](ctx, c, fmt.Sprintf("%s%d", prefix, i)) != nil && op == "CreateBucket" {
					failures.Add(1)
				}
			}
			return nil
		})
		elapsed := time.Since(start)
		if err != nil {
			return 0, 0, nil, err
		}
		if f := failures.Load(); f > 0 {
			return 0, 0, nil, fmt.Errorf("the S3 bound failed to create %d buckets at concurrency %d", f, w)
		}
		r := float64(n*len(mix)) / elapsed.Seconds()
		tried[w] = r
		if r > rate {
			rate, workers = r, w
		}
		_ = parallel(ctx, n, w, func(i int) error {
			_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(fmt.Sprintf("%s%d", prefix, i))})
			return nil
		})
	}
	return rate, workers, tried, nil
}

// measureAPI makes n Buckets with writes writes each (a create, then status patches) straight at
// the API server with no controller running, at several concurrencies, and keeps the best rate.
func measureAPI(ctx context.Context, s *servers, writes, n int) (rate float64, workers int, tried map[int]float64, cpu counts, err error) {
	tried = map[int]float64{}
	for _, w := range []int{16, 64} {
		ns := fmt.Sprintf("bound-api-%d", w)
		if _, err := s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return 0, 0, nil, nil, err
		}
		buckets := s.dyn.Resource(bucketGVR).Namespace(ns)
		cpuBefore := machineCPU()
		start := time.Now()
		err := parallel(ctx, n, w, func(i int) error {
			name := fmt.Sprintf("b-%d", i)
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": storagev1alpha1.GroupVersion.String(), "kind": "Bucket",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{"bucketName": fmt.Sprintf("%s-%d", ns, i), "contractName": "c-0",
					"bucketReclaimPolicy": string(storagev1alpha1.ReclaimPolicyDelete)},
			}}
			if _, err := buckets.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				return err
			}
			for k := 1; k < writes; k++ {
				patch := fmt.Sprintf(`{"status":{"observedGeneration":%d}}`, k)
				if _, err := buckets.Patch(ctx, name, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
					return err
				}
			}
			return nil
		})
		elapsed := time.Since(start)
		used := machineCPU().minus(cpuBefore)
		if err != nil {
			return 0, 0, nil, nil, fmt.Errorf("the API bound: %w", err)
		}
		r := float64(n*writes) / elapsed.Seconds()
		tried[w] = r
		if r > rate {
			rate, workers, cpu = r, w, used
		}
		if err := buckets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return 0, 0, nil, nil, err
		}
	}
	return rate, workers, tried, cpu, nil
}

// measureBound measures both halves of the bound for what our burst did per Bucket.
func measureBound(ctx context.Context, s *servers, ours *result, accessKey, secretKey string) (*bound, error) {
	b := &bound{}
	var skipped []string
	b.mix, skipped = s3Mix(ours.s3, ours.n)
	if len(skipped) > 0 {
		logf("bound         S3 calls the bound does not make: %s", strings.Join(skipped, ", "))
	}
	var err error
	if b.s3Rate, b.s3Workers, b.s3Tried, err = measureS3(ctx, s, b.mix, ours.n, accessKey, secretKey); err != nil {
		return nil, err
	}
	b.writes = max(1, int(math.Round(ours.api.total()/float64(ours.n))+1)) // + the create
	if b.apiRate, b.apiWorkers, b.apiTried, b.apiCPU, err = measureAPI(ctx, s, b.writes, ours.n); err != nil {
		return nil, err
	}
	b.s3Time = time.Duration(float64(ours.n*len(b.mix)) / b.s3Rate * float64(time.Second))
	b.apiTime = time.Duration(float64(ours.n*b.writes) / b.apiRate * float64(time.Second))
	b.time = max(b.s3Time, b.apiTime)
	return b, nil
}

// rates prints tried concurrencies and their rates: "4: 812/s, 16: 1033/s".
func rates(tried map[int]float64) string {
	var ws []int
	for w := range tried {
		ws = append(ws, w)
	}
	sort.Ints(ws)
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%d: %.0f/s", w, tried[w]))
	}
	return strings.Join(parts, ", ")
}
