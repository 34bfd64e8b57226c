package v1alpha1

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// fakeReviewer answers SubjectAccessReviews as told and records them.
type fakeReviewer struct {
	allow   bool
	err     error
	reviews []authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeReviewer) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	review := obj.(*authorizationv1.SubjectAccessReview)
	f.reviews = append(f.reviews, review.Spec)
	review.Status.Allowed = f.allow
	return f.err
}

const managerUser = "system:serviceaccount:object-storage-manager-system:object-storage-manager-controller-manager"

// Which changes take the verb abandon, retain or empty, who is asked, and what a refusal says. The
// envtest suite checks the same through the API server, with the matchConditions in front.
func TestCostGuard(t *testing.T) {
	bucket := func(finalizers []string, annotations map[string]string) runtime.Object {
		return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data", Finalizers: finalizers, Annotations: annotations}}
	}
	contract := func(plan string, policy storagev1alpha1.ReclaimPolicy) runtime.Object {
		c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team"},
			Spec: storagev1alpha1.ContractSpec{Plan: plan, ReclaimPolicy: policy}}
		if plan == "" {
			c.Spec.Credentials = &storagev1alpha1.ContractCredentials{SecretName: "own-keys"}
		}
		return c
	}
	emptied := func(empty bool) runtime.Object {
		return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"},
			Spec: storagev1alpha1.BucketSpec{BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
				Deletion: &storagev1alpha1.BucketDeletion{EmptyOnDelete: empty}}}
	}
	ours := []string{storagev1alpha1.Finalizer}
	abandon := map[string]string{storagev1alpha1.AbandonAnnotation: "true"}
	const emptyRefusal = `spec.deletion.emptyOnDelete: Forbidden: emptyOnDelete lets deleting the Bucket delete every object in its bucket, which cannot be undone; it takes verb empty on buckets.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`
	const tenant = "alice"
	tests := []struct {
		name     string
		verb     string
		user     string
		old, obj runtime.Object // old nil: a creation
		// allow is the reviewer's answer; reviewed whether one is asked.
		allow, reviewed bool
		// refused are the refusal's causes; none: admitted.
		refused []string
	}{
		{name: "the manager removes its finalizer, unasked", verb: storagev1alpha1.VerbAbandon, user: managerUser,
			old: bucket(ours, nil), obj: bucket(nil, nil)},
		{name: "a tenant removes the finalizer", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(append(ours, "example.com/mine"), nil), obj: bucket([]string{"example.com/mine"}, nil), reviewed: true, refused: []string{
				`metadata.finalizers: Forbidden: removing storage.osm.dev/finalizer lets the Bucket go without releasing what it holds at the provider (delete the Bucket, and the operator removes it once done); it takes verb abandon on buckets.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "a cost admin removes the finalizer", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(ours, nil), obj: bucket(nil, nil), allow: true, reviewed: true},
		{name: "a tenant removes a finalizer of its own", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(append(ours, "example.com/mine"), nil), obj: bucket(ours, nil)},
		{name: "a tenant creates a Bucket set to be abandoned", verb: storagev1alpha1.VerbAbandon, user: tenant,
			obj: bucket(ours, abandon), reviewed: true, refused: []string{
				`metadata.annotations[storage.osm.dev/abandon]: Forbidden: abandon lets the Bucket go without releasing what it holds at the provider, which keeps costing; it takes verb abandon on buckets.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "a tenant sets abandon and removes the finalizer at once: both said", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(ours, nil), obj: bucket(nil, abandon), reviewed: true, refused: []string{
				`metadata.finalizers: Forbidden: removing storage.osm.dev/finalizer lets the Bucket go without releasing what it holds at the provider (delete the Bucket, and the operator removes it once done); it takes verb abandon on buckets.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
				`metadata.annotations[storage.osm.dev/abandon]: Forbidden: abandon lets the Bucket go without releasing what it holds at the provider, which keeps costing; it takes verb abandon on buckets.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "a tenant changes abandon's value", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(ours, map[string]string{storagev1alpha1.AbandonAnnotation: "false"}), obj: bucket(ours, abandon), reviewed: true, refused: []string{
				`metadata.annotations[storage.osm.dev/abandon]: Forbidden: abandon lets the Bucket go without releasing what it holds at the provider, which keeps costing; it takes verb abandon on buckets.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "an update that keeps an admin's abandon", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(ours, abandon), obj: bucket(ours, abandon)},
		{name: "removing abandon costs nothing", verb: storagev1alpha1.VerbAbandon, user: tenant,
			old: bucket(ours, abandon), obj: bucket(ours, nil)},
		{name: "a tenant buys with Retain", verb: storagev1alpha1.VerbRetain, user: tenant,
			obj: contract("standard", storagev1alpha1.ReclaimPolicyRetain), reviewed: true, refused: []string{
				`spec.reclaimPolicy: Forbidden: Retain keeps the contract running, and paid for, after the Contract is deleted; leave reclaimPolicy out for Delete; it takes verb retain on contracts.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "a tenant buys with Delete", verb: storagev1alpha1.VerbRetain, user: tenant,
			obj: contract("standard", storagev1alpha1.ReclaimPolicyDelete)},
		{name: "a cost admin buys with Retain", verb: storagev1alpha1.VerbRetain, user: tenant,
			obj: contract("standard", storagev1alpha1.ReclaimPolicyRetain), allow: true, reviewed: true},
		{name: "an account the tenant has is retained: nothing is bought", verb: storagev1alpha1.VerbRetain, user: tenant,
			obj: contract("", storagev1alpha1.ReclaimPolicyRetain)},
		{name: "a tenant switches Delete to Retain", verb: storagev1alpha1.VerbRetain, user: tenant,
			old: contract("standard", storagev1alpha1.ReclaimPolicyDelete), obj: contract("standard", storagev1alpha1.ReclaimPolicyRetain), reviewed: true, refused: []string{
				`spec.reclaimPolicy: Forbidden: Retain keeps the contract running, and paid for, after the Contract is deleted; leave reclaimPolicy out for Delete; it takes verb retain on contracts.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "a tenant empties Delete, which keeps too", verb: storagev1alpha1.VerbRetain, user: tenant,
			old: contract("standard", storagev1alpha1.ReclaimPolicyDelete), obj: contract("standard", ""), reviewed: true, refused: []string{
				`spec.reclaimPolicy: Forbidden: without reclaimPolicy the contract keeps running, and paid for, after the Contract is deleted, as with Retain; keep Delete; it takes verb retain on contracts.storage.osm.dev in namespace "team-a", which the ClusterRole osm-cost-admin grants`,
			}},
		{name: "a Contract stored with Retain is not checked again", verb: storagev1alpha1.VerbRetain, user: tenant,
			old: contract("standard", storagev1alpha1.ReclaimPolicyRetain), obj: contract("standard", storagev1alpha1.ReclaimPolicyRetain)},
		{name: "Retain to Delete costs nothing", verb: storagev1alpha1.VerbRetain, user: tenant,
			old: contract("standard", storagev1alpha1.ReclaimPolicyRetain), obj: contract("standard", storagev1alpha1.ReclaimPolicyDelete)},
		{name: "a tenant creates a Bucket that empties its bucket", verb: storagev1alpha1.VerbEmpty, user: tenant,
			obj: emptied(true), reviewed: true, refused: []string{emptyRefusal}},
		{name: "a tenant turns emptyOnDelete on", verb: storagev1alpha1.VerbEmpty, user: tenant,
			old: emptied(false), obj: emptied(true), reviewed: true, refused: []string{emptyRefusal}},
		{name: "a platform's emptier turns it on", verb: storagev1alpha1.VerbEmpty, user: tenant,
			old: emptied(false), obj: emptied(true), allow: true, reviewed: true},
		{name: "an update that keeps it on is not checked again", verb: storagev1alpha1.VerbEmpty, user: tenant,
			old: emptied(true), obj: emptied(true)},
		{name: "turning it off costs nothing", verb: storagev1alpha1.VerbEmpty, user: tenant,
			old: emptied(true), obj: emptied(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reviews := &fakeReviewer{allow: tt.allow}
			costly := map[string]func(string, *guarded, *guarded) []costlyChange{storagev1alpha1.VerbAbandon: abandonChanges,
				storagev1alpha1.VerbRetain: retainChanges, storagev1alpha1.VerbEmpty: emptyChanges}[tt.verb]
			g := &costGuard{verb: tt.verb, costly: costly, self: managerUser, reviews: reviews, role: "osm-cost-admin"}
			req := guardRequest(t, tt.user, tt.old, tt.obj)
			resp := g.Handle(context.Background(), req)

			var refused []string
			if !resp.Allowed {
				if resp.Result == nil || resp.Result.Details == nil {
					t.Fatalf("refused without details: %+v", resp.Result)
				}
				for _, c := range resp.Result.Details.Causes {
					refused = append(refused, c.Field+": "+c.Message)
				}
			}
			if diff := cmp.Diff(tt.refused, refused); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			if got := len(reviews.reviews) > 0; got != tt.reviewed {
				t.Fatalf("asked the API server %d times, want asked: %v", len(reviews.reviews), tt.reviewed)
			}
			if tt.reviewed {
				want := authorizationv1.SubjectAccessReviewSpec{User: tt.user, UID: "uid-1", Groups: []string{"tenants", "system:authenticated"},
					Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a"}},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: tt.verb, Group: "storage.osm.dev",
						Resource: req.Resource.Resource, Name: req.Name}}
				if diff := cmp.Diff([]authorizationv1.SubjectAccessReviewSpec{want}, reviews.reviews); diff != "" {
					t.Errorf("review (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A review that fails refuses the change: the guard fails closed.
func TestCostGuardFailsClosed(t *testing.T) {
	g := &costGuard{verb: storagev1alpha1.VerbAbandon, costly: abandonChanges, self: managerUser,
		reviews: &fakeReviewer{err: errors.New("connection refused")}, role: "osm-cost-admin"}
	old := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data", Finalizers: []string{storagev1alpha1.Finalizer}}}
	resp := g.Handle(context.Background(), guardRequest(t, "alice", old, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"}}))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 500 ||
		resp.Result.Message != "asking the API server whether alice may abandon: connection refused" {
		t.Errorf("Handle() = allowed %v, %+v; want a 500 naming the user and the verb", resp.Allowed, resp.Result)
	}
}

// guardRequest is the admission request the API server sends for user changing old into obj
// (old nil: creating obj).
func guardRequest(t *testing.T, user string, old, obj runtime.Object) admission.Request {
	t.Helper()
	raw := func(o runtime.Object) runtime.RawExtension {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	m := obj.(metav1.Object)
	kind, resource := "Bucket", "buckets"
	if _, ok := obj.(*storagev1alpha1.Contract); ok {
		kind, resource = "Contract", "contracts"
	}
	req := admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: m.GetNamespace(), Name: m.GetName(),
		Kind:     metav1.GroupVersionKind{Group: "storage.osm.dev", Version: "v1alpha1", Kind: kind},
		Resource: metav1.GroupVersionResource{Group: "storage.osm.dev", Version: "v1alpha1", Resource: resource},
		UserInfo: authenticationv1.UserInfo{Username: user, UID: "uid-1", Groups: []string{"tenants", "system:authenticated"},
			Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}},
		Object: raw(obj),
	}
	if old != nil {
		req.Operation, req.OldObject = admissionv1.Update, raw(old)
	}
	return admission.Request{AdmissionRequest: req}
}
