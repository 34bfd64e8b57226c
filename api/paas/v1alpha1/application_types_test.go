package v1alpha1

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var envPrefixPattern = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

func TestDefaultEnvPrefix(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{name: "photos", want: "PHOTOS_"},
		{name: "user-uploads", want: "USER_UPLOADS_"},
		{name: "my.bucket", want: "MY_BUCKET_"},
		{name: "a--b", want: "A__B_"},
		{name: "2024-logs", want: "B_2024_LOGS_"},
		{name: "0", want: "B_0_"},
		{name: "logs2", want: "LOGS2_"},
		{name: "Mixed", want: "MIXED_"},
		{name: "ünï", want: "_N__"},
		{name: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultEnvPrefix(tt.name)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DefaultEnvPrefix(%q) mismatch (-want +got):\n%s", tt.name, diff)
			}
			if got != "" && !envPrefixPattern.MatchString(got) {
				t.Errorf("DefaultEnvPrefix(%q) = %q, which is not a valid prefix", tt.name, got)
			}
		})
	}
}

func TestEnvPrefixOrDefault(t *testing.T) {
	if got := (BucketLink{Name: "photos", EnvPrefix: "PICS_"}).EnvPrefixOrDefault(); got != "PICS_" {
		t.Errorf("explicit envPrefix: got %q, want PICS_", got)
	}
	if got := (BucketLink{Name: "photos"}).EnvPrefixOrDefault(); got != "PHOTOS_" {
		t.Errorf("default envPrefix: got %q, want PHOTOS_", got)
	}
}

func TestBackupDefaults(t *testing.T) {
	app := &Application{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: ApplicationSpec{Image: "app:1"}}
	if got := app.BackupPrefixOrDefault(); got != "web/" {
		t.Errorf("prefix without backup = %q, want web/", got)
	}
	app.Spec.Backup = &Backup{}
	if got, want := []string{app.BackupPrefixOrDefault(), app.BackupImageOrDefault()}, []string{"web/", "app:1"}; !cmp.Equal(got, want) {
		t.Errorf("defaults = %q, want %q", got, want)
	}
	app.Spec.Backup = &Backup{Prefix: "backups/web/", Image: "tools:2"}
	if got, want := []string{app.BackupPrefixOrDefault(), app.BackupImageOrDefault()}, []string{"backups/web/", "tools:2"}; !cmp.Equal(got, want) {
		t.Errorf("explicit = %q, want %q", got, want)
	}
}
