package faults

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// step is one thing a user does in the sieve's workload; the run settles after each.
type step struct {
	name string
	do   func(r *run)
	// stale marks the steps after which a stale view is most dangerous: a deletion, a
	// recreation under the same name, a rotation.
	stale bool
}

// The workload: two Contracts (Delete, Retain), three Buckets with settings, three BucketAccesses
// (one rotated, one deleted and made again under its name, one over two Buckets and then
// narrowed to one), an Application with a backup and a
// restore, user data, and every deletion in the order a user goes. The stack has no
// kube-controller-manager, so the harness plays its part where the workload needs it: the
// CronJob's run (a snapshot written with the backup's key, the CronJob's status), the restore
// Job's completion, and the garbage collector (collectGarbage).
var workload = []step{
	{name: "buy contracts", do: func(r *run) {
		r.create(contract("owner", storagev1alpha1.ReclaimPolicyDelete))
		r.create(contract("keeper", storagev1alpha1.ReclaimPolicyRetain))
	}},
	{name: "create buckets", do: func(r *run) {
		r.create(dataBucket(r.ns))
		r.create(bucket(r.ns, "archive", "keeper", storagev1alpha1.ReclaimPolicyRetain, storagev1alpha1.CannedACLPublicRead))
		r.create(bucket(r.ns, "scratch", "owner", storagev1alpha1.ReclaimPolicyDelete, storagev1alpha1.CannedACLPrivate))
	}},
	{name: "issue bucketaccesses", do: func(r *run) {
		r.create(access("writer", "data", storagev1alpha1.AccessReadWrite))
		r.create(access("reader", "archive", storagev1alpha1.AccessReadOnly))
	}},
	{name: "issue a key over two buckets", do: func(r *run) { r.create(sharedAccess()) }},
	{name: "deploy application", do: func(r *run) { r.create(webApp()) }},
	{name: "write data and a backup", do: (*run).writeData},
	{name: "change bucket settings", do: func(r *run) {
		r.update(&storagev1alpha1.Bucket{}, "data", func(o client.Object) {
			o.(*storagev1alpha1.Bucket).Spec.Tags["stage"] = "two"
		})
	}},
	{name: "rotate writer's key", stale: true, do: func(r *run) {
		r.annotate(&storagev1alpha1.BucketAccess{}, "writer", storagev1alpha1.RotateKeyAnnotation, "r1")
	}},
	{name: "ask for a restore", do: func(r *run) { r.annotate(&paasv1alpha1.Application{}, "web", paasv1alpha1.RestoreAnnotation, "snap-1") }},
	{name: "restore job completes", do: (*run).completeRestore},
	// The key loses scratch and keeps data: scratch's policy stops naming it, and it is refused
	// there, before scratch goes.
	{name: "narrow the shared key to one bucket", stale: true, do: func(r *run) {
		r.update(&storagev1alpha1.BucketAccess{}, "shared", func(o client.Object) {
			a := o.(*storagev1alpha1.BucketAccess)
			a.Spec.Buckets = a.Spec.Buckets[:1]
		})
	}},
	{name: "delete scratch", stale: true, do: func(r *run) { r.remove(&storagev1alpha1.Bucket{}, "scratch") }},
	{name: "recreate scratch", stale: true, do: func(r *run) {
		r.create(bucket(r.ns, "scratch", "owner", storagev1alpha1.ReclaimPolicyDelete, storagev1alpha1.CannedACLPrivate))
	}},
	{name: "delete reader", stale: true, do: func(r *run) { r.remove(&storagev1alpha1.BucketAccess{}, "reader") }},
	{name: "recreate reader", stale: true, do: func(r *run) { r.create(access("reader", "archive", storagev1alpha1.AccessReadOnly)) }},
	{name: "delete application", stale: true, do: func(r *run) { r.remove(&paasv1alpha1.Application{}, "web") }},
	{name: "delete bucketaccesses", stale: true, do: func(r *run) {
		r.remove(&storagev1alpha1.BucketAccess{}, "writer")
		r.remove(&storagev1alpha1.BucketAccess{}, "reader")
		r.remove(&storagev1alpha1.BucketAccess{}, "shared")
	}},
	{name: "empty and delete buckets", stale: true, do: func(r *run) {
		r.emptyBucket("data")
		for _, name := range []string{"data", "archive", "scratch"} {
			r.remove(&storagev1alpha1.Bucket{}, name)
		}
	}},
	{name: "delete contracts", stale: true, do: func(r *run) {
		r.remove(&storagev1alpha1.Contract{}, "owner")
		r.remove(&storagev1alpha1.Contract{}, "keeper")
	}},
}

func contract(name string, policy storagev1alpha1.ReclaimPolicy) *storagev1alpha1.Contract {
	return &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1alpha1.ContractSpec{Plan: "standard", ReclaimPolicy: policy}}
}

func bucket(ns, name, contract string, policy storagev1alpha1.ReclaimPolicy, acl storagev1alpha1.CannedACL) *storagev1alpha1.Bucket {
	return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1alpha1.BucketSpec{BucketName: ns + "-" + name, ContractName: contract, BucketReclaimPolicy: policy,
			CannedACL: acl, Tags: map[string]string{"app": "sieve"}}}
}

