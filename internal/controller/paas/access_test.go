package paas

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestAccessName(t *testing.T) {
	hash := func(name string) string {
		sum := sha256.Sum256([]byte(name))
		return hex.EncodeToString(sum[:])[:10]
	}
	p59, b60 := strings.Repeat("p", 59), strings.Repeat("b", 60)
	dotted := "b-" + strings.Repeat("x", 46) + "-.-" + b60
	tests := []struct {
		name, app, suffix, want string
	}{
		{name: "short", app: "web", suffix: "photos", want: "web-photos"},
		{name: "dots", app: "web", suffix: "my.bucket", want: "web-my.bucket"},
		{name: "63 characters: kept", app: "web", suffix: p59, want: "web-" + p59},
		{name: "longer: cut, with a hash of the whole", app: "web", suffix: b60,
			want: "web-" + strings.Repeat("b", 48) + "-" + hash("web-"+b60)},
		{name: "a cut never ends in - or .", app: "web", suffix: dotted,
			want: "web-b-" + strings.Repeat("x", 46) + "-" + hash("web-"+dotted)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := accessName(tt.app, tt.suffix)
			if got != tt.want {
				t.Errorf("accessName() = %q, want %q", got, tt.want)
			}
			if msgs := validation.IsValidLabelValue(got); len(msgs) > 0 {
				t.Errorf("accessName() = %q is not a label value: %v", got, msgs)
			}
			if msgs := validation.IsDNS1123Subdomain(got); len(msgs) > 0 {
				t.Errorf("accessName() = %q is not an object name: %v", got, msgs)
			}
		})
	}
}

