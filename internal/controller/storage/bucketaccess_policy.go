package storage

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// BucketAccessUsers makes BucketAccesses users of their Bucket: a Bucket is not deleted while
// one names it, and its policy carries a statement for each that holds a principal.
var BucketAccessUsers = BucketUsers{
	Kind:         "BucketAccess",
	List:         index.BucketAccessesNaming,
	Object:       &storagev1alpha1.BucketAccess{},
	Buckets:      bucketOfAccess,
	Changed:      accessChangedForBucket,
	PolicyGrants: AccessGrants,
}

// AccessGrants returns, sorted by name, what the BucketAccesses in namespace that name Bucket
// bucket are to be granted in its policy. One being deleted gets nothing: its statements go
// first, then its principal.
func AccessGrants(ctx context.Context, reader client.Reader, namespace, bucket string) ([]bucketpolicy.AccessGrant, error) {
	list, err := index.BucketAccessesOf(ctx, reader, namespace, bucket)
	if err != nil {
		return nil, err
	}
	var grants []bucketpolicy.AccessGrant
	for _, a := range list {
		if !a.DeletionTimestamp.IsZero() || a.Status.PolicyPrincipal == nil || a.Status.PrincipalID == "" {
			continue
		}
		var principal map[string]any
		if err := json.Unmarshal(a.Status.PolicyPrincipal.Raw, &principal); err != nil || len(principal) == 0 {
			continue
		}
		grants = append(grants, bucketpolicy.AccessGrant{Name: a.Name, Access: string(a.Spec.Access), Prefix: string(a.Spec.Prefix), Principal: principal})
	}
	slices.SortFunc(grants, func(a, b bucketpolicy.AccessGrant) int { return strings.Compare(a.Name, b.Name) })
	return grants, nil
}

func bucketOfAccess(_ context.Context, obj client.Object) []reconcile.Request {
	a, ok := obj.(*storagev1alpha1.BucketAccess)
	if !ok || string(a.Spec.Bucket) == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: a.Namespace, Name: string(a.Spec.Bucket)}}}
}

// accessChangedForBucket lets through what changes a Bucket's policy or its users: a
// BucketAccess made, deleted or starting deletion, and a new principal element (a key added or
// revoked on a server that names principals by key).
var accessChangedForBucket = updated(func(before, after *storagev1alpha1.BucketAccess) bool {
	return before.Generation != after.Generation ||
		before.DeletionTimestamp.IsZero() != after.DeletionTimestamp.IsZero() ||
		before.Status.PrincipalID != after.Status.PrincipalID ||
		string(rawOrNil(before.Status.PolicyPrincipal)) != string(rawOrNil(after.Status.PolicyPrincipal))
})

func rawOrNil(r *runtime.RawExtension) []byte {
	if r == nil {
		return nil
	}
	return r.Raw
}
