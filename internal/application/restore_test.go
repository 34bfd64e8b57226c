package application

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
)

func TestRestoreProblems(t *testing.T) {
	withRestore := &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}, RestoreCommand: []string{"restore"}}
	withoutRestore := &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"backup"}}
	tests := []struct {
		name     string
		snapshot *string
		backup   *paasv1alpha1.Backup
		want     []string // parts of the errors, in order
	}{
		{name: "no restore asked", backup: withoutRestore},
		{name: "a snapshot and a restore command", snapshot: ptr("web-backup-29412345"), backup: withRestore},
		{name: "no restore command", snapshot: ptr("web-backup-1"), backup: withoutRestore,
			want: []string{"spec.backup.restoreCommand: Required value"}},
		{name: "no backup at all", snapshot: ptr("web-backup-1"),
			want: []string{"spec.backup.restoreCommand: Required value"}},
		{name: "a snapshot that is more than one key segment", snapshot: ptr("../other/x"), backup: withRestore,
			want: []string{"metadata.annotations[paas.osm.dev/restore]: Invalid value"}},
		{name: "an empty snapshot", snapshot: ptr(""), backup: withRestore,
			want: []string{"must name a snapshot listed in status.backups"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: paasv1alpha1.ApplicationSpec{Backup: tt.backup}}
			if tt.snapshot != nil {
				app.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: *tt.snapshot}
			}
			errs := RestoreProblems(app)
			if len(errs) != len(tt.want) {
				t.Fatalf("RestoreProblems = %v, want %d errors %v", errs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }
