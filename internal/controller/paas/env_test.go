package paas

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
)

func ref(secret, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}
}

var (
	photos = resolvedLink{Name: "photos", Prefix: "PHOTOS_", BucketName: "team-a-photos", Endpoint: "http://127.0.0.1:7070",
		PodEndpoint: "http://s3.test:7070", Region: "us-east-1", Access: accessState{Name: "web-photos", SecretName: "web-photos-credentials", AccessKeyID: "AKIAPHOTOS", Usable: true, Ready: true}}
	uploads = resolvedLink{Name: "user-uploads", Prefix: "USER_UPLOADS_", BucketName: "uploads-1", Endpoint: "https://s3.other",
		PodEndpoint: "https://s3.other", Region: "eu-west-1", Access: accessState{Name: "web-user-uploads", SecretName: "web-user-uploads-credentials", AccessKeyID: "AKIAUPLOADS", Usable: true}}
	backupCreds = accessState{Name: "web-backup", SecretName: "web-backup-credentials", AccessKeyID: "AKIABACKUP", Usable: true, Ready: true}
)

// Pods get each endpoint as pods reach it (photos': the manager reaches it at 127.0.0.1).
func TestBucketEnv(t *testing.T) {
	tests := []struct {
		name  string
		links []resolvedLink
		want  []corev1.EnvVar
	}{
		{name: "no links", links: nil, want: []corev1.EnvVar{}},
		{name: "one link", links: []resolvedLink{photos}, want: []corev1.EnvVar{
			{Name: "PHOTOS_BUCKET", Value: "team-a-photos"},
			{Name: "PHOTOS_ENDPOINT", Value: "http://s3.test:7070"},
			{Name: "PHOTOS_REGION", Value: "us-east-1"},
			{Name: "PHOTOS_ACCESS_KEY_ID", ValueFrom: ref("web-photos-credentials", "AWS_ACCESS_KEY_ID")},
			{Name: "PHOTOS_SECRET_ACCESS_KEY", ValueFrom: ref("web-photos-credentials", "AWS_SECRET_ACCESS_KEY")},
		}},
		{name: "two links keep their order", links: []resolvedLink{uploads, photos}, want: []corev1.EnvVar{
			{Name: "USER_UPLOADS_BUCKET", Value: "uploads-1"},
			{Name: "USER_UPLOADS_ENDPOINT", Value: "https://s3.other"},
			{Name: "USER_UPLOADS_REGION", Value: "eu-west-1"},
			{Name: "USER_UPLOADS_ACCESS_KEY_ID", ValueFrom: ref("web-user-uploads-credentials", "AWS_ACCESS_KEY_ID")},
			{Name: "USER_UPLOADS_SECRET_ACCESS_KEY", ValueFrom: ref("web-user-uploads-credentials", "AWS_SECRET_ACCESS_KEY")},
			{Name: "PHOTOS_BUCKET", Value: "team-a-photos"},
			{Name: "PHOTOS_ENDPOINT", Value: "http://s3.test:7070"},
			{Name: "PHOTOS_REGION", Value: "us-east-1"},
			{Name: "PHOTOS_ACCESS_KEY_ID", ValueFrom: ref("web-photos-credentials", "AWS_ACCESS_KEY_ID")},
			{Name: "PHOTOS_SECRET_ACCESS_KEY", ValueFrom: ref("web-photos-credentials", "AWS_SECRET_ACCESS_KEY")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, bucketEnv(tt.links, ownKey)); diff != "" {
				t.Errorf("bucketEnv() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A backup run gets ReadOnly keys for the links that may read, none for a WriteOnly link; a
// restore the keys of the links that may write, none for a ReadOnly one. A keyless
// Application's links have no key to lend: the backup and the restore use keys of their own.
func TestBackupAndRestoreLinkKeys(t *testing.T) {
	key := func(name string) accessState {
		return accessState{Name: name, SecretName: name + "-credentials", AccessKeyID: "AKIA" + name, Usable: true}
	}
	link := func(name string, mode storagev1alpha1.AccessMode, access accessState) resolvedLink {
		return resolvedLink{Name: name, Prefix: strings.ToUpper(name) + "_", Mode: mode, Access: access}
	}
	restore := key("web-restore")
	shared := accessState{Name: "web", SecretName: "web-credentials", RoleARN: "arn:aws:iam:::role/osm-1", Keyless: true, Usable: true}
	tests := []struct {
		name                  string
		keyless               bool
		link                  resolvedLink
		backupKey, restoreKey string // the Secrets read; "" for none
	}{
		{name: "photos", link: link("photos", storagev1alpha1.AccessReadWrite, key("web-photos")),
			backupKey: "web-photos-read-credentials", restoreKey: "web-photos-credentials"},
		{name: "media", link: link("media", storagev1alpha1.AccessReadWrite, key("web-media")),
			backupKey: "web-media-read-credentials", restoreKey: "web-media-credentials"},
		{name: "assets", link: link("assets", storagev1alpha1.AccessReadOnly, key("web-assets")), backupKey: "web-assets-credentials"},
		{name: "logs", link: link("logs", storagev1alpha1.AccessWriteOnly, key("web-logs")), restoreKey: "web-logs-credentials"},
		{name: "keyless photos", keyless: true, link: link("photos", storagev1alpha1.AccessReadWrite, shared),
			backupKey: "web-photos-read-credentials", restoreKey: "web-photos-write-credentials"},
		{name: "keyless assets", keyless: true, link: link("assets", storagev1alpha1.AccessReadOnly, shared),
			backupKey: "web-assets-read-credentials"},
		{name: "keyless logs", keyless: true, link: link("logs", storagev1alpha1.AccessWriteOnly, shared),
			restoreKey: "web-logs-write-credentials"},
	}
	secretOf := func(env []corev1.EnvVar) string {
		for _, e := range env {
			if e.ValueFrom != nil {
				return e.ValueFrom.SecretKeyRef.Name
			}
		}
		return ""
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accesses := appAccesses{restore: &restore, keyless: tt.keyless,
				backupReads: map[string]accessState{"photos": key("web-photos-read"), "media": key("web-media-read")}}
			if tt.keyless {
				accesses.backupReads["assets"] = key("web-assets-read")
				accesses.restoreWrites = map[string]accessState{"photos": key("web-photos-write"), "logs": key("web-logs-write")}
			}
			got := secretOf(bucketEnv([]resolvedLink{tt.link}, func(l resolvedLink) *accessState {
				k, ok := accesses.backupReadKey(l)
				if !ok {
					t.Fatalf("no backup key known for %s", l.Name)
				}
				return k
			}))
			if got != tt.backupKey {
				t.Errorf("a backup run reads Secret %q for link %s, want %q", got, tt.link.Name, tt.backupKey)
			}
			got = secretOf(bucketEnv([]resolvedLink{tt.link}, func(l resolvedLink) *accessState {
				k, ok := accesses.restoreWriteKey(l)
				if !ok {
					t.Fatalf("no restore key known for %s", l.Name)
				}
				return k
			}))
			if got != tt.restoreKey {
				t.Errorf("a restore reads Secret %q for link %s, want %q", got, tt.link.Name, tt.restoreKey)
			}
		})
	}
}

// The backup's AWS_* keys are its own BucketAccess's, not the link's.
func TestBackupEnv(t *testing.T) {
	want := []corev1.EnvVar{
		{Name: "BACKUP_BUCKET", Value: "team-a-photos"},
		{Name: "BACKUP_PREFIX", Value: "web/"},
		{Name: "AWS_ACCESS_KEY_ID", ValueFrom: ref("web-backup-credentials", "AWS_ACCESS_KEY_ID")},
		{Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: ref("web-backup-credentials", "AWS_SECRET_ACCESS_KEY")},
		{Name: "AWS_ENDPOINT_URL", Value: "http://s3.test:7070"},
		{Name: "AWS_REGION", Value: "us-east-1"},
	}
	if diff := cmp.Diff(want, backupEnv(photos, backupCreds, "web/")); diff != "" {
		t.Errorf("backupEnv() mismatch (-want +got):\n%s", diff)
	}
	// Reserved: what backupEnv, backupRunEnv and a restore Job set.
	names := []string{application.EnvRestoreSnapshot, application.EnvRestorePrefix}
	for _, e := range append(want, backupRunEnv()...) {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff(names, application.BackupEnvNames(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("application.BackupEnvNames() does not name the backup's and restore's variables (-want +got):\n%s", diff)
	}
}

// Each backup run writes a snapshot of its own, under a prefix the kubelet expands from the
// run's Job name.
func TestBackupRunEnv(t *testing.T) {
	want := []corev1.EnvVar{
		{Name: "BACKUP_RUN", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			APIVersion: "v1", FieldPath: "metadata.labels['batch.kubernetes.io/job-name']"}}},
		{Name: "BACKUP_SNAPSHOT_PREFIX", Value: "$(BACKUP_PREFIX)$(BACKUP_RUN)/"},
	}
	if diff := cmp.Diff(want, backupRunEnv()); diff != "" {
		t.Errorf("backupRunEnv() mismatch (-want +got):\n%s", diff)
	}
}

// Only BucketAccess Secrets are referenced, and every reference is to one of the accesses given.
func TestEnvReferencesOnlyBucketAccessSecrets(t *testing.T) {
	allowed := map[string]bool{photos.Access.SecretName: true, uploads.Access.SecretName: true, backupCreds.SecretName: true}
	for _, e := range append(bucketEnv([]resolvedLink{photos, uploads}, ownKey), backupEnv(photos, backupCreds, "p/")...) {
		if e.ValueFrom == nil {
			continue
		}
		if ref := e.ValueFrom.SecretKeyRef; ref == nil || !allowed[ref.Name] {
			t.Errorf("variable %s reads %+v, want a key of a BucketAccess's Secret", e.Name, e.ValueFrom)
		}
	}
}

func TestLinkEnvNames(t *testing.T) {
	want := []string{"PHOTOS_BUCKET", "PHOTOS_ENDPOINT", "PHOTOS_REGION", "PHOTOS_ACCESS_KEY_ID", "PHOTOS_SECRET_ACCESS_KEY"}
	if diff := cmp.Diff(want, application.LinkEnvNames("PHOTOS_")); diff != "" {
		t.Errorf("application.LinkEnvNames() mismatch (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range bucketEnv([]resolvedLink{photos}, ownKey) {
		got = append(got, e.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bucketEnv() names differ from application.LinkEnvNames() (-want +got):\n%s", diff)
	}
}

// Two different prefixes never define the same variable: no suffix ends another.
func TestLinkSuffixesNeverCollide(t *testing.T) {
	for _, a := range application.LinkSuffixes {
		for _, b := range application.LinkSuffixes {
			if a != b && len(a) > len(b) && a[len(a)-len(b):] == b {
				t.Errorf("suffix %s ends with suffix %s: prefixes X and X%s would collide", a, b, a[:len(a)-len(b)])
			}
		}
	}
}

func TestUserEnv(t *testing.T) {
	in := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "STORE", Value: "$(PHOTOS_BUCKET)"}}
	got := userEnv(in)
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("userEnv() mismatch (-want +got):\n%s", diff)
	}
	got[0].Value = "changed"
	if in[0].Value != "1" {
		t.Errorf("userEnv() shares its input")
	}
}
