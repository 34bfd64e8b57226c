package v1alpha1

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// The cost guard: a change that lets something at the provider keep costing after its resource
// is gone takes an RBAC verb of its own, as Kubernetes' escalate, bind and approve do. Setting
// the abandon annotation, or removing the storage finalizer, takes "abandon" on the resource;
// giving a bought Contract reclaimPolicy Retain takes "retain" on contracts. A change that lets
// a deletion destroy data takes one too: turning on a Bucket's spec.deletion.emptyOnDelete
// takes "empty" on buckets. Without this a
// tenant under a ResourceQuota on count/contracts could buy, delete and buy again, leaving every
// contract running.
//
// Each verb has a webhook of its own, and its matchConditions (CEL, in the API server) call it
// only for a request that makes such a change and whose user lacks the verb: the common update
// costs no call, and a user who has the verb (cluster-admin's "*" does) is never refused, even
// while the manager is down. The webhook itself lets the manager's own user through (it removes
// its finalizer in every deletion) and asks the API server, with a SubjectAccessReview, about
// everyone else: the conditions are a shortcut, the review is the check.
//
// The conditions say in CEL what abandonChanges, retainChanges and emptyChanges say in Go; the envtest suite
// sends each kind of change through both.

// +kubebuilder:webhook:path=/validate-storage-osm-dev-v1alpha1-abandon,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=contracts;buckets;bucketaccesses,verbs=create;update,versions=v1alpha1,name=vabandon-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"removes-the-finalizer-or-sets-abandon","expression":"(request.operation == 'UPDATE' && has(oldObject.metadata.finalizers) && oldObject.metadata.finalizers.exists(f, f.startsWith('storage.osm.dev/') && !(has(object.metadata.finalizers) && f in object.metadata.finalizers))) || (has(object.metadata.annotations) && 'storage.osm.dev/abandon' in object.metadata.annotations && (request.operation == 'CREATE' || !has(oldObject.metadata.annotations) || !('storage.osm.dev/abandon' in oldObject.metadata.annotations) || oldObject.metadata.annotations['storage.osm.dev/abandon'] != object.metadata.annotations['storage.osm.dev/abandon']))"},{"name":"lacks-verb-abandon","expression":"!authorizer.requestResource.check('abandon').allowed()"}]}`
// +kubebuilder:webhook:path=/validate-storage-osm-dev-v1alpha1-retain,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=contracts,verbs=create;update,versions=v1alpha1,name=vretain-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"keeps-a-bought-contract","expression":"has(object.spec) && has(object.spec.plan) && (!has(object.spec.reclaimPolicy) || object.spec.reclaimPolicy == 'Retain') && (request.operation == 'CREATE' || (has(oldObject.spec.reclaimPolicy) && oldObject.spec.reclaimPolicy != 'Retain'))"},{"name":"lacks-verb-retain","expression":"!authorizer.requestResource.check('retain').allowed()"}]}`
// +kubebuilder:webhook:path=/validate-storage-osm-dev-v1alpha1-empty,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=storage.osm.dev,resources=buckets,verbs=create;update,versions=v1alpha1,name=vempty-v1alpha1.osm.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"turns-on-empty-on-delete","expression":"has(object.spec) && has(object.spec.deletion) && has(object.spec.deletion.emptyOnDelete) && object.spec.deletion.emptyOnDelete && (request.operation == 'CREATE' || !has(oldObject.spec.deletion) || !has(oldObject.spec.deletion.emptyOnDelete) || !oldObject.spec.deletion.emptyOnDelete)"},{"name":"lacks-verb-empty","expression":"!authorizer.requestResource.check('empty').allowed()"}]}`

// The paths the guard's webhooks are served at.
const (
	abandonPath = "/validate-storage-osm-dev-v1alpha1-abandon"
	retainPath  = "/validate-storage-osm-dev-v1alpha1-retain"
	emptyPath   = "/validate-storage-osm-dev-v1alpha1-empty"
)

// DefaultCostAdminRole is the ClusterRole config/rbac ships that grants the guard's verbs.
const DefaultCostAdminRole = "object-storage-manager-cost-admin"

// setupCostGuard registers the guard's webhooks, one per verb. It asks the API server once who the
// manager is (a SelfSubjectReview, which every authenticated user may create).
func setupCostGuard(mgr ctrl.Manager, costAdminRole string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	review := &authenticationv1.SelfSubjectReview{}
	if err := mgr.GetClient().Create(ctx, review); err != nil {
		return fmt.Errorf("asking the API server who the manager is (SelfSubjectReview): %w", err)
	}
	self := review.Status.UserInfo.Username
	if self == "" {
		return errors.New("the API server's SelfSubjectReview named no user for the manager")
	}
	if costAdminRole == "" {
		costAdminRole = DefaultCostAdminRole
	}
	srv := mgr.GetWebhookServer()
	srv.Register(abandonPath, &webhook.Admission{Handler: &costGuard{
		verb: storagev1alpha1.VerbAbandon, costly: abandonChanges, self: self, reviews: mgr.GetClient(), role: costAdminRole}})
	srv.Register(retainPath, &webhook.Admission{Handler: &costGuard{
		verb: storagev1alpha1.VerbRetain, costly: retainChanges, self: self, reviews: mgr.GetClient(), role: costAdminRole}})
	srv.Register(emptyPath, &webhook.Admission{Handler: &costGuard{
		verb: storagev1alpha1.VerbEmpty, costly: emptyChanges, self: self, reviews: mgr.GetClient(), role: costAdminRole}})
	return nil
}

