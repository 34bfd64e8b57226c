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
// bucket are to be granted in its policy: the access and prefix spec.buckets (or spec.access
// and spec.prefix) give it there. One being deleted gets nothing: its statements go first, then
// its principal; one that no longer names the Bucket is not listed, so its statements go.
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
		item, ok := a.AccessBucketNamed(bucket)
		if !ok {
			continue
		}
		grants = append(grants, bucketpolicy.AccessGrant{Name: a.Name, Access: string(item.Access), Prefix: string(item.Prefix), Principal: principal})
	}
	slices.SortFunc(grants, func(a, b bucketpolicy.AccessGrant) int { return strings.Compare(a.Name, b.Name) })
	return grants, nil
}

// bucketOfAccess maps a BucketAccess to the Buckets whose policy names it: those it names, and
// those status.buckets still lists after they were taken out of spec.buckets. (An update maps
// the object before and after it, so a Bucket taken out is woken too.)
func bucketOfAccess(_ context.Context, obj client.Object) []reconcile.Request {
	a, ok := obj.(*storagev1alpha1.BucketAccess)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	add := func(name string) {
		req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: a.Namespace, Name: name}}
		if name != "" && !slices.Contains(reqs, req) {
			reqs = append(reqs, req)
		}
	}
	for _, b := range a.AccessBuckets() {
		add(string(b.Name))
	}
	for _, st := range a.Status.Buckets {
		add(st.Name)
	}
	return reqs
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
