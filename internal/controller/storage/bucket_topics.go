package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketsettings"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// A Bucket's notifications publish to topics the operator asks the Contract's provider for,
// one per notification, named after the Bucket's uid (so two Buckets of one contract never
// share one) and the notification. Each is recorded in status.topics before it is asked for;
// which are deleted, when the spec drops a notification or the Bucket goes, is decided from
// what the provider lists with those records, never from the records alone.

// topicName is the topic of b's notification named n.
func topicName(b *storagev1alpha1.Bucket, n string) string { return topicPrefix(b) + n }

// topicPrefix starts the name of every topic of b.
func topicPrefix(b *storagev1alpha1.Bucket) string { return string(b.UID) + "-" }

// ensureTopics asks the provider for a topic for each of the spec's notifications that status
// does not show made, pushing to its endpoint, and gives the settings their ARNs. A provider
// that makes no topics is told to the settings (in.TopicsErr), which report the notifications
// Unsupported with the rest of the spec applied; any other failure ends the pass (done).
func (k bucketKind) ensureTopics(ctx context.Context, b *storagev1alpha1.Bucket, p *engine.Pass[*storagev1alpha1.Bucket],
	contractID string, in *bucketsettings.Input, found bucketFound) (bucketOutcome, bool) {
	in.TopicARNs = map[string]string{}
	switch {
	case len(b.Spec.Notifications) == 0:
		return bucketOutcome{}, false
	case k.Topics == nil:
		in.TopicsErr = fmt.Errorf("%w: the operator runs without a contract API", bucketsettings.ErrTopicsUnsupported)
		return bucketOutcome{}, false
	case contractID == "":
		in.TopicsErr = fmt.Errorf("%w: Contract %s is an account of its own (spec.credentials), and no provider makes topics for it",
			bucketsettings.ErrTopicsUnsupported, b.Spec.ContractName)
		return bucketOutcome{}, false
	}
	for i, n := range b.Spec.Notifications {
		// The provider pushes to the endpoint from inside its network: only where the platform
		// allows is a topic ever asked for.
		if err := k.NotificationEndpoints.CheckURL(n.Endpoint); err != nil {
			return found.end(notificationNotAllowed{index: i, err: err}, 0, reconcile.TerminalError(err)), true
		}
		name := topicName(b, n.Name)
		rec := storedTopic(b, name)
		if rec != nil && rec.ARN != "" && rec.Endpoint == n.Endpoint {
			in.TopicARNs[n.Name] = rec.ARN
			continue
		}
		if rec == nil || rec.Endpoint != n.Endpoint {
			want := storagev1alpha1.NotificationTopic{Name: name, Endpoint: n.Endpoint}
			if err := p.Record(ctx, func(o *storagev1alpha1.Bucket) { setTopic(o, want) }); err != nil {
				return found.end(nil, 0, fmt.Errorf("recording topic %s: %w", name, err)), true
			}
		}
		t, err := k.Topics.PutTopic(ctx, contractID, name, n.Endpoint)
		if errors.Is(err, contractclient.ErrNotSupported) {
			in.TopicsErr = fmt.Errorf("%w: %w", bucketsettings.ErrTopicsUnsupported, err)
			return bucketOutcome{}, false
		}
		if err != nil {
			return k.topicsFailed(found, err), true
		}
		setTopic(b, storagev1alpha1.NotificationTopic{Name: name, Endpoint: n.Endpoint, ARN: t.ARN})
		in.TopicARNs[n.Name] = t.ARN
		k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "TopicMade", "Update",
			"Made topic %s of contract %s for notification %s, pushing to %s", name, contractID, n.Name, n.Endpoint)
	}
	return bucketOutcome{}, false
}

// settleTopics deletes the topics the spec no longer names, once the bucket's notifications
// are as the spec says (or cannot be: the server lacks them). While the spec is not applied
// yet, the provider's list is read too, so a topic whose record was lost is found as well.
func (k bucketKind) settleTopics(ctx context.Context, b *storagev1alpha1.Bucket, contractID string, applied bool,
	failed []bucketsettings.Failure, found bucketFound) (bucketOutcome, bool) {
	if k.Topics == nil || contractID == "" || slices.ContainsFunc(failed, func(f bucketsettings.Failure) bool {
		return f.Info.Field == bucketsettings.Notifications{}.Info().Field && !f.Unsupported
	}) {
		return bucketOutcome{}, false
	}
	stale := slices.ContainsFunc(b.Status.Topics, func(t storagev1alpha1.NotificationTopic) bool {
		return !slices.ContainsFunc(b.Spec.Notifications, func(n storagev1alpha1.BucketNotification) bool { return topicName(b, n.Name) == t.Name })
	})
	ask := !applied && (len(b.Spec.Notifications) > 0 || len(b.Status.Topics) > 0)
	if !stale && !ask {
		return bucketOutcome{}, false
	}
	if err := k.pruneTopics(ctx, b, contractID, ask); err != nil {
		return k.topicsFailed(found, err), true
	}
	return bucketOutcome{}, false
}

