package storage

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/controller/status"
)

// condition is a condition's status, reason and message, before it is set with the generation
// it describes. The reconcilers derive them from what a pass found (bucketConditions,
// contractConditions) and set them in one place at the end of the pass.
type condition struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

func falseCondition(reason, message string) *condition {
	return &condition{metav1.ConditionFalse, reason, message}
}

// setReady sets the Ready condition and, when its reason changes, emits an event that says so:
// a warning for anything that stops the resource short of Ready, except an orderly deletion and
// a BucketAccess's first moments, while its Bucket's policy takes up the new principal.
func setReady(rec events.EventRecorder, obj runtime.Object, conds *[]metav1.Condition, generation int64, c condition) {
	oldReason := status.Reason(*conds, storagev1alpha1.ReadyCondition)
	status.SetCondition(conds, generation, storagev1alpha1.ReadyCondition, c.Status, c.Reason, c.Message)
	if oldReason == c.Reason {
		return
	}
	eventType := corev1.EventTypeNormal
	if c.Status == metav1.ConditionFalse && c.Reason != storagev1alpha1.ReasonDeleting && c.Reason != storagev1alpha1.ReasonPolicyPending {
		eventType = corev1.EventTypeWarning
	}
	rec.Eventf(obj, nil, eventType, c.Reason, "Reconcile", "%s", c.Message)
}

// setCondition sets a condition other than Ready, with no event.
func setCondition(conds *[]metav1.Condition, generation int64, typ string, c condition) {
	status.SetCondition(conds, generation, typ, c.Status, c.Reason, c.Message)
}

// cacheCatchUp bounds how long a pass that wrote its object waits for the cache to show the
// write (status.AwaitCache); a watch is usually milliseconds behind.
const cacheCatchUp = 2 * time.Second

// waitingRetryInterval is how often a resource that waits on something no watch reports looks
// again (objects in a bucket to delete, buckets an account keeps, a Secret of someone else's
// under the name it needs), or every resync period if that is shorter.
const waitingRetryInterval = time.Minute

func waitingRetry(resync time.Duration) time.Duration {
	if resync > 0 && resync < waitingRetryInterval {
		return resync
	}
	return waitingRetryInterval
}

// lookAgainAfterRefusal turns a refusal (a terminal error, which the Ready condition and an
// event already explain) into a look again after the resync period: what was refused may start
// working with no event the operator could watch (the provider removes a policy, another
// account frees a bucket name, a permission is granted), so nothing waits on a refusal forever.
// Other results pass unchanged.
func lookAgainAfterRefusal(ctx context.Context, resync time.Duration) func(ctrl.Result, error) (ctrl.Result, error) {
	return func(res ctrl.Result, err error) (ctrl.Result, error) {
		if resync <= 0 || !errors.Is(err, reconcile.TerminalError(nil)) {
			return res, err
		}
		logf.FromContext(ctx).V(1).Info("Refused; looking again after the resync period", "reason", err.Error(), "after", resync)
		return ctrl.Result{RequeueAfter: resync}, nil
	}
}
