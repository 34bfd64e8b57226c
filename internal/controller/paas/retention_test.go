package paas

import (
	"context"
	"testing"

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
	app := func(name, backupBucket, retention, prefix string) *paasv1alpha1.Application {
		return &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name},
			Spec: paasv1alpha1.ApplicationSpec{Image: "web:1",
				Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs"}},
				Backup:  &paasv1alpha1.Backup{Bucket: backupBucket, Schedule: "@daily", Command: []string{"b"}, Retention: retention, Prefix: prefix}}}
	}
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
