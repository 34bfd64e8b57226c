package paas

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

func TestBackupRetentionRules(t *testing.T) {
	created := metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := func(name, backupBucket, retention, prefix string, mutate ...func(*paasv1alpha1.Application)) *paasv1alpha1.Application {
		a := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, CreationTimestamp: created},
			Spec: paasv1alpha1.ApplicationSpec{Image: "web:1",
				Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs"}},
				Backup:  &paasv1alpha1.Backup{Bucket: backupBucket, Schedule: "@daily", Command: []string{"b"}, Retention: retention, Prefix: prefix}}}
		for _, m := range mutate {
			m(a)
		}
		return a
	}
	later := func(a *paasv1alpha1.Application) { a.CreationTimestamp = metav1.NewTime(created.Add(time.Hour)) }
	readOnly := func(a *paasv1alpha1.Application) { a.Spec.Buckets[0].Access = storagev1alpha1.AccessReadOnly }
	scheme := runtime.NewScheme()
	if err := paasv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(
		app("web", "photos", "14d", ""),
		app("shop", "photos", "7d", "shop-backups/"),
		app("blog", "photos", "", ""),  // no retention
		app("api", "logs", "30d", ""),  // backs up elsewhere
		app("odd", "photos", "2w", ""), // not days (the schema admits only days): no rule
		// What the operator refuses, whatever admission let through: no rule, as the account's
		// keys would expire what the Application may not touch.
		app("a-thief", "photos", "1d", "web/", later),                   // web's prefix, taken later (and sorting first)
		app("b-thief", "photos", "1d", "shop-backups/old/", later),      // inside shop's
		app("reader", "photos", "1d", "reader/", later, readOnly),       // its link may not delete
		app("expands", "photos", "1d", "$(PHOTOS_BUCKET)/", later),      // the pod would write elsewhere
		app("climbs", "photos", "1d", "climbs/../shop-backups/", later), // a path tool would write elsewhere
		app("bare", "photos", "1d", "bare", later),                      // also covers bare-metal/
	).WithIndex(&paasv1alpha1.Application{}, index.ApplicationBucketField, func(o client.Object) []string {
		return index.LinkedBuckets(o.(*paasv1alpha1.Application))
	}).Build()

	got, err := BackupRetentionRules(context.Background(), reader, "team", "photos")
	if err != nil {
		t.Fatal(err)
	}
	want := []storagev1alpha1.LifecycleRule{
		{ID: "osm-backup-shop", Prefix: "shop-backups/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](7)}},
		{ID: "osm-backup-web", Prefix: "web/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BackupRetentionRules (-want +got):\n%s", diff)
	}
}
