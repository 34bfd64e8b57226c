package storage

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
)

// BucketUsers are resources of one kind that use Buckets (Applications link them). A Bucket is
// not deleted while any of them uses it.
type BucketUsers struct {
	// Kind names them in conditions: "Application".
	Kind string
	// List returns, sorted, the names of those in namespace that use the Bucket named bucket.
	List func(ctx context.Context, reader client.Reader, namespace, bucket string) ([]string, error)
	// Object is their type, and Buckets maps one of them to the Buckets it uses, so that a Bucket
	// is woken when a user comes or goes.
	Object  client.Object
	Buckets handler.MapFunc
	// LifecycleRules, when set, returns the lifecycle rules those in namespace ask of the Bucket
	// named bucket (an Application's backup retention), with ids that start with
	// storagev1alpha1.GeneratedLifecycleRulePrefix; they are applied with the spec's.
	LifecycleRules func(ctx context.Context, reader client.Reader, namespace, bucket string) ([]storagev1alpha1.LifecycleRule, error)
	// PolicyGrants, when set, returns what those in namespace are granted in the policy of the
	// Bucket named bucket (BucketAccesses); their statements are added to the spec's.
	PolicyGrants func(ctx context.Context, reader client.Reader, namespace, bucket string) ([]bucketpolicy.AccessGrant, error)
	// Changed filters the events of Object that wake its Buckets; by default a change of
	// generation.
	Changed predicate.Predicate
}

// bucketUsers is who uses one Bucket, and what they add to its spec. A nil *bucketUsers is no
// one: no kind of user is configured.
type bucketUsers struct {
	// names has one entry per kind that uses it: "2 Applications: a, b".
	names  []string
	rules  []storagev1alpha1.LifecycleRule
	grants []bucketpolicy.AccessGrant
}

// listUsers finds who uses the Bucket, one entry per kind, and what they ask of it; nil when
// no kind of user is configured (then InUse says nothing either).
func (k bucketKind) listUsers(ctx context.Context, b *storagev1alpha1.Bucket) (*bucketUsers, error) {
	if len(k.Users) == 0 {
		return nil, nil
	}
	users := &bucketUsers{}
	for _, u := range k.Users {
		names, err := u.List(ctx, k.Client, b.Namespace, b.Name)
		if err != nil || len(names) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		users.names = append(users.names, fmt.Sprintf("%s: %s", plural(len(names), u.Kind), strings.Join(names, ", ")))
		if u.LifecycleRules != nil {
			rules, err := u.LifecycleRules(ctx, k.Client, b.Namespace, b.Name)
			if err != nil {
				return nil, err
			}
			users.rules = append(users.rules, rules...)
		}
		if u.PolicyGrants != nil {
			grants, err := u.PolicyGrants(ctx, k.Client, b.Namespace, b.Name)
			if err != nil {
				return nil, err
			}
			users.grants = append(users.grants, grants...)
		}
	}
	return users, nil
}

// inUse reports whether anyone uses the Bucket.
func (u *bucketUsers) inUse() bool { return u != nil && len(u.names) > 0 }

func (u *bucketUsers) lifecycleRules() []storagev1alpha1.LifecycleRule {
	if u == nil {
		return nil
	}
	return u.rules
}

func (u *bucketUsers) policyGrants() []bucketpolicy.AccessGrant {
	if u == nil {
		return nil
	}
	return u.grants
}
