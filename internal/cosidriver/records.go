package cosidriver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A grant record is the driver's intent to make the principal of one access, written before it
// asks the contract API for it: a ConfigMap in the driver's namespace named after the
// principal's idempotency key, holding the bucket id and the access name. COSI's sidecar v0.1.0
// never calls DriverRevokeBucketAccess; the record is what lets the driver revoke on its own
// what no BucketAccess holds any more (Revoker), including a principal whose creation was
// interrupted. It lives apart from COSI's objects because the sidecar writes a BucketAccess
// from the copy it read before the grant: a write of the driver's there would make the
// sidecar's status write conflict.
const (
	// RecordLabel marks the driver's grant records, for listing them.
	RecordLabel = "cosi.storage.osm.dev/grant"

	recordBucketID = "bucketID"
	recordAccess   = "access"
)

// accessPrefix is how COSI's sidecar names an access in DriverGrantBucketAccessRequest.name:
// "ba-" and the BucketAccess's UID (its pkg/consts AccountNamePrefix).
const accessPrefix = "ba-"

// accessUID is the UID of the BucketAccess an access name stands for, "" for a name that is not
// the sidecar's: such a grant has no BucketAccess to follow, and is only revoked when asked.
func accessUID(name string) string {
	uid, ok := strings.CutPrefix(name, accessPrefix)
	if !ok || uuid.Validate(uid) != nil {
		return ""
	}
	return uid
}

// grantRecord is one record, as read back.
type grantRecord struct {
	name   string
	bucket bucketID
	access string
}

// recordGrant writes the record of the access name to bucket id unless it is there, before the
// principal is asked for. A grant of a name that is not the sidecar's is not recorded.
func (d *Driver) recordGrant(ctx context.Context, id bucketID, name string) error {
	if d.recordNamespace == "" || accessUID(name) == "" {
		return nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.recordNamespace, Name: grantKey(id, name),
			Labels: map[string]string{RecordLabel: "true"}},
		Data: map[string]string{recordBucketID: id.String(), recordAccess: name},
	}
	if err := d.kube.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("recording the grant of %s to bucket %s: %w", name, id, err)
	}
	return nil
}

// records lists the grant records, from the API server.
func (d *Driver) records(ctx context.Context) ([]grantRecord, error) {
	var list corev1.ConfigMapList
	if err := d.kube.List(ctx, &list, client.InNamespace(d.recordNamespace), client.HasLabels{RecordLabel}); err != nil {
		return nil, fmt.Errorf("listing grant records in %s: %w", d.recordNamespace, err)
	}
	out := make([]grantRecord, 0, len(list.Items))
	for _, cm := range list.Items {
		id, err := parseBucketID(cm.Data[recordBucketID])
		if err != nil || accessUID(cm.Data[recordAccess]) == "" {
			d.log.Info("Ignoring a grant record it cannot read", "record", cm.Name)
			continue
		}
		out = append(out, grantRecord{name: cm.Name, bucket: id, access: cm.Data[recordAccess]})
	}
	return out, nil
}

// forget deletes a record whose access is revoked.
func (d *Driver) forget(ctx context.Context, r grantRecord) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: d.recordNamespace, Name: r.name}}
	if err := d.kube.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting grant record %s: %w", r.name, err)
	}
	return nil
}
