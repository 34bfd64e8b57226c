package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// object is what the test keeps of one object of the workload.
type object struct {
	resourceVersion string
	status          map[string]any
	ready           string // "True", "False" or "" (none yet)
}

// secret is what the test keeps of one Secret.
type secret struct {
	resourceVersion string
	data            map[string][]byte
	accessKeyID     string
	secretKey       string
}

type snapshot struct {
	objects map[string]object // "Bucket/photos"
	secrets map[string]secret
}

// snapshot reads every object of the four kinds and every Secret of the namespace.
func (w *workload) snapshot() snapshot {
	w.t.Helper()
	s := snapshot{objects: map[string]object{}, secrets: map[string]secret{}}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := w.c.List(w.ctx, list, client.InNamespace(ns)); err != nil {
			w.t.Fatal(err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			st, _ := u.Object["status"].(map[string]any)
			ready, _ := readyOf(u)
			s.objects[gvk.Kind+"/"+u.GetName()] = object{resourceVersion: u.GetResourceVersion(), status: st, ready: ready}
		}
	}
	var secrets corev1.SecretList
	if err := w.c.List(w.ctx, &secrets, client.InNamespace(ns)); err != nil {
		w.t.Fatal(err)
	}
	for _, sec := range secrets.Items {
		s.secrets[sec.Name] = secret{resourceVersion: sec.ResourceVersion, data: sec.Data,
			accessKeyID: string(sec.Data[storagev1alpha1.SecretKeyAccessKeyID]), secretKey: string(sec.Data[storagev1alpha1.SecretKeySecretAccessKey])}
	}
	return s
}

// readyOf is u's Ready condition: its status and reason, and whether it describes u's
// current generation.
func readyOf(u *unstructured.Unstructured) (status string, current bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == storagev1alpha1.ReadyCondition {
			gen, _ := m["observedGeneration"].(int64)
			return fmt.Sprint(m["status"]), gen == u.GetGeneration()
		}
	}
	return "", false
}

// readyReason says whether u, read again, is Ready.
func (w *workload) readyReason(u *unstructured.Unstructured) (string, bool) {
	got := u.DeepCopy()
	if err := w.c.Get(w.ctx, client.ObjectKeyFromObject(u), got); err != nil {
		return err.Error(), false
	}
	status, current := readyOf(got)
	return fmt.Sprintf("%s %s: Ready %q", got.GetKind(), got.GetName(), status), status == "True" && current
}

// changes are what an upgrade changed between two snapshots. A Secret's data is what its
// consumers read: its metadata may gain what a newer manager holds it by (a finalizer, a
// label). A status keeps every field it had; a newer manager may add fields it observes.
type changes struct{ keysRotated, secretsRewritten, statusesChanged, secretsRelabelled, statusesExtended int }

func diff(t interface{ Logf(string, ...any) }, before, after snapshot) changes {
	var d changes
	for name, b := range before.secrets {
		a, ok := after.secrets[name]
		switch {
		case !ok || !reflect.DeepEqual(a.data, b.data):
			d.secretsRewritten++
			t.Logf("Secret %s was rewritten (or deleted)", name)
		case a.resourceVersion != b.resourceVersion:
			d.secretsRelabelled++
			t.Logf("Secret %s: its metadata changed, its data did not", name)
		}
		if a.accessKeyID != b.accessKeyID {
			d.keysRotated++
			t.Logf("Secret %s holds another key", name)
		}
	}
	for name, b := range before.objects {
		a := after.objects[name]
		if strings.HasPrefix(name, "Bucket/") {
			a.status = withoutNewDeny(b.status, a.status)
		}
		kept := map[string]any{}
		for field := range b.status {
			kept[field] = a.status[field]
		}
		switch {
		case !reflect.DeepEqual(kept, b.status):
			d.statusesChanged++
			before, _ := json.Marshal(b.status)
			after, _ := json.Marshal(a.status)
			t.Logf("the status of %s changed:\nbefore %s\nafter  %s", name, before, after)
		case len(a.status) > len(b.status):
			d.statusesExtended++
			for field := range a.status {
				if _, had := b.status[field]; !had {
					t.Logf("the status of %s gained %s", name, field)
				}
			}
		}
	}
	return d
}

