package paas

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
)

// condition is a condition's status, reason and message, before it is set with the generation
// it describes.
type condition struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// linkState is what one pass saw of a linked Bucket.
type linkState struct {
	// Name is the Bucket.
	Name string
	// Usable: the Bucket has a bucket at the provider and the link's BucketAccess has a key in
	// its Secret, so its environment can be built.
	Usable bool
	// Ready: Usable, and both the Bucket and the BucketAccess are Ready.
	Ready bool
	// Problem says, for people, why the link is not Ready.
	Problem string
	// WaitsForAccess: the Bucket is Ready; only the link's BucketAccess is not.
	WaitsForAccess bool
}

// bucketsReady summarises the links. conflict, when set, says that two links would define the
// same variables (only possible when the webhook was bypassed).
func bucketsReady(links []linkState, conflict string) condition {
	if conflict != "" {
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonEnvPrefixConflict, conflict}
	}
	if len(links) == 0 {
		return condition{metav1.ConditionTrue, paasv1alpha1.ReasonNoBuckets, "The Application links no Bucket"}
	}
	var problems []string
	reason := paasv1alpha1.ReasonBucketAccessNotReady
	for _, l := range links {
		if !l.Ready {
			problems = append(problems, fmt.Sprintf("%s: %s", l.Name, l.Problem))
			if !l.WaitsForAccess {
				reason = paasv1alpha1.ReasonBucketsNotReady
			}
		}
	}
	if len(problems) > 0 {
		return condition{metav1.ConditionFalse, reason,
			fmt.Sprintf("%s of %d not Ready: %s", plural(len(problems), "linked Bucket"), len(links), strings.Join(problems, "; "))}
	}
	if len(links) == 1 {
		return condition{metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady, fmt.Sprintf("Linked Bucket %s is Ready", links[0].Name)}
	}
	return condition{metav1.ConditionTrue, paasv1alpha1.ReasonBucketsReady, fmt.Sprintf("All %d linked Buckets are Ready", len(links))}
}

// readyCondition summarises the Application: its Buckets first, then its Deployment. replicas is
// spec.replicas as defaulted.
func readyCondition(buckets condition, deploy *appsv1.Deployment, replicas int32) condition {
	if buckets.Status != metav1.ConditionTrue {
		return condition{metav1.ConditionFalse, waitingReason(buckets), buckets.Message}
	}
	if deploy == nil {
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentUnavailable, "The Deployment does not exist yet"}
	}
	if deploy.Status.ObservedGeneration < deploy.Generation {
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentProgressing,
			fmt.Sprintf("Deployment %s is rolling out generation %d", deploy.Name, deploy.Generation)}
	}
	available := deploy.Status.AvailableReplicas
	msg := fmt.Sprintf("Deployment %s has %d of %d replicas available", deploy.Name, available, replicas)
	if available < replicas && !deploymentAvailable(deploy) {
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonDeploymentUnavailable, msg}
	}
	return condition{metav1.ConditionTrue, paasv1alpha1.ReasonAvailable, msg}
}

// deploymentAvailable reports the Deployment controller's Available condition: at least
// the minimum of replicas the rollout strategy allows are available.
func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitingReason is the reason of what waits for the links: BucketAccessNotReady when only
// their BucketAccesses are not Ready, BucketsNotReady otherwise.
func waitingReason(buckets condition) string {
	if buckets.Reason == paasv1alpha1.ReasonBucketAccessNotReady {
		return buckets.Reason
	}
	return paasv1alpha1.ReasonBucketsNotReady
}

// backupCondition summarises spec.backup. blocked, when set, says why the CronJob could not be
// made or brought up to date; cronJob is the CronJob as it stands (nil when there is none).
func backupCondition(backup *paasv1alpha1.Backup, cronJob *batchv1.CronJob, blocked *condition) condition {
	switch {
	case backup == nil:
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonNotConfigured, "spec.backup is not set"}
	case blocked != nil:
		return *blocked
	case cronJob == nil:
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonBucketsNotReady, "The backup CronJob does not exist yet"}
	case ptr.Deref(cronJob.Spec.Suspend, false):
		return condition{metav1.ConditionFalse, paasv1alpha1.ReasonSuspended,
			fmt.Sprintf("CronJob %s is suspended (spec.backup.suspend)", cronJob.Name)}
	}
	return condition{metav1.ConditionTrue, paasv1alpha1.ReasonScheduled,
		fmt.Sprintf("CronJob %s backs up to Bucket %s on schedule %q", cronJob.Name, backup.Bucket, cronJob.Spec.Schedule)}
}

// applicationURL is where the application is served, "" without a host.
func applicationURL(host string) string {
	if host == "" {
		return ""
	}
	return "http://" + host
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// refusal is the Ready condition of an Application whose spec asks for what the operator will
// not write, nil when errs is empty. The message lists every problem as the webhook would.
func refusal(reason string, errs field.ErrorList) *condition {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return &condition{metav1.ConditionFalse, reason,
		"The operator refuses to write this for the Application: " + strings.Join(msgs, "; ")}
}
