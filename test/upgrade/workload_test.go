package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// ns is the namespace of the workload; the stack is the test's own.
const ns = "upgrade"

// kinds are the four kinds the workload has objects of.
var kinds = []schema.GroupVersionKind{
	storagev1alpha1.GroupVersion.WithKind("Contract"),
	storagev1alpha1.GroupVersion.WithKind("Bucket"),
	storagev1alpha1.GroupVersion.WithKind("BucketAccess"),
	paasv1alpha1.GroupVersion.WithKind("Application"),
}

// workload is testdata/objects.yaml running on a stack, and what the test plays of the
// controllers the stack lacks (the CronJob's run).
type workload struct {
	ctx context.Context
	t   *testing.T
	stk *stack.Stack
	c   client.Client
}

func newWorkload(ctx context.Context, t *testing.T, stk *stack.Stack) *workload {
	return &workload{ctx: ctx, t: t, stk: stk, c: stk.Client}
}

// create applies the objects; the buckets that the adopted and the observed Bucket name are
// made in the account first, as a user would have.
func (w *workload) create() {
	w.t.Helper()
	if err := w.c.Create(w.ctx, &corev1.Namespace{ObjectMeta: objectMeta("", ns)}); err != nil {
		w.t.Fatal(err)
	}
	objs := w.objects()
	w.apply(objs[0]) // the Contract
	w.waitFor("the Contract Ready", func() (string, bool) { return w.readyReason(objs[0]) })
	account := w.accountClient()
	for _, name := range []string{ns + "-adopted", ns + "-observed"} {
		if _, err := account.CreateBucket(w.ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			w.t.Fatalf("making bucket %s in the account: %v", name, err)
		}
	}
	w.existingKeys()
	for _, o := range objs[1:] {
		w.apply(o)
	}
}

// existingKeys writes the Secret the Contract over an existing account names: the keys of the
// bought one's account, as a user would copy them.
func (w *workload) existingKeys() {
	w.t.Helper()
	var bought corev1.Secret
	w.get("team-credentials", &bought)
	keys := &corev1.Secret{ObjectMeta: objectMeta(ns, "existing-keys"), StringData: map[string]string{}}
	for _, k := range []string{storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey, "AWS_ENDPOINT_URL", "AWS_REGION"} {
		keys.StringData[k] = string(bought.Data[k])
	}
	if err := w.c.Create(w.ctx, keys); err != nil {
		w.t.Fatal(err)
	}
}

// objects reads testdata/objects.yaml for this namespace.
func (w *workload) objects() []*unstructured.Unstructured {
	w.t.Helper()
	raw, err := os.ReadFile("testdata/objects.yaml")
	if err != nil {
		w.t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(bytes.ReplaceAll(raw, []byte("NS-"), []byte(ns+"-"))), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			w.t.Fatalf("testdata/objects.yaml: %v", err)
		}
		if len(u.Object) > 0 {
			u.SetNamespace(ns)
			out = append(out, u)
		}
	}
}

func (w *workload) apply(u *unstructured.Unstructured) {
	w.t.Helper()
	if err := w.c.Create(w.ctx, u); err != nil {
		w.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// accountClient reaches the S3 server directly, past the proxy that counts the operator's
// writes, with the Contract's keys.
func (w *workload) accountClient() *s3.Client {
	w.t.Helper()
	return w.clientFor("team-credentials")
}

// clientFor is an S3 client, straight to the server, with the keys in Secret name.
func (w *workload) clientFor(name string) *s3.Client {
	w.t.Helper()
	var sec corev1.Secret
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: name}, &sec); err != nil {
		w.t.Fatal(err)
	}
	return localenv.NewS3Client(w.stk.S3.Direct, w.stk.S3.Region,
		string(sec.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(sec.Data[storagev1alpha1.SecretKeySecretAccessKey]))
}

// putInFlight leaves work half done across the upgrade: a key rotated and its predecessor in
// its overlap, a backup run played (the CronJob controller's part) and its restore asked for,
// the restore Job never finishing (the stack runs no Job controller).
func (w *workload) putInFlight() {
	w.t.Helper()
	rotating := &storagev1alpha1.BucketAccess{}
	w.get("rotating", rotating)
	w.patch(rotating, fmt.Sprintf(`{"metadata":{"annotations":{%q:"before-upgrade"}}}`, storagev1alpha1.RotateKeyAnnotation))
	w.waitFor("the rotating key's predecessor in its overlap", func() (string, bool) {
		w.get("rotating", rotating)
		st := rotating.Status.KeyStatus
		return fmt.Sprintf("rotatedFor %q, %d retiring", st.RotatedFor, len(st.RetiringKeys)), st.RotatedFor == "before-upgrade" && len(st.RetiringKeys) > 0
	})

	app := &paasv1alpha1.Application{}
	w.get("web", app)
	const snapshot = "snap-1"
	backup := w.clientFor(app.Name + "-backup-credentials")
	key := app.BackupPrefixOrDefault() + snapshot + "/dump.sql"
	if _, err := backup.PutObject(w.ctx, &s3.PutObjectInput{Bucket: aws.String(ns + "-backups"), Key: aws.String(key), Body: strings.NewReader("select 1;")}); err != nil {
		w.t.Fatalf("writing the snapshot with the backup's key: %v", err)
	}
	cj := &batchv1.CronJob{}
	w.get(application.BackupCronJobName(app.Name), cj)
	now := metavTime()
	cj.Status.LastScheduleTime, cj.Status.LastSuccessfulTime = now, now
	if err := w.c.Status().Update(w.ctx, cj); err != nil {
		w.t.Fatal(err)
	}
	w.waitFor("the snapshot in the Application's status", func() (string, bool) {
		w.get("web", app)
		for _, s := range app.Status.Backups {
			if s.Name == snapshot {
				return "", true
			}
		}
		return fmt.Sprintf("status.backups %v", app.Status.Backups), false
	})
	w.patch(app, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, paasv1alpha1.RestoreAnnotation, snapshot))
	w.waitFor("the restore Job", func() (string, bool) {
		w.get("web", app)
		return fmt.Sprintf("status.restore %+v", app.Status.Restore), app.Status.Restore != nil && app.Status.Restore.Job != ""
	})
}

func (w *workload) get(name string, obj client.Object) {
	w.t.Helper()
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		w.t.Fatal(err)
	}
}

func (w *workload) patch(obj client.Object, merge string) {
	w.t.Helper()
	if err := w.c.Patch(w.ctx, obj, client.RawPatch(k8stypes.MergePatchType, []byte(merge))); err != nil {
		w.t.Fatal(err)
	}
}

// waitFor polls done until it says so, for at most three minutes; why says what it waits for.
func (w *workload) waitFor(what string, done func() (why string, ok bool)) {
	w.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		why, ok := done()
		if ok {
			return
		}
		if time.Now().After(deadline) || w.ctx.Err() != nil {
			w.t.Fatalf("waiting for %s: %s", what, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