// pruneTopics deletes b's topics that its spec no longer names (all of them when b is being
// deleted), and forgets them. With ask, the provider's list is read too.
func (k bucketKind) pruneTopics(ctx context.Context, b *storagev1alpha1.Bucket, contractID string, ask bool) error {
	names, err := k.topicsOf(ctx, b, contractID, ask)
	if err != nil {
		return err
	}
	for _, name := range names {
		if b.DeletionTimestamp.IsZero() && slices.ContainsFunc(b.Spec.Notifications, func(n storagev1alpha1.BucketNotification) bool {
			return topicName(b, n.Name) == name
		}) {
			continue
		}
		switch err := k.Topics.DeleteTopic(ctx, contractID, name); {
		case errors.Is(err, contractclient.ErrNotSupported):
			// The provider makes no topics: the one recorded was never made.
		case err != nil:
			return err
		default:
			k.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "TopicDeleted", "Update", "Deleted topic %s of contract %s", name, contractID)
		}
		b.Status.Topics = slices.DeleteFunc(b.Status.Topics, func(t storagev1alpha1.NotificationTopic) bool { return t.Name == name })
	}
	return nil
}

// topicsOf names b's topics: those status records, and with ask those the provider lists.
func (k bucketKind) topicsOf(ctx context.Context, b *storagev1alpha1.Bucket, contractID string, ask bool) ([]string, error) {
	var names []string
	for _, t := range b.Status.Topics {
		names = append(names, t.Name)
	}
	if !ask {
		return names, nil
	}
	listed, err := k.Topics.ListTopics(ctx, contractID)
	if err != nil && !errors.Is(err, contractclient.ErrNotSupported) {
		return nil, err
	}
	for _, t := range listed {
		if strings.HasPrefix(t.Name, topicPrefix(b)) && !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	return names, nil
}

// deleteTopics deletes every topic of a Bucket being deleted. A cancelled contract's topics
// went with it; with its Contract gone (forced, since a Contract waits for its Buckets), they
// cannot be reached, and an event says so.
func (k bucketKind) deleteTopics(ctx context.Context, b *storagev1alpha1.Bucket, found bucketFound) (bucketOutcome, bool) {
	if k.Topics == nil || len(b.Status.Topics) == 0 && len(b.Spec.Notifications) == 0 {
		return bucketOutcome{}, false // it never asked for one
	}
	contract := &storagev1alpha1.Contract{}
	err := k.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ContractName}, contract)
	switch {
	case apierrors.IsNotFound(err):
		if len(b.Status.Topics) > 0 {
			k.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "TopicsMayRemain", "Delete",
				"Contract %s is gone, so topics %s cannot be deleted", b.Spec.ContractName, topicNames(b))
		}
		return bucketOutcome{}, false
	case err != nil:
		return found.end(nil, 0, fmt.Errorf("reading Contract %q: %w", b.Spec.ContractName, err)), true
	case contract.Status.State == string(contractapi.Cancelled) || contract.Status.ContractID == "":
		return bucketOutcome{}, false
	}
	if err := k.pruneTopics(ctx, b, contract.Status.ContractID, true); err != nil {
		out := k.topicsFailed(found, err)
		out.Found.holdsUp = fmt.Sprintf("The topics of Bucket %s cannot be deleted yet", b.Name)
		return out, true
	}
	return bucketOutcome{}, false
}

// topicsFailed ends a pass on a failed topic call, as engine.APIFailure says.
func (k bucketKind) topicsFailed(found bucketFound, err error) bucketOutcome {
	apiErr, after, err := engine.APIFailure(err)
	if apiErr == nil {
		return found.end(nil, 0, err)
	}
	return found.end(topicsFailed{apiErr}, after, err)
}

// topicsFailed: the contract API failed a call for the Bucket's notification topics.
type topicsFailed struct{ err *contractclient.Error }

// notificationNotAllowed: a notification's endpoint is not on the platform's list.
type notificationNotAllowed struct {
	index int
	err   error
}

func (f notificationNotAllowed) ready(*storagev1alpha1.Bucket) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonEndpointNotAllowed, fmt.Sprintf(
		"spec.notifications[%d].endpoint: %s: the platform decides where events may be pushed (the manager's --%s); "+
			"no topic was asked for, and the rest of the spec waits", f.index, f.err, egress.NotificationEndpointsFlag))
}

func (f topicsFailed) ready(*storagev1alpha1.Bucket) *engine.Condition {
	reason := storagev1alpha1.ReasonContractAPIRejected
	if f.err.Retryable() {
		reason = storagev1alpha1.ReasonContractAPIUnavailable
	}
	return engine.False(reason, "The contract API, asked for the topics of the spec's notifications: "+f.err.Summary())
}

func storedTopic(b *storagev1alpha1.Bucket, name string) *storagev1alpha1.NotificationTopic {
	for i := range b.Status.Topics {
		if b.Status.Topics[i].Name == name {
			return &b.Status.Topics[i]
		}
	}
	return nil
}

// setTopic records t in b's status, in place of the record of the same name.
func setTopic(b *storagev1alpha1.Bucket, t storagev1alpha1.NotificationTopic) {
	if rec := storedTopic(b, t.Name); rec != nil {
		*rec = t
		return
	}
	b.Status.Topics = append(b.Status.Topics, t)
}

func topicNames(b *storagev1alpha1.Bucket) string {
	names := make([]string, 0, len(b.Status.Topics))
	for _, t := range b.Status.Topics {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}
