package paas

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

var (
	condTrue  = metav1.ConditionTrue
	condFalse = metav1.ConditionFalse
)

func condition(status metav1.ConditionStatus, reason, message string) engine.Condition {
	return engine.Condition{Status: status, Reason: reason, Message: message}
}

func TestBucketsReady(t *testing.T) {
	ready := linkState{Name: "photos", Usable: true, Ready: true}
	tests := []struct {
		name     string
		links    []linkState
		conflict string
		want     engine.Condition
	}{
		{name: "no links", want: condition(condTrue, "NoBuckets", "The Application links no Bucket")},
		{name: "one Ready", links: []linkState{ready}, want: condition(condTrue, "BucketsReady", "Linked Bucket photos is Ready")},
		{name: "two Ready", links: []linkState{ready, {Name: "logs", Usable: true, Ready: true}},
			want: condition(condTrue, "BucketsReady", "All 2 linked Buckets are Ready")},
		{name: "one missing of two", links: []linkState{ready, {Name: "logs", Problem: "Bucket logs does not exist in namespace ns"}},
			want: condition(condFalse, "BucketsNotReady", "1 linked Bucket of 2 not Ready: logs: Bucket logs does not exist in namespace ns")},
		{name: "usable but not Ready counts as not Ready", links: []linkState{{Name: "photos", Usable: true, Problem: "Bucket photos is not Ready (S3Unavailable: down)"}},
			want: condition(condFalse, "BucketsNotReady", "1 linked Bucket of 1 not Ready: photos: Bucket photos is not Ready (S3Unavailable: down)")},
		{name: "two not Ready, in spec order", links: []linkState{{Name: "b", Problem: "p1"}, {Name: "a", Problem: "p2"}},
			want: condition(condFalse, "BucketsNotReady", "2 linked Buckets of 2 not Ready: b: p1; a: p2")},
		{name: "only a BucketAccess not Ready", links: []linkState{ready, {Name: "logs", Usable: true, WaitsForAccess: true,
			Problem: "BucketAccess web-logs is not Ready (PolicyPending: not granted yet)"}},
			want: condition(condFalse, "BucketAccessNotReady",
				"1 linked Bucket of 2 not Ready: logs: BucketAccess web-logs is not Ready (PolicyPending: not granted yet)")},
		{name: "a Bucket not Ready outweighs a BucketAccess", links: []linkState{
			{Name: "logs", WaitsForAccess: true, Problem: "BucketAccess web-logs has no status yet"},
			{Name: "photos", Problem: "Bucket photos has no status yet"}},
			want: condition(condFalse, "BucketsNotReady",
				"2 linked Buckets of 2 not Ready: logs: BucketAccess web-logs has no status yet; photos: Bucket photos has no status yet")},
		{name: "a shared BucketAccess the provider cannot serve keyless: waiting does not help", links: []linkState{
			{Name: "photos", WaitsForAccess: true, AccessReason: "AuthenticationUnsupported", Problem: "BucketAccess web is not Ready (AuthenticationUnsupported: no STS)"},
			{Name: "logs", WaitsForAccess: true, AccessReason: "AuthenticationUnsupported", Problem: "BucketAccess web is not Ready (AuthenticationUnsupported: no STS)"}},
			want: condition(condFalse, "AuthenticationUnsupported", "2 linked Buckets of 2 not Ready: "+
				"photos: BucketAccess web is not Ready (AuthenticationUnsupported: no STS); logs: BucketAccess web is not Ready (AuthenticationUnsupported: no STS)")},
		{name: "a Bucket not Ready outweighs AuthenticationUnsupported", links: []linkState{
			{Name: "photos", WaitsForAccess: true, AccessReason: "AuthenticationUnsupported", Problem: "p1"}, {Name: "logs", Problem: "p2"}},
			want: condition(condFalse, "BucketsNotReady", "2 linked Buckets of 2 not Ready: photos: p1; logs: p2")},
		{name: "prefix conflict wins", links: []linkState{ready}, conflict: "Buckets a-b, a.b share the env prefix A_B_",
			want: condition(condFalse, "EnvPrefixConflict", "Buckets a-b, a.b share the env prefix A_B_")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, bucketsReady(tt.links, tt.conflict)); diff != "" {
				t.Errorf("bucketsReady() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func deployment(generation, observed int64, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: generation},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: observed, AvailableReplicas: available, Conditions: conds},
	}
}

func TestReadyCondition(t *testing.T) {
	bucketsOK := condition(condTrue, "BucketsReady", "Linked Bucket photos is Ready")
	bucketsBad := condition(condFalse, "BucketsNotReady", "1 linked Bucket of 1 not Ready: photos: Bucket photos does not exist in namespace ns")
	availableTrue := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}
	availableFalse := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse}
	tests := []struct {
		name     string
		buckets  engine.Condition
		deploy   *appsv1.Deployment
		replicas int32
		want     engine.Condition
	}{
		{name: "buckets not Ready", buckets: bucketsBad, deploy: deployment(1, 1, 1), replicas: 1,
			want: condition(condFalse, "BucketsNotReady", bucketsBad.Message)},
		{name: "a BucketAccess not Ready", buckets: condition(condFalse, "BucketAccessNotReady", "1 linked Bucket of 1 not Ready: photos: x"),
			deploy: deployment(1, 1, 1), replicas: 1,
			want: condition(condFalse, "BucketAccessNotReady", "1 linked Bucket of 1 not Ready: photos: x")},
		{name: "a prefix conflict shows as Buckets not Ready", buckets: condition(condFalse, "EnvPrefixConflict", "Buckets a-b, a.b share"),
			deploy: deployment(1, 1, 1), replicas: 1,
			want: condition(condFalse, "BucketsNotReady", "Buckets a-b, a.b share")},
		{name: "no Deployment", buckets: bucketsOK, replicas: 1,
			want: condition(condFalse, "DeploymentUnavailable", "The Deployment does not exist yet")},
		{name: "not observed yet", buckets: bucketsOK, deploy: deployment(2, 1, 1, availableTrue), replicas: 1,
			want: condition(condFalse, "DeploymentProgressing", "Deployment web is rolling out generation 2")},
		{name: "no replica available", buckets: bucketsOK, deploy: deployment(1, 1, 0), replicas: 1,
			want: condition(condFalse, "DeploymentUnavailable", "Deployment web has 0 of 1 replicas available")},
		{name: "Available False and too few", buckets: bucketsOK, deploy: deployment(1, 1, 1, availableFalse), replicas: 2,
			want: condition(condFalse, "DeploymentUnavailable", "Deployment web has 1 of 2 replicas available")},
		{name: "all available", buckets: bucketsOK, deploy: deployment(3, 3, 2), replicas: 2,
			want: condition(condTrue, "Available", "Deployment web has 2 of 2 replicas available")},
		{name: "Available condition with fewer replicas", buckets: bucketsOK, deploy: deployment(1, 1, 3, availableTrue), replicas: 4,
			want: condition(condTrue, "Available", "Deployment web has 3 of 4 replicas available")},
		{name: "zero replicas", buckets: bucketsOK, deploy: deployment(1, 1, 0), replicas: 0,
			want: condition(condTrue, "Available", "Deployment web has 0 of 0 replicas available")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readyCondition(tt.buckets, tt.deploy, tt.replicas)); diff != "" {
				t.Errorf("readyCondition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackupCondition(t *testing.T) {
	backup := &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}}
	cronJob := func(suspend bool) *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "web-backup"},
			Spec: batchv1.CronJobSpec{Schedule: "@daily", Suspend: ptr.To(suspend)}}
	}
	blocked := ptr.To(condition(condFalse, "BucketsNotReady", "The backup waits for the linked Buckets (see BucketsReady)"))
	tests := []struct {
		name    string
		backup  *paasv1alpha1.Backup
		cronJob *batchv1.CronJob
		blocked *engine.Condition
		want    engine.Condition
	}{
		{name: "no backup", want: condition(condFalse, "NotConfigured", "spec.backup is not set")},
		{name: "blocked", backup: backup, cronJob: cronJob(false), blocked: blocked, want: *blocked},
		{name: "no CronJob", backup: backup,
			want: condition(condFalse, "BucketsNotReady", "The backup CronJob does not exist yet")},
		{name: "suspended", backup: backup, cronJob: cronJob(true),
			want: condition(condFalse, "Suspended", "CronJob web-backup is suspended (spec.backup.suspend)")},
		{name: "scheduled", backup: backup, cronJob: cronJob(false),
			want: condition(condTrue, "Scheduled", `CronJob web-backup backs up to Bucket photos on schedule "@daily"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, backupCondition(tt.backup, tt.cronJob, tt.blocked)); diff != "" {
				t.Errorf("backupCondition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefixConflict(t *testing.T) {
	tests := []struct {
		name  string
		links []paasv1alpha1.BucketLink
		want  string
	}{
		{name: "none", links: nil},
		{name: "distinct", links: []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "logs"}, {Name: "x", EnvPrefix: "PHOTOS2_"}}},
		{name: "derived alike", links: []paasv1alpha1.BucketLink{{Name: "a-b"}, {Name: "a.b"}},
			want: "Buckets a-b, a.b share the env prefix A_B_: set spec.buckets[].envPrefix so that each link has its own"},
		{name: "explicit equals derived", links: []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "pics", EnvPrefix: "PHOTOS_"}},
			want: "Buckets photos, pics share the env prefix PHOTOS_: set spec.buckets[].envPrefix so that each link has its own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, prefixConflict(tt.links)); diff != "" {
				t.Errorf("prefixConflict() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplicationURL(t *testing.T) {
	if got := applicationURL("web.example.com"); got != "http://web.example.com" {
		t.Errorf("applicationURL() = %q", got)
	}
	if got := applicationURL(""); got != "" {
		t.Errorf("applicationURL(\"\") = %q, want empty", got)
	}
}

func TestResolveLink(t *testing.T) {
	bucket := func(bucketName string, ready *metav1.Condition) *storagev1alpha1.Bucket {
		b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "photos"},
			Status: storagev1alpha1.BucketStatus{BucketName: bucketName, Region: "us-east-1", Versioning: "Enabled"}}
		if bucketName != "" {
			b.Status.Endpoint = "http://s3.test"
		}
		if ready != nil {
			b.Status.Conditions = []metav1.Condition{*ready}
		}
		return b
	}
	bucketReady := &metav1.Condition{Type: "Ready", Status: condTrue, Reason: "Available", Message: "ok"}
	bucketDown := &metav1.Condition{Type: "Ready", Status: condFalse, Reason: "S3Unavailable", Message: "down"}
	noKey := accessState{Name: "web-photos", Problem: "BucketAccess web-photos has no status yet"}
	keyPending := accessState{Name: "web-photos", SecretName: "web-photos-credentials", AccessKeyID: "AKIA1", Usable: true,
		Problem: "BucketAccess web-photos is not Ready (PolicyPending: not yet)"}
	keyReady := accessState{Name: "web-photos", SecretName: "web-photos-credentials", AccessKeyID: "AKIA1", Usable: true, Ready: true}
	link := paasv1alpha1.BucketLink{Name: "photos"}
	resolved := resolvedLink{Name: "photos", Prefix: "PHOTOS_", Mode: "ReadWrite", BucketName: "team-photos", Endpoint: "http://s3.test",
		Region: "us-east-1", Versioning: "Enabled", Access: keyReady}
	tests := []struct {
		name   string
		bucket *storagev1alpha1.Bucket
		access accessState
		want   linkState
		link   *resolvedLink
	}{
		{name: "no Bucket", access: accessState{Name: "web-photos", Problem: "BucketAccess web-photos waits for Bucket photos"},
			want: linkState{Name: "photos", Problem: "Bucket photos does not exist in namespace team"}},
		{name: "Bucket without status", bucket: bucket("", nil), access: noKey,
			want: linkState{Name: "photos", Problem: "Bucket photos has no status yet"}},
		{name: "Bucket not Ready and no key: the Bucket's problem", bucket: bucket("team-photos", bucketDown), access: noKey,
			want: linkState{Name: "photos", Problem: "Bucket photos is not Ready (S3Unavailable: down)"}},
		{name: "Bucket Ready, no key yet", bucket: bucket("team-photos", bucketReady), access: noKey,
			want: linkState{Name: "photos", WaitsForAccess: true, Problem: "BucketAccess web-photos has no status yet"}},
		{name: "a key that does not work yet", bucket: bucket("team-photos", bucketReady), access: keyPending,
			want: linkState{Name: "photos", Usable: true, WaitsForAccess: true, Problem: keyPending.Problem},
			link: func() *resolvedLink { l := resolved; l.Access = keyPending; return &l }()},
		{name: "a working key, the Bucket not Ready", bucket: bucket("team-photos", bucketDown), access: keyReady,
			want: linkState{Name: "photos", Usable: true, Problem: "Bucket photos is not Ready (S3Unavailable: down)"}, link: &resolved},
		{name: "Ready", bucket: bucket("team-photos", bucketReady), access: keyReady,
			want: linkState{Name: "photos", Usable: true, Ready: true}, link: &resolved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, state := resolveLink("team", link, tt.bucket, tt.access)
			if diff := cmp.Diff(tt.want, state); diff != "" {
				t.Errorf("resolveLink() state mismatch (-want +got):\n%s", diff)
			}
			want := resolvedLink{}
			if tt.link != nil {
				want = *tt.link
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resolveLink() link mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Conclude keeps the Application's own Ready events: its first Ready is a normal event, a
// finding someone has to act on warns, and losing Ready warns unless a rollout is the cause.
// What a pass did not reach stays as it was.
func TestConcludeReadyEvents(t *testing.T) {
	available := deployment(1, 1, 1)
	progressing := deployment(2, 1, 1)
	bucketsOK := condition(condTrue, "NoBuckets", "The Application links no Bucket")
	tests := []struct {
		name  string
		was   []readyFinding
		found applicationFound
		want  string
	}{
		{name: "first Ready", found: applicationFound{ready: running{bucketsOK, available}},
			want: "Normal Available Deployment web has 1 of 1 replicas available"},
		{name: "a refusal warns", found: applicationFound{ready: refused{"HostNotAllowed", nil}},
			want: "Warning HostNotAllowed The operator refuses to write this for the Application: "},
		{name: "a keyless link the provider cannot serve warns", found: applicationFound{ready: running{
			condition(condFalse, "AuthenticationUnsupported", "1 linked Bucket of 1 not Ready: photos: no STS"), nil}},
			want: "Warning AuthenticationUnsupported 1 linked Bucket of 1 not Ready: photos: no STS"},
		{name: "a rollout after Ready", was: []readyFinding{running{bucketsOK, available}},
			found: applicationFound{ready: running{bucketsOK, progressing}},
			want:  "Normal DeploymentProgressing Deployment web is rolling out generation 2"},
		{name: "losing Ready warns", was: []readyFinding{running{bucketsOK, available}},
			found: applicationFound{ready: running{bucketsOK, nil}},
			want:  "Warning DeploymentUnavailable The Deployment does not exist yet"},
		{name: "a pass that stopped early", was: []readyFinding{running{bucketsOK, available}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}}
			k := applicationKind{&ApplicationReconciler{Recorder: events.NewFakeRecorder(10)}}
			for _, f := range tt.was {
				k.Conclude(app, applicationOutcome{Found: applicationFound{ready: f}})
			}
			before := app.Status.DeepCopy()
			rec := events.NewFakeRecorder(10)
			k.Recorder = rec
			k.Conclude(app, applicationOutcome{Found: tt.found})
			var got string
			select {
			case got = <-rec.Events:
			default:
			}
			if got != tt.want {
				t.Errorf("event %q, want %q", got, tt.want)
			}
			if tt.found.ready == nil {
				if diff := cmp.Diff(before.Conditions, app.Status.Conditions); diff != "" {
					t.Errorf("conditions changed (-before +after):\n%s", diff)
				}
			}
		})
	}
}