func TestWantedAccesses(t *testing.T) {
	app := func(backup *paasv1alpha1.Backup, links ...paasv1alpha1.BucketLink) *paasv1alpha1.Application {
		return &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: paasv1alpha1.ApplicationSpec{Buckets: links, Backup: backup}}
	}
	backupTo := func(bucket string) *paasv1alpha1.Backup {
		return &paasv1alpha1.Backup{Bucket: bucket, Schedule: "@daily", Command: []string{"b"}}
	}
	keyless := func(a *paasv1alpha1.Application) *paasv1alpha1.Application {
		a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
		return a
	}
	tests := []struct {
		name string
		app  *paasv1alpha1.Application
		want []wantedAccess
	}{
		{name: "nothing linked", app: app(nil), want: []wantedAccess{}},
		{name: "links with their access; unset is ReadWrite",
			app: app(nil, paasv1alpha1.BucketLink{Name: "photos"}, paasv1alpha1.BucketLink{Name: "logs", Access: "WriteOnly"},
				paasv1alpha1.BucketLink{Name: "assets", Access: "ReadOnly"}),
			want: []wantedAccess{
				{Name: "web-photos", Bucket: "photos", Access: "ReadWrite", Component: "app"},
				{Name: "web-logs", Bucket: "logs", Access: "WriteOnly", Component: "app"},
				{Name: "web-assets", Bucket: "assets", Access: "ReadOnly", Component: "app"},
			}},
		{name: "a backup: WriteOnly to back up, ReadOnly to restore",
			app: app(backupTo("photos"), paasv1alpha1.BucketLink{Name: "photos", Access: "ReadOnly"}),
			want: []wantedAccess{
				{Name: "web-photos", Bucket: "photos", Access: "ReadOnly", Component: "app"},
				{Name: "web-backup", Bucket: "photos", Access: "WriteOnly", Prefix: "web/", Component: "backup"},
				{Name: "web-restore", Bucket: "photos", Access: "ReadOnly", Prefix: "web/", Component: "restore"},
			}},
		{name: "a backup reads the Buckets a link may write with ReadOnly keys of its own",
			app: app(backupTo("photos"), paasv1alpha1.BucketLink{Name: "photos"}, paasv1alpha1.BucketLink{Name: "media"},
				paasv1alpha1.BucketLink{Name: "assets", Access: "ReadOnly"}, paasv1alpha1.BucketLink{Name: "logs", Access: "WriteOnly"},
				paasv1alpha1.BucketLink{Name: "media-read", Access: "ReadOnly"}),
			want: []wantedAccess{
				{Name: "web-photos", Bucket: "photos", Access: "ReadWrite", Component: "app"},
				{Name: "web-media", Bucket: "media", Access: "ReadWrite", Component: "app"},
				{Name: "web-assets", Bucket: "assets", Access: "ReadOnly", Component: "app"},
				{Name: "web-logs", Bucket: "logs", Access: "WriteOnly", Component: "app"},
				{Name: "web-media-read", Bucket: "media-read", Access: "ReadOnly", Component: "app"},
				{Name: "web-backup", Bucket: "photos", Access: "WriteOnly", Prefix: "web/", Component: "backup"},
				{Name: "web-restore", Bucket: "photos", Access: "ReadOnly", Prefix: "web/", Component: "restore"},
				{Name: "web-photos-read", Bucket: "photos", Access: "ReadOnly", Component: "backup"},
				{Name: hashedName("web-media-read-media-read"), Bucket: "media", Access: "ReadOnly", Component: "backup"},
			}},
		{name: "a backup into a Bucket that is not linked gets nothing",
			app:  app(backupTo("elsewhere"), paasv1alpha1.BucketLink{Name: "photos"}),
			want: []wantedAccess{{Name: "web-photos", Bucket: "photos", Access: "ReadWrite", Component: "app"}}},
		{name: "a link to a Bucket named backup keeps its name",
			app: app(backupTo("backup"), paasv1alpha1.BucketLink{Name: "backup"}, paasv1alpha1.BucketLink{Name: "restore"}),
			want: []wantedAccess{
				{Name: "web-backup", Bucket: "backup", Access: "ReadWrite", Component: "app"},
				{Name: "web-restore", Bucket: "restore", Access: "ReadWrite", Component: "app"},
				{Name: hashedName("web-backup-backup"), Bucket: "backup", Access: "WriteOnly", Prefix: "web/", Component: "backup"},
				{Name: hashedName("web-restore-restore"), Bucket: "backup", Access: "ReadOnly", Prefix: "web/", Component: "restore"},
				{Name: "web-backup-read", Bucket: "backup", Access: "ReadOnly", Component: "backup"},
				{Name: "web-restore-read", Bucket: "restore", Access: "ReadOnly", Component: "backup"},
			}},
		{name: "keyless: the links share one BucketAccess with a role for the Application's ServiceAccount",
			app: keyless(app(nil, paasv1alpha1.BucketLink{Name: "photos"}, paasv1alpha1.BucketLink{Name: "logs", Access: "WriteOnly"},
				paasv1alpha1.BucketLink{Name: "assets", Access: "ReadOnly"})),
			want: []wantedAccess{{Name: "web", Component: "app", ServiceAccount: "web", Buckets: []storagev1alpha1.AccessBucket{
				{Name: "photos", Access: "ReadWrite"}, {Name: "logs", Access: "WriteOnly"}, {Name: "assets", Access: "ReadOnly"}}}}},
		{name: "keyless: the backup reads, and the restore writes, with keys of their own",
			app: keyless(app(backupTo("photos"), paasv1alpha1.BucketLink{Name: "photos"},
				paasv1alpha1.BucketLink{Name: "assets", Access: "ReadOnly"}, paasv1alpha1.BucketLink{Name: "logs", Access: "WriteOnly"})),
			want: []wantedAccess{
				{Name: "web", Component: "app", ServiceAccount: "web", Buckets: []storagev1alpha1.AccessBucket{
					{Name: "photos", Access: "ReadWrite"}, {Name: "assets", Access: "ReadOnly"}, {Name: "logs", Access: "WriteOnly"}}},
				{Name: "web-backup", Bucket: "photos", Access: "WriteOnly", Prefix: "web/", Component: "backup"},
				{Name: "web-restore", Bucket: "photos", Access: "ReadOnly", Prefix: "web/", Component: "restore"},
				{Name: "web-photos-read", Bucket: "photos", Access: "ReadOnly", Component: "backup"},
				{Name: "web-assets-read", Bucket: "assets", Access: "ReadOnly", Component: "backup"},
				{Name: "web-photos-write", Bucket: "photos", Access: "ReadWrite", Component: "restore"},
				{Name: "web-logs-write", Bucket: "logs", Access: "WriteOnly", Component: "restore"},
			}},
		{name: "keyless with nothing linked: no BucketAccess", app: keyless(app(nil)), want: []wantedAccess{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wantedAccesses(tt.app, true, true)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("wantedAccesses() mismatch (-want +got):\n%s", diff)
			}
			names := map[string]bool{}
			for _, w := range got {
				if names[w.Name] {
					t.Errorf("two BucketAccesses named %s", w.Name)
				}
				names[w.Name] = true
			}
		})
	}
}

