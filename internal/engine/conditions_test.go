package engine

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Events are for what a user acts on or would miss: a new resource's first Ready is said by its
// condition alone; a warning, and Ready again after it, are events.
func TestANewResourcesFirstReadyIsNoEventButReadyAfterAWarningIs(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	b := &storagev1alpha1.Bucket{}
	var got []string
	set := func(c *Condition) {
		SetReady(rec, b, &b.Status.Conditions, 1, *c)
		select {
		case e := <-rec.Events:
			got = append(got, strings.Join(strings.Fields(e)[:2], " "))
		default:
			got = append(got, "none")
		}
	}
	set(True(storagev1alpha1.ReasonAvailable, "the bucket exists"))
	set(False(storagev1alpha1.ReasonS3Unavailable, "no answer"))
	set(True(storagev1alpha1.ReasonAvailable, "the bucket exists"))
	want := []string{"none", "Warning " + storagev1alpha1.ReasonS3Unavailable, "Normal " + storagev1alpha1.ReasonAvailable}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events %q, want %q", got, want)
	}
	if len(b.Status.Conditions) != 1 || b.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions %v, want Ready True alone", b.Status.Conditions)
	}
}
