package paas

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// RetentionRuleID is the lifecycle rule that keeps an Application's backups for its retention.
func RetentionRuleID(app string) string {
	return storagev1alpha1.GeneratedLifecycleRulePrefix + "backup-" + app
}

// BackupRetentionRules are the lifecycle rules the Applications of namespace ask of the Bucket
// named bucket: for each that backs up into it with a retention, expire the objects under its
// backup prefix after that many days. The Bucket controller applies them with the Bucket's own,
// so the Application controller needs no write on Buckets. The rules are written with the
// account's keys, so an Application whose backup the operator refuses gets none: a prefix that
// is not its own folder, one that overlaps the prefix of an Application created before it, or
// a retention on a Bucket it links ReadOnly (application.BackupProblems).
func BackupRetentionRules(ctx context.Context, reader client.Reader, namespace, bucket string) ([]storagev1alpha1.LifecycleRule, error) {
	var list paasv1alpha1.ApplicationList
	if err := reader.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingFields{index.ApplicationBucketField: bucket}); err != nil {
		return nil, fmt.Errorf("listing Applications that link Bucket %q: %w", bucket, err)
	}
	var rules []storagev1alpha1.LifecycleRule
	for i := range list.Items {
		app := &list.Items[i]
		days := app.BackupRetentionDays()
		if days == 0 || app.Spec.Backup.Bucket != bucket || !app.DeletionTimestamp.IsZero() {
			continue
		}
		if len(application.BackupProblems(app, list.Items, func(other *paasv1alpha1.Application) bool { return application.Precedes(other, app) })) > 0 {
			continue
		}
		rules = append(rules, storagev1alpha1.LifecycleRule{
			ID:         RetentionRuleID(app.Name),
			Prefix:     application.BackupPrefix(app),
			Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To(days)},
		})
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	return rules, nil
}