// dataBucket has every setting versitygw implements: a policy of the user's (which the
// BucketAccesses' statements join), CORS rules and tags.
func dataBucket(ns string) *storagev1alpha1.Bucket {
	b := bucket(ns, "data", "owner", storagev1alpha1.ReclaimPolicyDelete, "")
	b.Spec.Policy = &runtime.RawExtension{Raw: fmt.Appendf(nil, `{"Version":"2012-10-17","Statement":[{"Sid":"PublicReports",`+
		`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/public/*"}]}`, b.Spec.BucketName)}
	b.Spec.CORS = &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{{
		AllowedOrigins: []string{"https://app.example.com"}, AllowedMethods: []storagev1alpha1.CORSMethod{"GET"}}}}
	return b
}

func access(name, bucket string, mode storagev1alpha1.AccessMode) *storagev1alpha1.BucketAccess {
	return &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(bucket), Access: mode,
			Rotation: &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 24 * 3600e9}, Overlap: &metav1.Duration{Duration: 1e9}}}}
}

// sharedAccess is one key over two Buckets of one Contract: data to read, scratch to write
// under a prefix.
func sharedAccess() *storagev1alpha1.BucketAccess {
	return &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: storagev1alpha1.BucketAccessSpec{Buckets: []storagev1alpha1.AccessBucket{
			{Name: "data", Access: storagev1alpha1.AccessReadOnly},
			{Name: "scratch", Access: storagev1alpha1.AccessReadWrite, Prefix: "tmp/"},
		}}}
}

func webApp() *paasv1alpha1.Application {
	return &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: paasv1alpha1.ApplicationSpec{Image: "app:1", Buckets: []paasv1alpha1.BucketLink{{Name: "data"}},
			Backup: &paasv1alpha1.Backup{Bucket: "data", Schedule: "0 3 * * *",
				Command:        []string{"sh", "-c", "backup"},
				RestoreCommand: []string{"sh", "-c", "restore"}}}}
}

// create makes obj in the run's namespace.
func (r *run) create(obj client.Object) {
	r.t.Helper()
	obj.SetNamespace(r.ns)
	obj.SetResourceVersion("")
	r.scenario.create(obj)
}

// update changes the object of that name as mutate says, retrying conflicts.
func (r *run) update(obj client.Object, name string, mutate func(client.Object)) {
	r.t.Helper()
	for {
		if err := r.k8s.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: name}, obj); err != nil {
			r.t.Fatal(err)
		}
		mutate(obj)
		err := r.k8s.Update(r.ctx, obj)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			r.t.Fatal(err)
		}
	}
}

func (r *run) annotate(obj client.Object, name, key, value string) {
	r.t.Helper()
	obj.SetNamespace(r.ns)
	obj.SetName(name)
	patch := client.RawPatch(k8stypes.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, key, value))
	if err := r.k8s.Patch(r.ctx, obj, patch); err != nil {
		r.t.Fatal(err)
	}
}

// remove deletes the object of that name; the run's settling waits until it is gone.
func (r *run) remove(obj client.Object, name string) {
	r.t.Helper()
	obj.SetNamespace(r.ns)
	obj.SetName(name)
	if err := r.k8s.Delete(r.ctx, obj); client.IgnoreNotFound(err) != nil {
		r.t.Fatal(err)
	}
}

// writeData puts a user's objects into two buckets with the keys a user has (the writer's, the
// keeper account's), and plays the backup CronJob: one run's snapshot, written with the
// backup's WriteOnly key, and the CronJob's status saying it succeeded.
func (r *run) writeData() {
	r.t.Helper()
	r.putObject("writer-credentials", "data", "report.csv", "a,b\n1,2\n")
	r.putObject("keeper-credentials", "archive", "kept.txt", "kept")
	r.putObject("web-backup-credentials", "data", "web/snap-1/dump.sql", "select 1;")
	r.finishBackupRun(webApp())
}

// putObject writes an object with the keys in a Secret, as a workload that mounts it would.
func (r *run) putObject(secretName, bucket, key, body string) {
	r.t.Helper()
	secret := &corev1.Secret{}
	if err := r.k8s.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: secretName}, secret); err != nil {
		r.t.Fatal(err)
	}
	c := localenv.NewS3Client(r.stk.S3.Direct, r.stk.S3.Region,
		string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
	if _, err := c.PutObject(r.ctx, &s3.PutObjectInput{Bucket: aws.String(r.ns + "-" + bucket), Key: aws.String(key),
		Body: strings.NewReader(body)}); err != nil {
		r.t.Fatalf("putting %s into %s with %s: %v", key, bucket, secretName, err)
	}
}

// completeRestore plays the Job controller: the restore Job succeeded.
func (r *run) completeRestore() {
	r.t.Helper()
	app := &paasv1alpha1.Application{}
	if err := r.k8s.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: "web"}, app); err != nil || app.Status.Restore == nil {
		r.t.Fatalf("the restore did not start: %v", err)
	}
	r.succeedJob(app.Status.Restore.Job)
}