// guarded is what the guard reads of a Contract, Bucket or BucketAccess.
type guarded struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Plan          string                          `json:"plan"`
		ReclaimPolicy storagev1alpha1.ReclaimPolicy   `json:"reclaimPolicy"`
		Deletion      *storagev1alpha1.BucketDeletion `json:"deletion"`
	} `json:"spec"`
}

// costlyChange is a field a request changes in a way that takes the guard's verb, and why.
type costlyChange struct {
	path *field.Path
	why  string
}

// abandonChanges are the changes that take the verb abandon: removing a storage.osm.dev
// finalizer (old is nil at creation), and setting or changing the abandon annotation.
func abandonChanges(kind string, old, obj *guarded) []costlyChange {
	var out []costlyChange
	if old != nil {
		for _, f := range old.Finalizers {
			if strings.HasPrefix(f, storagev1alpha1.GroupVersion.Group+"/") && !slices.Contains(obj.Finalizers, f) {
				out = append(out, costlyChange{field.NewPath("metadata", "finalizers"), fmt.Sprintf(
					"removing %s lets the %s go without releasing what it holds at the provider (delete the %s, and the operator removes it once done)", f, kind, kind)})
				break
			}
		}
	}
	if v, set := obj.Annotations[storagev1alpha1.AbandonAnnotation]; set {
		if was, had := oldAnnotation(old); !had || was != v {
			out = append(out, costlyChange{field.NewPath("metadata", "annotations").Key(storagev1alpha1.AbandonAnnotation), fmt.Sprintf(
				"abandon lets the %s go without releasing what it holds at the provider, which keeps costing", kind)})
		}
	}
	return out
}

func oldAnnotation(old *guarded) (string, bool) {
	if old == nil {
		return "", false
	}
	v, ok := old.Annotations[storagev1alpha1.AbandonAnnotation]
	return v, ok
}

// retainChanges are the changes that take the verb retain: a bought Contract (spec.plan) given
// a policy that keeps its contract, at creation or by an update from Delete. An empty policy
// keeps it too (the controller cancels only on Delete).
func retainChanges(_ string, old, obj *guarded) []costlyChange {
	keeps := func(g *guarded) bool {
		return g.Spec.ReclaimPolicy == "" || g.Spec.ReclaimPolicy == storagev1alpha1.ReclaimPolicyRetain
	}
	if obj.Spec.Plan == "" || !keeps(obj) || old != nil && keeps(old) {
		return nil
	}
	why := "Retain keeps the contract running, and paid for, after the Contract is deleted; leave reclaimPolicy out for Delete"
	if obj.Spec.ReclaimPolicy == "" {
		why = "without reclaimPolicy the contract keeps running, and paid for, after the Contract is deleted, as with Retain; keep Delete"
	}
	return []costlyChange{{field.NewPath("spec", "reclaimPolicy"), why}}
}

// emptyChanges are the changes that take the verb empty: a Bucket whose spec.deletion.emptyOnDelete
// is turned on, at creation or by an update. Its deletion then destroys the objects in the
// bucket, which no one can bring back.
func emptyChanges(_ string, old, obj *guarded) []costlyChange {
	if !obj.Spec.Deletion.Empties() || old != nil && old.Spec.Deletion.Empties() {
		return nil
	}
	return []costlyChange{{field.NewPath("spec", "deletion", "emptyOnDelete"),
		"emptyOnDelete lets deleting the Bucket delete every object in its bucket, which cannot be undone"}}
}

// reviewer creates SubjectAccessReviews: the manager's client.
type reviewer interface {
	Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error
}

// costGuard admits a change that takes verb only from the manager itself and from users the
// API server says have the verb.
type costGuard struct {
	verb string
	// costly lists the changes of a request that take verb; old is nil at creation.
	costly func(kind string, old, obj *guarded) []costlyChange
	// self is the manager's user name.
	self    string
	reviews reviewer
	// role is the ClusterRole that grants verb, named in a refusal.
	role string
}

// Handle admits or refuses one request.
func (g *costGuard) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.UserInfo.Username == g.self {
		return admission.Allowed("the manager releases its own resources")
	}
	var obj guarded
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old *guarded
	if req.Operation == admissionv1.Update {
		old = &guarded{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	changes := g.costly(req.Kind.Kind, old, &obj)
	if len(changes) == 0 {
		return admission.Allowed("")
	}
	allowed, err := g.granted(ctx, req)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError,
			fmt.Errorf("asking the API server whether %s may %s: %w", req.UserInfo.Username, g.verb, err))
	}
	if allowed {
		return admission.Allowed("")
	}
	takes := fmt.Sprintf("it takes verb %s on %s.%s in namespace %q, which the ClusterRole %s grants",
		g.verb, req.Resource.Resource, req.Resource.Group, req.Namespace, g.role)
	var errs field.ErrorList
	for _, c := range changes {
		errs = append(errs, field.Forbidden(c.path, c.why+"; "+takes))
	}
	status := apierrors.NewInvalid(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}, req.Name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// granted asks the API server whether the request's user has the guard's verb on the object.
func (g *costGuard) granted(ctx context.Context, req admission.Request) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range req.UserInfo.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: req.Namespace, Verb: g.verb, Group: req.Resource.Group, Resource: req.Resource.Resource, Name: req.Name,
		},
	}}
	if err := g.reviews.Create(ctx, review); err != nil {
		return false, err
	}
	return review.Status.Allowed, nil
}
