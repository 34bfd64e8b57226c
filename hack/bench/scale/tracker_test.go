package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The tracker follows Buckets in etcd: it sees one created, Ready once its Ready condition is
// stored, and gone once it is deleted.
func TestTrackerSeesBucketsComeBecomeReadyAndGoInEtcd(t *testing.T) {
	env, cfg, err := localenv.StartControlPlane(localenv.ControlPlaneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "track"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := newTracker(ctx, dyn, env.ControlPlane.Etcd.URL.String(), bucketGVR, "track", storagev1alpha1.ReadyCondition)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()

	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": storagev1alpha1.GroupVersion.String(), "kind": "Bucket",
		"metadata": map[string]any{"name": "b", "namespace": "track"},
		"spec":     map[string]any{"bucketName": "track-b", "contractName": "c"},
	}}
	if err := tr.createAll(ctx, []*unstructured.Unstructured{b}, 1); err != nil {
		t.Fatal(err)
	}
	setConditions := func(conds ...map[string]any) {
		t.Helper()
		obj, err := dyn.Resource(bucketGVR).Namespace("track").Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		list := make([]any, 0, len(conds))
		for _, c := range conds {
			list = append(list, c)
		}
		if err := unstructured.SetNestedSlice(obj.Object, list, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(bucketGVR).Namespace("track").UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	condition := func(typ, status string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": "Test", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	setConditions(condition(storagev1alpha1.ReadyCondition, "False"), condition(storagev1alpha1.InUseCondition, "True"))
	if n := tr.waitFor(ctx, 10*time.Second, func() int { return len(tr.present) }, 1); n != 1 {
		t.Fatal("the created Bucket was not seen")
	}
	setConditions(condition(storagev1alpha1.ReadyCondition, "True"))
	if got := tr.waitReady(ctx, []string{"b"}, 10*time.Second); got != 1 {
		t.Fatal("the Bucket was not seen Ready after its Ready condition was stored")
	}
	tr.mu.Lock()
	readyAt, createdAt := tr.ready["b"], tr.created["b"]
	tr.mu.Unlock()
	if readyAt.Before(createdAt) {
		t.Errorf("Ready at %s, before its create returned at %s", readyAt, createdAt)
	}
	if err := tr.deleteAll(ctx, []string{"b"}, 1); err != nil {
		t.Fatal(err)
	}
	if got := tr.waitGone(ctx, []string{"b"}, 10*time.Second); got != 1 {
		t.Error("the deleted Bucket was still seen")
	}
}

func TestOnlyAStoredReadyConditionThatIsTrueCounts(t *testing.T) {
	for stored, want := range map[string]bool{
		`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`:                                   true,
		`{"status":{"conditions":[{"type":"InUse","status":"True"},{"type":"Ready","status":"False"}]}}`: false,
		`{"status":{"conditions":[{"type":"ReadyToo","status":"True"}]}}`:                                false,
		`{"spec":{"bucketName":"b"}}`: false,
		`not json`:                    false,
	} {
		if got := storedConditionTrue([]byte(stored), storagev1alpha1.ReadyCondition); got != want {
			t.Errorf("Ready in %s: %v, want %v", stored, got, want)
		}
	}
}

func TestAccessLogLinesNameTheirOperation(t *testing.T) {
	for line, want := range map[string]string{
		`owner b-1 [25/November/2026:21:11:11 +0000] 127.0.0.1 AKIA 1F2E s3_GetBucketAcl - /b-1?acl 200 - 412 0 1 1 - aws-sdk-go-v2 - 3A - SigV4 - AuthHeader s3.us-east-1.amazonaws.com - arn:aws:s3:::b-1 Yes`: "GetBucketAcl",
		`- - [25/November/2026:21:11:11 +0000] 127.0.0.1 AKIA 1F2F s3_ListAllMyBuckets - / 200 - 90 0 1 1 - aws-sdk-go-v2 - 3B - SigV4 - AuthHeader - - arn:aws:s3::: Yes`:                                       "ListBuckets",
	} {
		if got, ok := accessLogOperation([]byte(line)); !ok || got != want {
			t.Errorf("operation %q (%v), want %q, of %s", got, ok, want, line)
		}
	}
	if op, ok := accessLogOperation([]byte("log starts 2026-11-25 21:11:11 +0000 UTC")); ok {
		t.Errorf("the log's first line read as operation %q", op)
	}
}

// A line the gateway has not finished writing is counted once it is whole, and never twice.
func TestTheAccessLogIsCountedOnceLineByLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	line := "- b [25/November/2026:22:20:15 +0000] 127.0.0.1 - REQ s3_HeadBucket - /b 404 NoSuchBucket 0 0 0 0\n"
	if err := os.WriteFile(path, []byte("log starts now\n"+line+line[:40]), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newS3LogCounter(path)
	if got := c.snapshot()["HeadBucket"]; got != 1 {
		t.Errorf("after one whole line and half of another: %v HeadBucket, want 1", got)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(line[40:])
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	if got := c.snapshot()["HeadBucket"]; got != 2 {
		t.Errorf("once the second line is whole: %v HeadBucket, want 2", got)
	}
	if got := c.snapshot()["HeadBucket"]; got != 2 {
		t.Errorf("with nothing new: %v HeadBucket, want 2", got)
	}
}