// revokedKeys counts the keys of before's Secrets that the server no longer knows. Each is
// tried with the key itself; a key refused for what it may do is still a key.
func (w *workload) revokedKeys(before snapshot) int {
	revoked := 0
	for name, s := range before.secrets {
		if s.accessKeyID == "" {
			continue
		}
		c := localenv.NewS3Client(w.stk.S3.Direct, w.stk.S3.Region, s.accessKeyID, s.secretKey)
		_, err := c.ListBuckets(w.ctx, &s3.ListBucketsInput{})
		if code := objectstore.ErrorCode(err); code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" {
			revoked++
			w.t.Logf("the key of Secret %s no longer works: %v", name, err)
		}
	}
	return revoked
}

// settle waits until every object's Ready describes its generation, the manager has looked at
// each object at least once since it started, its queues are empty, and nothing in the
// namespace changed for three seconds.
func (w *workload) settle(when string) {
	w.t.Helper()
	var last snapshot
	quietSince := time.Now()
	w.waitFor("the workload to settle "+when, func() (string, bool) {
		for _, gvk := range kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := w.c.List(w.ctx, list, client.InNamespace(ns)); err != nil {
				return err.Error(), false
			}
			for i := range list.Items {
				if _, current := readyOf(&list.Items[i]); !current {
					return fmt.Sprintf("%s %s has no Ready of its generation", gvk.Kind, list.Items[i].GetName()), false
				}
			}
			if why, ok := w.reconciledAll(gvk.Kind, len(list.Items)); !ok {
				return why, false
			}
		}
		now := w.snapshot()
		if !sameVersions(now, last) {
			last, quietSince = now, time.Now()
		}
		return "changes in the last three seconds", time.Since(quietSince) > 3*time.Second
	})
}

func sameVersions(a, b snapshot) bool {
	if len(a.objects) != len(b.objects) || len(a.secrets) != len(b.secrets) {
		return false
	}
	for name, o := range a.objects {
		if b.objects[name].resourceVersion != o.resourceVersion {
			return false
		}
	}
	for name, s := range a.secrets {
		if b.secrets[name].resourceVersion != s.resourceVersion {
			return false
		}
	}
	return true
}

// reconciledAll says whether the running manager has reconciled kind at least n times and
// holds none of it in its queue.
func (w *workload) reconciledAll(kind string, n int) (string, bool) {
	controller := map[string]string{"Contract": "contract", "Bucket": "bucket", "BucketAccess": "bucketaccess", "Application": "application"}[kind]
	passes, queued, err := w.stk.ReconcileCounts(w.ctx)
	if err != nil {
		return err.Error(), false
	}
	return fmt.Sprintf("controller %s: %.0f passes for %d objects, %.0f queued", controller, passes[controller], n, queued[controller]),
		passes[controller] >= float64(n) && queued[controller] == 0
}

// watchReady watches the four kinds from now on and counts the objects whose Ready was True in
// before and is seen, at any moment, as anything else.
func (w *workload) watchReady(before snapshot) *readyWatch {
	w.t.Helper()
	wc, err := client.NewWithWatch(w.stk.Config, client.Options{Scheme: w.c.Scheme()})
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	rw := &readyWatch{cancel: cancel, lost: map[string]bool{}}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		watcher, err := wc.Watch(ctx, list, client.InNamespace(ns))
		if err != nil {
			w.t.Fatal(err)
		}
		rw.wg.Add(1)
		go func() {
			defer rw.wg.Done()
			defer watcher.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-watcher.ResultChan():
					if !ok {
						return
					}
					u, isObj := ev.Object.(*unstructured.Unstructured)
					if !isObj || ev.Type == watch.Bookmark {
						continue
					}
					name := gvk.Kind + "/" + u.GetName()
					if status, _ := readyOf(u); before.objects[name].ready == "True" && (status != "True" || ev.Type == watch.Deleted) {
						rw.mu.Lock()
						rw.lost[name] = true
						rw.mu.Unlock()
						w.t.Logf("%s: Ready %q during the upgrade", name, status)
					}
				}
			}
		}()
	}
	return rw
}

type readyWatch struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	lost   map[string]bool
}

// stop ends the watches and says how many objects lost their Ready.
func (rw *readyWatch) stop() int {
	rw.cancel()
	rw.wg.Wait()
	return len(rw.lost)
}

func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

func metavTime() *metav1.Time {
	now := metav1.Now()
	return &now
}