func TestObserveAccess(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason, msg string, generation int64) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: status, Reason: reason, Message: msg, ObservedGeneration: generation}}
	}
	ba := func(generation int64, secret, keyID string, conds []metav1.Condition) *storagev1alpha1.BucketAccess {
		return &storagev1alpha1.BucketAccess{
			ObjectMeta: metav1.ObjectMeta{Name: "web-photos", UID: "uid-1", Generation: generation},
			Spec:       storagev1alpha1.BucketAccessSpec{Bucket: "photos", Access: "ReadOnly"},
			Status:     storagev1alpha1.BucketAccessStatus{SecretName: secret, KeyStatus: storagev1alpha1.KeyStatus{AccessKeyID: keyID}, Conditions: conds},
		}
	}
	keyless := func(a *storagev1alpha1.BucketAccess, roleARN string) *storagev1alpha1.BucketAccess {
		a.Name = "web"
		a.Spec = storagev1alpha1.BucketAccessSpec{Authentication: storagev1alpha1.AuthenticationServiceAccount, ServiceAccountName: "web",
			Buckets: []storagev1alpha1.AccessBucket{{Name: "photos", Access: "ReadOnly"}}}
		a.Status.RoleARN = roleARN
		return a
	}
	deleting := ba(1, "web-photos-credentials", "AKIA1", ready(condTrue, "Verified", "ok", 1))
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	base := accessState{Name: "web-photos", UID: "uid-1", SecretName: "web-photos-credentials", AccessKeyID: "AKIA1"}
	with := func(f func(*accessState)) accessState {
		s := base
		f(&s)
		return s
	}
	tests := []struct {
		name string
		ba   *storagev1alpha1.BucketAccess
		want accessState
	}{
		{name: "just made", ba: ba(1, "", "", nil),
			want: accessState{Name: "web-photos", UID: "uid-1", Problem: "BucketAccess web-photos has no status yet"}},
		{name: "no key yet", ba: ba(1, "", "", ready(condFalse, "BucketNotReady", "Bucket photos is not Ready", 1)),
			want: accessState{Name: "web-photos", UID: "uid-1", Reason: "BucketNotReady",
				Problem: "BucketAccess web-photos is not Ready (BucketNotReady: Bucket photos is not Ready)"}},
		{name: "Ready", ba: ba(1, "web-photos-credentials", "AKIA1", ready(condTrue, "Verified", "ok", 1)),
			want: with(func(s *accessState) { s.Usable, s.Ready = true, true })},
		{name: "a key that does not work yet", ba: ba(1, "web-photos-credentials", "AKIA1", ready(condFalse, "PolicyPending", "not granted yet", 1)),
			want: with(func(s *accessState) {
				s.Usable, s.Problem, s.Reason = true, "BucketAccess web-photos is not Ready (PolicyPending: not granted yet)", "PolicyPending"
			})},
		{name: "Ready for an older access", ba: ba(2, "web-photos-credentials", "AKIA1", ready(condTrue, "Verified", "ok", 1)),
			want: with(func(s *accessState) {
				s.Usable, s.Problem = true, "BucketAccess web-photos has not yet taken its access ReadOnly into account"
			})},
		{name: "being deleted", ba: deleting,
			want: with(func(s *accessState) { s.Problem = "BucketAccess web-photos is being deleted" })},
		{name: "keyless, with its role", ba: keyless(ba(1, "web-credentials", "", ready(condTrue, "Available", "ok", 1)), "arn:aws:iam::a:role/osm-1"),
			want: accessState{Name: "web", UID: "uid-1", SecretName: "web-credentials", RoleARN: "arn:aws:iam::a:role/osm-1", Keyless: true,
				Usable: true, Ready: true}},
		{name: "keyless, the provider has no STS", ba: keyless(ba(1, "", "", ready(condFalse, "AuthenticationUnsupported", "no STS", 1)), ""),
			want: accessState{Name: "web", UID: "uid-1", Keyless: true, Reason: "AuthenticationUnsupported",
				Problem: "BucketAccess web is not Ready (AuthenticationUnsupported: no STS)"}},
		{name: "keyless, Ready for older buckets", ba: keyless(ba(2, "web-credentials", "", ready(condTrue, "Available", "ok", 1)), "arn:r"),
			want: accessState{Name: "web", UID: "uid-1", SecretName: "web-credentials", RoleARN: "arn:r", Keyless: true, Usable: true,
				Problem: "BucketAccess web has not yet taken its buckets into account"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, observeAccess(tt.ba)); diff != "" {
				t.Errorf("observeAccess() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAccessKeys(t *testing.T) {
	if got, want := accessKeys(photos.Access, uploads.Access, backupCreds), "web-photos=AKIAPHOTOS,web-user-uploads=AKIAUPLOADS,web-backup=AKIABACKUP"; got != want {
		t.Errorf("accessKeys() = %q, want %q", got, want)
	}
	if got := accessKeys(); got != "" {
		t.Errorf("accessKeys() of nothing = %q, want empty", got)
	}
}

// The key ids roll the pods; the checksum of the Contract's keys that older versions set goes.
func TestSetAccessKeys(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		keys string
		want map[string]string
	}{
		{name: "none before", keys: "web-photos=AKIA1", want: map[string]string{AccessKeysAnnotation: "web-photos=AKIA1"}},
		{name: "a rotated key", in: map[string]string{AccessKeysAnnotation: "web-photos=AKIA1", "x": "y"}, keys: "web-photos=AKIA2",
			want: map[string]string{AccessKeysAnnotation: "web-photos=AKIA2", "x": "y"}},
		{name: "the old checksum goes", in: map[string]string{legacyChecksumAnnotation: "sha256:00"}, keys: "web-photos=AKIA1",
			want: map[string]string{AccessKeysAnnotation: "web-photos=AKIA1"}},
		{name: "no links any more", in: map[string]string{AccessKeysAnnotation: "web-photos=AKIA1", "x": "y"},
			want: map[string]string{"x": "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tt.in}}
			setAccessKeys(tpl, tt.keys)
			if diff := cmp.Diff(tt.want, tpl.Annotations); diff != "" {
				t.Errorf("annotations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A backup the operator refuses (its prefix, say) gets no keys: not the backup's, the
// restore's or the reads'.
func TestARefusedBackupGetsNoKeys(t *testing.T) {
	app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: paasv1alpha1.ApplicationSpec{
		Buckets: []paasv1alpha1.BucketLink{{Name: "photos"}},
		Backup:  &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"b"}, Prefix: "$(X)/"}}}
	want := []wantedAccess{{Name: "web-photos", Bucket: "photos", Access: "ReadWrite", Component: "app"}}
	if diff := cmp.Diff(want, wantedAccesses(app, true, false)); diff != "" {
		t.Errorf("wantedAccesses() mismatch (-want +got):\n%s", diff)
	}
}

// Keyless links the operator refuses (Buckets of two Contracts) get no shared BucketAccess;
// the backup keeps its own keys.
func TestRefusedKeylessLinksGetNoBucketAccess(t *testing.T) {
	app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: paasv1alpha1.ApplicationSpec{
		Authentication: storagev1alpha1.AuthenticationServiceAccount,
		Buckets:        []paasv1alpha1.BucketLink{{Name: "photos", Access: "WriteOnly"}}}}
	if got := wantedAccesses(app, false, true); len(got) != 0 {
		t.Errorf("wantedAccesses() = %v, want none", got)
	}
}
