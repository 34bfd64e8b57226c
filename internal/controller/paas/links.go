package paas

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/index"
)

// BucketsOfApplication maps an Application to the Buckets it links, for a Bucket controller that
// watches Applications (handler.EnqueueRequestsFromMapFunc). On an update the handler maps the
// old and the new object, so a Bucket that was just unlinked is woken too.
func BucketsOfApplication(_ context.Context, obj client.Object) []reconcile.Request {
	app, ok := obj.(*paasv1alpha1.Application)
	if !ok {
		return nil
	}
	names := index.LinkedBuckets(app)
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: n}})
	}
	return reqs
}

// linkedBuckets reads the Buckets app links, by name; one that does not exist is left out.
func (k applicationKind) linkedBuckets(ctx context.Context, app *paasv1alpha1.Application) (map[string]*storagev1alpha1.Bucket, error) {
	buckets := make(map[string]*storagev1alpha1.Bucket, len(app.Spec.Buckets))
	for _, l := range app.Spec.Buckets {
		b := &storagev1alpha1.Bucket{}
		err := k.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: l.Name}, b)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading Bucket %q: %w", l.Name, err)
		default:
			buckets[l.Name] = b
		}
	}
	return buckets, nil
}

// resolveLinks puts each link's Bucket with its BucketAccess. It returns the links whose
// environment can be built, in spec order, and what it saw of every link.
func resolveLinks(app *paasv1alpha1.Application, buckets map[string]*storagev1alpha1.Bucket, accesses appAccesses) ([]resolvedLink, []linkState) {
	var links []resolvedLink
	states := make([]linkState, 0, len(app.Spec.Buckets))
	for _, l := range app.Spec.Buckets {
		access, ok := accesses.links[l.Name]
		if !ok {
			access.Problem = "the operator makes no BucketAccess for it (see Ready)"
		}
		link, state := resolveLink(app.Namespace, l, buckets[l.Name], access)
		if state.Usable {
			links = append(links, link)
		}
		states = append(states, state)
	}
	return links, states
}

// resolveLink puts link l with its Bucket b (nil when it does not exist) and its BucketAccess.
func resolveLink(namespace string, l paasv1alpha1.BucketLink, b *storagev1alpha1.Bucket, access accessState) (resolvedLink, linkState) {
	state := linkState{Name: l.Name}
	if b == nil {
		state.Problem = fmt.Sprintf("Bucket %s does not exist in namespace %s", l.Name, namespace)
		return resolvedLink{}, state
	}
	notReady := fmt.Sprintf("Bucket %s has no status yet", b.Name)
	ready := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
	if ready != nil {
		notReady = fmt.Sprintf("Bucket %s is not Ready (%s: %s)", b.Name, ready.Reason, ready.Message)
	}
	bucketReady := ready != nil && ready.Status == metav1.ConditionTrue
	located := b.Status.BucketName != "" && b.Status.Endpoint != ""

	// The Bucket's own problem comes first: its BucketAccess waits for it too.
	switch {
	case !located || (!bucketReady && !access.Usable):
		state.Problem = notReady
		return resolvedLink{}, state
	case !access.Usable:
		state.Problem, state.WaitsForAccess, state.AccessReason = access.Problem, true, access.Reason
		return resolvedLink{}, state
	}
	state.Usable = true
	state.Ready = bucketReady && access.Ready
	switch {
	case !bucketReady:
		state.Problem = notReady
	case !access.Ready:
		state.Problem, state.WaitsForAccess, state.AccessReason = access.Problem, true, access.Reason
	}
	return resolvedLink{
		Name:       l.Name,
		Prefix:     l.EnvPrefixOrDefault(),
		Mode:       l.AccessOrDefault(),
		BucketName: b.Status.BucketName,
		Endpoint:   b.Status.Endpoint,
		Region:     b.Status.Region,
		Versioning: b.Status.Versioning,
		Access:     access,
	}, state
}

// prefixConflict says which links share an envPrefix, "" when none do.
func prefixConflict(links []paasv1alpha1.BucketLink) string {
	byPrefix := map[string][]string{}
	for _, l := range links {
		p := l.EnvPrefixOrDefault()
		byPrefix[p] = append(byPrefix[p], l.Name)
	}
	var problems []string
	for p, names := range byPrefix {
		if len(names) > 1 {
			problems = append(problems, fmt.Sprintf("Buckets %s share the env prefix %s", strings.Join(names, ", "), p))
		}
	}
	if len(problems) == 0 {
		return ""
	}
	sort.Strings(problems)
	return strings.Join(problems, "; ") + ": set spec.buckets[].envPrefix so that each link has its own"
}

// podEndpoint is where pods reach the S3 endpoint the manager reaches at endpoint.
func (r *ApplicationReconciler) podEndpoint(endpoint string) string {
	if to, ok := r.PodEndpoints[endpoint]; ok {
		return to
	}
	return endpoint
}

// linkBuckets gives each link, and the backup, the BucketAccess it gets its key from, and
// resolves the links with them; BucketsReady says how they stand.
func (k applicationKind) linkBuckets(ctx context.Context, s *appPass) error {
	accesses, err := k.syncAccesses(ctx, s.app, s.linked, s.linksRefused == nil, s.backupRefused == nil)
	if err != nil {
		return err
	}
	links, states := resolveLinks(s.app, s.linked, accesses)
	for i := range links {
		links[i].PodEndpoint = k.podEndpoint(links[i].Endpoint)
	}
	conflict := prefixConflict(s.app.Spec.Buckets)
	s.accesses, s.links = accesses, links
	s.usable = conflict == "" && s.linksRefused == nil && len(links) == len(s.app.Spec.Buckets)
	if s.linksRefused != nil {
		s.found.buckets = ptr.To(s.linksRefused.condition())
		return nil
	}
	s.found.buckets = ptr.To(bucketsReady(states, conflict))
	return nil
}

// linksRefusal is why the operator refuses to make the links' shared BucketAccess of a keyless
// Application, nil when it may: linked Buckets of more than one Contract, which one role
// cannot reach.
func linksRefusal(app *paasv1alpha1.Application, linked map[string]*storagev1alpha1.Bucket) *refused {
	return refusal(paasv1alpha1.ReasonLinksSpanContracts, application.ContractProblems(app, func(name string) (string, bool) {
		b, ok := linked[name]
		if !ok {
			return "", false
		}
		return b.Spec.ContractName, true
	}))
}
