package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// singleRuns is how many Buckets are made one at a time for the single-Bucket latency.
const singleRuns = 20

// bucketObject is a Bucket of the benchmark, with reclaim policy Delete.
func bucketObject(ns, name, bucketName, contract string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": storagev1alpha1.GroupVersion.String(), "kind": "Bucket",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"bucketName":          bucketName,
			"contractName":        contract,
			"bucketReclaimPolicy": string(storagev1alpha1.ReclaimPolicyDelete),
		},
	}}
}

// oneAtATime makes singleRuns Buckets in ns one after the other, on a system with nothing else
// to do, and returns the median time from a create's answer to that Bucket's Ready, and the
// Buckets' names (for their deletion).
func oneAtATime(ctx context.Context, t *tracker, ns string) (time.Duration, []string, error) {
	var took []time.Duration
	var names []string
	for i := range singleRuns {
		name := fmt.Sprintf("one-%d", i)
		names = append(names, name)
		obj := bucketObject(ns, name, fmt.Sprintf("%s-one-%d", ns, i), contractName(0))
		if err := t.createAll(ctx, []*unstructured.Unstructured{obj}, 1); err != nil {
			return 0, names, err
		}
		if t.waitReady(ctx, []string{name}, time.Minute) != 1 {
			return 0, names, fmt.Errorf("bucket %s not Ready within a minute", name)
		}
		per, _ := t.latencies([]string{name}, time.Now())
		took = append(took, per...)
	}
	slices.Sort(took)
	return percentile(took, 0.5), names, nil
}

// singleBound is the minimal bound of one Bucket's creation after its create was answered: the
// S3 calls of minimalMix and one status write (a Ready Bucket's, as the operator sends it), one
// after the other as a controller must make them, from plain clients on the idle system; the
// median of singleRuns.
func singleBound(ctx context.Context, s *servers, sample *unstructured.Unstructured, c *s3.Client, tagsAtCreation bool, tag string) (time.Duration, error) {
	ns := "bound-" + tag + "-one"
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{boundLabel: "true"}}},
		metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	statusBody, _, _ := unstructured.NestedMap(sample.Object, "status")
	_, manager := writers(sample)
	do := s3OpsByName(tagsAtCreation)
	buckets := s.dyn.Resource(bucketGVR).Namespace(ns)
	var took []time.Duration
	for i := range singleRuns {
		name, bucket := fmt.Sprintf("one-%d", i), fmt.Sprintf("%s-%d", ns, i)
		if _, err := buckets.Create(ctx, bucketObject(ns, name, bucket, contractName(0)), metav1.CreateOptions{}); err != nil {
			return 0, err
		}
		body := runtime.DeepCopyJSON(statusBody)
		body["bucketName"] = bucket
		patch, err := json.Marshal(map[string]any{"status": body})
		if err != nil {
			return 0, err
		}
		start := time.Now()
		for _, op := range minimalMix {
			if err := do[op](ctx, c, bucket); err != nil && op == "CreateBucket" {
				return 0, fmt.Errorf("the single bound's CreateBucket: %w", err)
			}
		}
		if _, err := s.meta.Resource(bucketGVR).Namespace(ns).Patch(ctx, name, k8stypes.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: manager}, "status"); err != nil {
			return 0, err
		}
		took = append(took, time.Since(start))
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
	}
	if err := buckets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return 0, err
	}
	slices.Sort(took)
	return percentile(took, 0.5), nil
}
