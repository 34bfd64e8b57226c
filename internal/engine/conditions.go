package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine/status"
)

// Condition is a condition's status, reason and message, before it is set with the generation
// it describes. Kinds derive them from what a pass found, in one place (Kind.Conclude).
type Condition struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// True is a True condition.
func True(reason, message string) *Condition {
	return &Condition{metav1.ConditionTrue, reason, message}
}

// False is a False condition.
func False(reason, message string) *Condition {
	return &Condition{metav1.ConditionFalse, reason, message}
}

// Set sets a condition of type typ, with no event.
func Set(conds *[]metav1.Condition, generation int64, typ string, c Condition) {
	status.SetCondition(conds, generation, typ, c.Status, c.Reason, c.Message)
}

// SetReady sets the Ready condition and, when its reason changes, emits an event that says so:
// a warning for anything that stops the resource short of Ready, except an orderly deletion and
// a BucketAccess's first moments, while its Bucket's policy takes up the new principal. A new
// resource's first Ready is no event: the condition says it, and an event for every resource
// that simply works is a write to the API server no one acts on. Ready after a warning is one.
func SetReady(rec events.EventRecorder, obj runtime.Object, conds *[]metav1.Condition, generation int64, c Condition) {
	first := status.Reason(*conds, storagev1alpha1.ReadyCondition) == ""
	SetAnnounced(rec, obj, conds, generation, storagev1alpha1.ReadyCondition, c, func(c Condition) string {
		switch {
		case c.Status == metav1.ConditionTrue && first:
			return ""
		case c.Status == metav1.ConditionFalse && c.Reason != storagev1alpha1.ReasonDeleting && c.Reason != storagev1alpha1.ReasonPolicyPending:
			return corev1.EventTypeWarning
		}
		return corev1.EventTypeNormal
	})
}

// SetAnnounced sets a condition of type typ and, when its reason changes, emits an event of the
// type eventType says ("" for none) with the condition's reason and message.
func SetAnnounced(rec events.EventRecorder, obj runtime.Object, conds *[]metav1.Condition, generation int64, typ string, c Condition,
	eventType func(Condition) string) {
	oldReason := status.Reason(*conds, typ)
	Set(conds, generation, typ, c)
	if oldReason == c.Reason {
		return
	}
	if t := eventType(c); t != "" {
		rec.Eventf(obj, nil, t, c.Reason, "Reconcile", "%s", c.Message)
	}
}
