package v1alpha1

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

// validApp passes every rule: in namespace team-a, linking Bucket photos, backing up to it.
func validApp() *paasv1alpha1.Application {
	return &paasv1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec: paasv1alpha1.ApplicationSpec{
			Image:          "registry.example/web:1",
			Port:           8080,
			Replicas:       ptr.To(int32(1)),
			Authentication: storagev1alpha1.AuthenticationKey,
			Buckets:        []paasv1alpha1.BucketLink{{Name: "photos", EnvPrefix: "PHOTOS_", Access: storagev1alpha1.AccessReadWrite}},
			Backup:         &paasv1alpha1.Backup{Bucket: "photos", Schedule: "0 3 * * *", Command: []string{"backup"}, Prefix: "web/"},
		},
	}
}

// readerWith holds Buckets photos, logs (of Contract team), a-b (of Contract other) and a.b in
// team-a, logs in team-b, and going (being deleted) in team-a; and Applications that back up: shop and cdn into photos under shop/ and
// media/cdn/, and blog into a-b under web/, in team-a; web into photos under web/ in team-b; and
// old-web (being deleted) into photos under web/ in team-a. Applications blog in team-a and
// store in team-b serve blog.example.com and store.example.com, and going (being deleted) in
// team-b serves old.example.com.
func readerWith() webhooktest.Reader {
	deleting := metav1.Now()
	backingUp := func(ns, name, bucket, prefix string, deleted *metav1.Time) *paasv1alpha1.Application {
		app := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, DeletionTimestamp: deleted},
			Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/web:1", Buckets: []paasv1alpha1.BucketLink{{Name: bucket}},
				Backup: &paasv1alpha1.Backup{Bucket: bucket, Schedule: "@daily", Command: []string{"b"}, Prefix: prefix}}}
		if deleted != nil {
			app.Finalizers = []string{"x"}
		}
		return app
	}
	return webhooktest.Reader{Objects: []client.Object{
		backingUp("team-a", "shop", "photos", "shop/", nil),
		backingUp("team-a", "cdn", "photos", "media/cdn/", nil),
		func() *paasv1alpha1.Application {
			blog := backingUp("team-a", "blog", "a-b", "web/", nil)
			blog.Spec.Host = "blog.example.com"
			return blog
		}(),
		backingUp("team-b", "web", "photos", "web/", nil),
		backingUp("team-a", "old-web", "photos", "web/", &deleting),
		&paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "store"},
			Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/store:1", Host: "store.example.com"}},
		&paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "going", DeletionTimestamp: &deleting, Finalizers: []string{"x"}},
			Spec: paasv1alpha1.ApplicationSpec{Image: "registry.example/store:1", Host: "old.example.com"}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "photos"}, Spec: storagev1alpha1.BucketSpec{ContractName: "team"}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs"}, Spec: storagev1alpha1.BucketSpec{ContractName: "team"}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "a-b"}, Spec: storagev1alpha1.BucketSpec{ContractName: "other"}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "a.b"}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "other"}},
		&storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "going", DeletionTimestamp: &deleting, Finalizers: []string{"x"}}},
	}}
}

func TestApplicationDefault(t *testing.T) {
	tests := []struct {
		name   string
		in     func(*paasv1alpha1.Application)
		want   func(*paasv1alpha1.Application)
		noName bool
	}{
		{name: "everything set stays", in: func(*paasv1alpha1.Application) {}, want: func(*paasv1alpha1.Application) {}},
		{name: "empty fields get defaults", in: func(a *paasv1alpha1.Application) {
			a.Spec.Port, a.Spec.Replicas = 0, nil
			a.Spec.Buckets = []paasv1alpha1.BucketLink{{Name: "photos"}, {Name: "user-uploads"}, {Name: "2024", EnvPrefix: "OLD_"}}
			a.Spec.Backup.Prefix = ""
		}, want: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = []paasv1alpha1.BucketLink{{Name: "photos", EnvPrefix: "PHOTOS_", Access: "ReadWrite"},
				{Name: "user-uploads", EnvPrefix: "USER_UPLOADS_", Access: "ReadWrite"}, {Name: "2024", EnvPrefix: "OLD_", Access: "ReadWrite"}}
		}},
		{name: "an access set stays", in: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = []paasv1alpha1.BucketLink{{Name: "photos", Access: "ReadOnly"}, {Name: "logs", Access: "WriteOnly"}}
		}, want: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = []paasv1alpha1.BucketLink{{Name: "photos", EnvPrefix: "PHOTOS_", Access: "ReadOnly"},
				{Name: "logs", EnvPrefix: "LOGS_", Access: "WriteOnly"}}
		}},
		{name: "no authentication is Key", in: func(a *paasv1alpha1.Application) { a.Spec.Authentication = "" },
			want: func(*paasv1alpha1.Application) {}},
		{name: "ServiceAccount stays", in: func(a *paasv1alpha1.Application) {
			a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
		},
			want: func(a *paasv1alpha1.Application) {
				a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
			}},
		{name: "zero replicas stay zero", in: func(a *paasv1alpha1.Application) { a.Spec.Replicas = ptr.To(int32(0)) },
			want: func(a *paasv1alpha1.Application) { a.Spec.Replicas = ptr.To(int32(0)) }},
		{name: "no backup", in: func(a *paasv1alpha1.Application) { a.Spec.Backup = nil },
			want: func(a *paasv1alpha1.Application) { a.Spec.Backup = nil }},
		{name: "generateName leaves the backup prefix to the controller", noName: true,
			in:   func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "" },
			want: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := validApp(), validApp()
			if tt.noName {
				got.Name, got.GenerateName = "", "web-"
				want.Name, want.GenerateName = "", "web-"
			}
			tt.in(got)
			tt.want(want)
			if err := (&ApplicationDefaulter{}).Default(context.Background(), got); err != nil {
				t.Fatalf("Default() error = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Default() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplicationValidateCreate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*paasv1alpha1.Application)
		want   []string
	}{
		{name: "valid", modify: func(*paasv1alpha1.Application) {}},
		{name: "everything set", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Command, a.Spec.Args = []string{"/web"}, []string{"-v"}
			a.Spec.Env = []corev1.EnvVar{{Name: "STORE", Value: "$(PHOTOS_BUCKET)"}, {Name: "LOGS_BUCKET_NAME"}}
			a.Spec.Port, a.Spec.Replicas, a.Spec.Host = 65535, ptr.To(int32(0)), "web.team-a.example.com"
			a.Spec.Buckets = []paasv1alpha1.BucketLink{{Name: "photos", EnvPrefix: "PHOTOS_"}, {Name: "logs"}, {Name: "a-b", EnvPrefix: "_"}}
			a.Spec.Backup = &paasv1alpha1.Backup{Bucket: "logs", Schedule: "@daily", Command: []string{"b"}, Image: "tools:1", Suspend: true}
		}},
		{name: "no links, no backup", modify: func(a *paasv1alpha1.Application) { a.Spec.Buckets, a.Spec.Backup = nil, nil }},
		{name: "keyless, links of one Contract", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "logs"})
		}},
		{name: "keyless, links of two Contracts", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "logs"}, paasv1alpha1.BucketLink{Name: "a-b"})
		}, want: []string{
			`spec.buckets[2].name: Invalid value: "a-b": belongs to Contract other and Bucket photos to Contract team: with spec.authentication ServiceAccount ` +
				`the links share one role, in one Contract's account, so every linked Bucket must belong to the same Contract`,
		}},
		{name: "keyless, an env name the pods get for the role", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
			a.Spec.Env = []corev1.EnvVar{{Name: "AWS_ROLE_ARN", Value: "arn:mine"}}
		}, want: []string{
			`spec.env[0].name: Invalid value: "AWS_ROLE_ARN": is set in the application's container (spec.authentication ServiceAccount); choose another name`,
		}},
		{name: "generateName", modify: func(a *paasv1alpha1.Application) { a.Name, a.GenerateName = "", "9-" }},

		// what the API server would refuse in the children
		{name: "an env name the API refuses", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Env = []corev1.EnvVar{{Name: "1=BAD", Value: "x"}}
		}, want: []string{
			`spec.env[0].name: Invalid value: "1=BAD": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')`,
		}},
		{name: "requests above limits", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			}
		}, want: []string{
			`spec.resources.requests[cpu]: Invalid value: "2": must be less than or equal to the cpu limit (500m)`,
		}},

		// name
		{name: "name not a DNS-1035 label", modify: func(a *paasv1alpha1.Application) { a.Name = "1web" }, want: []string{
			`metadata.name: Invalid value: "1web": must be usable as a Service name: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
		}},
		{name: "name too long for the backup CronJob", modify: func(a *paasv1alpha1.Application) { a.Name = strings.Repeat("w", 46) }, want: []string{
			`metadata.name: Invalid value: "` + strings.Repeat("w", 46) + `": must be no more than 45 characters with spec.backup set: the backup CronJob is named "` + strings.Repeat("w", 46) + `-backup", at most 52 characters`,
		}},
		{name: "long name without backup", modify: func(a *paasv1alpha1.Application) { a.Name, a.Spec.Backup = strings.Repeat("w", 63), nil }},

		// image, port, replicas, host
		{name: "no image", modify: func(a *paasv1alpha1.Application) { a.Spec.Image = " " }, want: []string{
			`spec.image: Required value: name the container image to run`,
		}},
		{name: "image with spaces", modify: func(a *paasv1alpha1.Application) { a.Spec.Image = "not a valid image reference" }, want: []string{
			`spec.image: Invalid value: "not a valid image reference": must be a container image reference such as nginx:1.27 or registry.example.com/team/app:1.2: invalid reference format`,
		}},
		{name: "image with a trailing space", modify: func(a *paasv1alpha1.Application) { a.Spec.Image = "nginx:1.27 " }, want: []string{
			`spec.image: Invalid value: "nginx:1.27 ": must be a container image reference such as nginx:1.27 or registry.example.com/team/app:1.2: invalid reference format`,
		}},
		{name: "image in capitals", modify: func(a *paasv1alpha1.Application) { a.Spec.Image = "Nginx:1.27" }, want: []string{
			`spec.image: Invalid value: "Nginx:1.27": must be a container image reference such as nginx:1.27 or registry.example.com/team/app:1.2: invalid reference format: repository name (library/Nginx) must be lowercase`,
		}},
		{name: "image by digest", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Image = "registry.example.com:5000/team/web@sha256:" + strings.Repeat("ab", 32)
		}},
		{name: "backup image not a reference", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Image = "tools:1 --rm" }, want: []string{
			`spec.backup.image: Invalid value: "tools:1 --rm": must be a container image reference such as nginx:1.27 or registry.example.com/team/app:1.2: invalid reference format`,
		}},
		{name: "port out of range", modify: func(a *paasv1alpha1.Application) { a.Spec.Port = 70000 }, want: []string{
			`spec.port: Invalid value: 70000: must be between 1 and 65535, inclusive`,
		}},
		{name: "negative replicas", modify: func(a *paasv1alpha1.Application) { a.Spec.Replicas = ptr.To(int32(-1)) }, want: []string{
			`spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
		}},
		{name: "host not a DNS name", modify: func(a *paasv1alpha1.Application) { a.Spec.Host = "Web_App" }, want: []string{
			`spec.host: Invalid value: "Web_App": must be a DNS name such as app.example.com: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
		{name: "host another namespace's Application serves", modify: func(a *paasv1alpha1.Application) { a.Spec.Host = "store.example.com" }, want: []string{
			`spec.host: Invalid value: "store.example.com": is already served by an Application in another namespace: a host belongs to one Application`,
		}},
		{name: "host another Application of the namespace serves", modify: func(a *paasv1alpha1.Application) { a.Spec.Host = "blog.example.com" }, want: []string{
			`spec.host: Invalid value: "blog.example.com": is already served by Application blog: a host belongs to one Application`,
		}},
		{name: "host of an Application being deleted", modify: func(a *paasv1alpha1.Application) { a.Spec.Host = "old.example.com" }},
		{name: "host an IP address", modify: func(a *paasv1alpha1.Application) { a.Spec.Host = "10.0.0.1" }, want: []string{
			`spec.host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
		}},

		// buckets
		{name: "link without a name", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{EnvPrefix: "X_"})
		}, want: []string{`spec.buckets[1].name: Required value: name a Bucket in this namespace`}},
		{name: "Bucket linked twice", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "photos", EnvPrefix: "PICS_"})
		}, want: []string{`spec.buckets[1].name: Invalid value: "photos": is already linked by spec.buckets[0]`}},
		{name: "invalid env prefix", modify: func(a *paasv1alpha1.Application) { a.Spec.Buckets[0].EnvPrefix = "photos-" }, want: []string{
			`spec.buckets[0].envPrefix: Invalid value: "photos-": must consist of upper-case letters, digits and '_', and must not start with a digit (regex ^[A-Z_][A-Z0-9_]*$)`,
		}},
		{name: "env prefix starting with a digit", modify: func(a *paasv1alpha1.Application) { a.Spec.Buckets[0].EnvPrefix = "1_" }, want: []string{
			`spec.buckets[0].envPrefix: Invalid value: "1_": must consist of upper-case letters, digits and '_', and must not start with a digit (regex ^[A-Z_][A-Z0-9_]*$)`,
		}},
		{name: "derived prefixes collide", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "a-b"}, paasv1alpha1.BucketLink{Name: "a.b"})
		}, want: []string{
			`spec.buckets[2].envPrefix: Invalid value: "A_B_": is also the envPrefix of spec.buckets[1] (Bucket a-b): each link needs its own; set envPrefix on one of them`,
		}},
		{name: "explicit prefix takes another link's", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "logs", EnvPrefix: "PHOTOS_"})
		}, want: []string{
			`spec.buckets[1].envPrefix: Invalid value: "PHOTOS_": is also the envPrefix of spec.buckets[0] (Bucket photos): each link needs its own; set envPrefix on one of them`,
		}},
		{name: "Bucket missing", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "missing"})
		}, want: []string{`spec.buckets[1].name: Invalid value: "missing": no Bucket of this name in namespace "team-a"`}},
		{name: "Bucket only in another namespace", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "other"})
		}, want: []string{`spec.buckets[1].name: Invalid value: "other": no Bucket of this name in namespace "team-a"`}},
		{name: "Bucket being deleted", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "going"})
		}, want: []string{`spec.buckets[1].name: Invalid value: "going": the Bucket is being deleted`}},

		// env
		{name: "env name a link defines", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "PHOTOS_SECRET_ACCESS_KEY", Value: "x"}}
		}, want: []string{
			`spec.env[1].name: Invalid value: "PHOTOS_SECRET_ACCESS_KEY": is set by the link to Bucket photos (spec.buckets[0]); choose another name`,
		}},
		{name: "env reading another Secret", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Env = []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}
		}, want: []string{
			`spec.env[0].valueFrom.secretKeyRef: Forbidden: an Application reads Secrets only through its linked Buckets (spec.buckets)`,
		}},
		{name: "env reading a ConfigMap or the downward API", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Env = []corev1.EnvVar{
				{Name: "CONFIG", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}},
				{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
				{Name: "FILE", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "v", Path: "p", Key: "k"}}},
				{Name: "EMPTY", ValueFrom: &corev1.EnvVarSource{}},
			}
		}, want: []string{
			`spec.env[0].valueFrom.configMapKeyRef: Forbidden: an Application's env holds plain values (value); the operator writes the pods, which would read a ConfigMap the Application's author may not`,
			`spec.env[1].valueFrom.fieldRef: Forbidden: an Application's env holds plain values (value); the pod's fields (the downward API) are not offered`,
			`spec.env[2].valueFrom.resourceFieldRef: Forbidden: an Application's env holds plain values (value); the container's resources (the downward API) are not offered`,
			`spec.env[3].valueFrom.fileKeyRef: Forbidden: an Application's env holds plain values (value); an Application's pods have no volumes to read a file from`,
			`spec.env[4].valueFrom: Forbidden: an Application's env holds plain values (value); references are not offered`,
		}},
		{name: "env name the backup defines", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Env = []corev1.EnvVar{{Name: "AWS_REGION", Value: "x"}}
		}, want: []string{
			`spec.env[0].name: Invalid value: "AWS_REGION": is set in the backup container (spec.backup); choose another name`,
		}},
		{name: "backup names are free without a backup", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Backup = nil
			a.Spec.Env = []corev1.EnvVar{{Name: "AWS_REGION", Value: "x"}, {Name: "BACKUP_PREFIX", Value: "y"}}
		}},

		// backup
		{name: "backup bucket not linked", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "logs"})
			a.Spec.Backup.Bucket = "backups"
		}, want: []string{
			`spec.backup.bucket: Invalid value: "backups": must be one of the linked Buckets (spec.buckets[].name): "photos", "logs"`,
		}},
		{name: "backup without links", modify: func(a *paasv1alpha1.Application) { a.Spec.Buckets = nil }, want: []string{
			`spec.backup.bucket: Invalid value: "photos": must be one of the linked Buckets (spec.buckets[].name), and none is linked`,
		}},
		{name: "backup bucket empty", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Bucket = "" }, want: []string{
			`spec.backup.bucket: Required value: name the linked Bucket to back up to`,
		}},
		{name: "schedule with four fields", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Schedule = "0 3 * *" }, want: []string{
			`spec.backup.schedule: Invalid value: "0 3 * *": must be a cron schedule such as "0 3 * * *" or "@daily": expected exactly 5 fields, found 4: [0 3 * *]`,
		}},
		{name: "schedule out of range", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Schedule = "61 * * * *" }, want: []string{
			`spec.backup.schedule: Invalid value: "61 * * * *": must be a cron schedule such as "0 3 * * *" or "@daily": end of range (61) above maximum (59): 61`,
		}},
		{name: "unknown descriptor", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Schedule = "@sometimes" }, want: []string{
			`spec.backup.schedule: Invalid value: "@sometimes": must be a cron schedule such as "0 3 * * *" or "@daily": unrecognized descriptor: @sometimes`,
		}},
		{name: "schedule with a time zone", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Schedule = "CRON_TZ=UTC 0 3 * * *" }, want: []string{
			`spec.backup.schedule: Invalid value: "CRON_TZ=UTC 0 3 * * *": must not set a time zone (TZ= or CRON_TZ=)`,
		}},
		{name: "empty schedule", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Schedule = "" }, want: []string{
			`spec.backup.schedule: Required value: give a cron schedule such as "0 3 * * *" or "@daily"`,
		}},
		{name: "no backup command", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Command = nil }, want: []string{
			`spec.backup.command: Required value: give the command that makes the backup`,
		}},
		{name: "absolute backup prefix", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "/web/" }, want: []string{
			`spec.backup.prefix: Invalid value: "/web/": must not start with "/": object keys are relative to the bucket`,
		}},
		{name: "backup prefix a folder of folders", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "team-a/web_1/v2.0/" }},
		{name: "backup prefix with a variable", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "$(PHOTOS_BUCKET)/" }, want: []string{
			`spec.backup.prefix: Invalid value: "$(PHOTOS_BUCKET)/": must not contain "$": the pod would expand $(VAR) in it and write where the retention rule and the listing do not look`,
			`spec.backup.prefix: Invalid value: "$(PHOTOS_BUCKET)/": each segment must start with a letter or digit and hold only letters, digits, '.', '_' and '-' (regex ^[A-Za-z0-9][A-Za-z0-9._-]*$)`,
		}},
		{name: "backup prefix not a folder", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "web" }, want: []string{
			`spec.backup.prefix: Invalid value: "web": must end with "/": a prefix is a folder of its own ("web" would also cover "web-old/")`,
		}},
		{name: "backup prefix climbing out", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "web/../shop/" }, want: []string{
			`spec.backup.prefix: Invalid value: "web/../shop/": must not have a "." or ".." segment: tools that treat keys as paths would write elsewhere`,
		}},
		{name: "backup prefix with an empty segment", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "web//" }, want: []string{
			`spec.backup.prefix: Invalid value: "web//": must not have an empty segment ("//")`,
		}},
		{name: "backup prefix with a space", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "my web/" }, want: []string{
			`spec.backup.prefix: Invalid value: "my web/": each segment must start with a letter or digit and hold only letters, digits, '.', '_' and '-' (regex ^[A-Za-z0-9][A-Za-z0-9._-]*$)`,
		}},
		{name: "default backup prefix around another Application's", modify: func(a *paasv1alpha1.Application) { a.Name, a.Spec.Backup.Prefix = "media", "" }, want: []string{
			`spec.backup.prefix: Invalid value: "media/": overlaps "media/cdn/", where Application cdn backs up into Bucket photos: each Application backs up under a prefix of its own that no other one's starts with`,
		}},
		{name: "backup prefix inside another Application's", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "shop/web/" }, want: []string{
			`spec.backup.prefix: Invalid value: "shop/web/": overlaps "shop/", where Application shop backs up into Bucket photos: each Application backs up under a prefix of its own that no other one's starts with`,
		}},
		{name: "backup prefix that only starts like another Application's", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Prefix = "shopping/" }},
		{name: "backup prefix another Application uses in another Bucket, another namespace, or while it is deleted", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Backup.Prefix = "web/"
		}},
		{name: "retention on a ReadOnly link", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets[0].Access = storagev1alpha1.AccessReadOnly
			a.Spec.Backup.Retention = "1d"
		}, want: []string{
			`spec.backup.retention: Forbidden: expires objects in Bucket photos, which this Application links ReadOnly (spec.buckets[0].access): link it ReadWrite or WriteOnly, or keep the backups without a retention`,
		}},
		{name: "backup without retention on a ReadOnly link", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets[0].Access = storagev1alpha1.AccessReadOnly
		}},
		{name: "retention on a WriteOnly link", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets[0].Access = storagev1alpha1.AccessWriteOnly
			a.Spec.Backup.Retention = "14d"
		}},

		// Every problem at once, in field order, the Bucket lookups last.
		{name: "all problems reported together", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Image = ""
			a.Spec.Buckets = []paasv1alpha1.BucketLink{{Name: "photos", EnvPrefix: "P_"}, {Name: "missing", EnvPrefix: "P_"}}
			a.Spec.Env = []corev1.EnvVar{{Name: "P_BUCKET", Value: "x"}}
			a.Spec.Backup.Schedule = "daily"
		}, want: []string{
			`spec.image: Required value: name the container image to run`,
			`spec.buckets[1].envPrefix: Invalid value: "P_": is also the envPrefix of spec.buckets[0] (Bucket photos): each link needs its own; set envPrefix on one of them`,
			`spec.backup.schedule: Invalid value: "daily": must be a cron schedule such as "0 3 * * *" or "@daily": expected exactly 5 fields, found 1: [daily]`,
			`spec.env[0].name: Invalid value: "P_BUCKET": is set by the link to Bucket photos (spec.buckets[0]); choose another name`,
			`spec.buckets[1].name: Invalid value: "missing": no Bucket of this name in namespace "team-a"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := validApp()
			tt.modify(app)
			warnings, err := (&ApplicationValidator{Reader: readerWith(), Applications: readerWith()}).ValidateCreate(context.Background(), app)
			if len(warnings) > 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// With --ingress-domains={namespace}.apps.test, each namespace serves names under a domain of
// its own, which no other namespace can claim.
func TestApplicationValidateCreateNamespaceDomains(t *testing.T) {
	for _, tt := range []struct {
		host string
		want []string
	}{
		{host: "web.team-a.apps.test"},
		{host: "web.team-b.apps.test", want: []string{`spec.host: Invalid value: "web.team-b.apps.test": ` +
			"must be a name under a domain this cluster lets Applications serve: *.team-a.apps.test"}},
		{host: "team-a.apps.test", want: []string{`spec.host: Invalid value: "team-a.apps.test": ` +
			"must be a name under a domain this cluster lets Applications serve: *.team-a.apps.test"}},
	} {
		t.Run(tt.host, func(t *testing.T) {
			app := validApp() // in team-a
			app.Spec.Host = tt.host
			v := &ApplicationValidator{Reader: readerWith(), Applications: readerWith(), IngressDomains: []string{"{namespace}.apps.test"}}
			_, err := v.ValidateCreate(context.Background(), app)
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// With --ingress-domains set, a tenant may serve only names under those domains.
func TestApplicationValidateCreateIngressDomains(t *testing.T) {
	const refused = "must be a name under a domain this cluster lets Applications serve: *.apps.example.com, *.shop.example"
	tests := []struct {
		host string
		want []string
	}{
		{host: "web.apps.example.com"},
		{host: "a.b.shop.example"},
		{host: "grafana.corp.example", want: []string{`spec.host: Invalid value: "grafana.corp.example": ` + refused}},
		{host: "apps.example.com", want: []string{`spec.host: Invalid value: "apps.example.com": ` + refused}},
		{host: "evilapps.example.com", want: []string{`spec.host: Invalid value: "evilapps.example.com": ` + refused}},
		{host: "web.apps.example.com.evil.example", want: []string{`spec.host: Invalid value: "web.apps.example.com.evil.example": ` + refused}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			app := validApp()
			app.Spec.Host = tt.host
			v := &ApplicationValidator{Reader: readerWith(), Applications: readerWith(), IngressDomains: []string{"apps.example.com", "shop.example"}}
			_, err := v.ValidateCreate(context.Background(), app)
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplicationInvalidMessage pins the whole message, which kubectl shows as
// `The Application "web" is invalid: ...`.
func TestApplicationInvalidMessage(t *testing.T) {
	app := validApp()
	app.Spec.Backup.Bucket = "logs"
	_, err := (&ApplicationValidator{Reader: readerWith(), Applications: readerWith()}).ValidateCreate(context.Background(), app)
	want := `Application.paas.osm.dev "web" is invalid: ` +
		`spec.backup.bucket: Invalid value: "logs": must be one of the linked Buckets (spec.buckets[].name): "photos"`
	if err == nil || err.Error() != want {
		t.Errorf("ValidateCreate() error =\n%v\nwant\n%s", err, want)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error %T is not an API status", err)
	}
	if d := status.Status().Details; d.Kind != "Application" || d.Group != "paas.osm.dev" || d.Name != "web" {
		t.Errorf("details = %s %s %q, want Application paas.osm.dev \"web\"", d.Group, d.Kind, d.Name)
	}
}

func TestApplicationValidateCreateLookupFails(t *testing.T) {
	_, err := (&ApplicationValidator{Reader: webhooktest.Reader{Err: errors.New("connection refused")}}).ValidateCreate(context.Background(), validApp())
	want := `Internal error occurred: looking up Bucket "photos": connection refused`
	if !apierrors.IsInternalError(err) || err.Error() != want {
		t.Errorf("ValidateCreate() error = %v, want the internal error %q", err, want)
	}
}

func TestApplicationValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*paasv1alpha1.Application)
		modify func(*paasv1alpha1.Application)
		want   []string
	}{
		{name: "unchanged", modify: func(*paasv1alpha1.Application) {}},
		{name: "metadata only", modify: func(a *paasv1alpha1.Application) { a.Labels = map[string]string{"x": "y"} }},
		{name: "image changed", modify: func(a *paasv1alpha1.Application) { a.Spec.Image = "registry.example/web:2" }},
		// A link made earlier is not looked up again: its Bucket may have gone since, which the
		// Application's status reports.
		{name: "Bucket of an old link gone", old: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "gone", EnvPrefix: "GONE_"})
		}, modify: func(a *paasv1alpha1.Application) { a.Spec.Replicas = ptr.To(int32(3)) }},
		{name: "new link to a missing Bucket", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "missing", EnvPrefix: "M_"})
		}, want: []string{`spec.buckets[1].name: Invalid value: "missing": no Bucket of this name in namespace "team-a"`}},
		{name: "new link to an existing Bucket", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Buckets = append(a.Spec.Buckets, paasv1alpha1.BucketLink{Name: "logs", EnvPrefix: "LOGS_"})
		}},
		{name: "backup moved to an unlinked Bucket", modify: func(a *paasv1alpha1.Application) { a.Spec.Backup.Bucket = "logs" }, want: []string{
			`spec.backup.bucket: Invalid value: "logs": must be one of the linked Buckets (spec.buckets[].name): "photos"`,
		}},
		{name: "unlinking the backup's Bucket", modify: func(a *paasv1alpha1.Application) { a.Spec.Buckets = nil }, want: []string{
			`spec.backup.bucket: Invalid value: "photos": must be one of the linked Buckets (spec.buckets[].name), and none is linked`,
		}},
		{name: "a restore asked for without a restore command", modify: func(a *paasv1alpha1.Application) {
			a.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "web-backup-29412345"}
		}, want: []string{`spec.backup.restoreCommand: Required value: a restore runs spec.backup.restoreCommand; set it to restore from a snapshot`}},
		{name: "a restore of a snapshot that is not one key segment", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Backup.RestoreCommand = []string{"restore"}
			a.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "a/b"}
		}, want: []string{`metadata.annotations[paas.osm.dev/restore]: Invalid value: "a/b": must name a snapshot listed in status.backups: ` +
			`a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`}},
		{name: "a restore asked for with a restore command", modify: func(a *paasv1alpha1.Application) {
			a.Spec.Backup.RestoreCommand = []string{"restore"}
			a.Annotations = map[string]string{paasv1alpha1.RestoreAnnotation: "web-backup-29412345"}
		}},
		{name: "keeping a host another Application got meanwhile", old: func(a *paasv1alpha1.Application) { a.Spec.Host = "store.example.com" },
			modify: func(a *paasv1alpha1.Application) { a.Spec.Image = "registry.example/web:2" }},
		{name: "taking a host another Application serves", modify: func(a *paasv1alpha1.Application) { a.Spec.Host = "store.example.com" }, want: []string{
			`spec.host: Invalid value: "store.example.com": is already served by an Application in another namespace: a host belongs to one Application`,
		}},
		{name: "backup added to a long-named Application", old: func(a *paasv1alpha1.Application) {
			a.Name, a.Spec.Backup = strings.Repeat("w", 50), nil
		}, modify: func(a *paasv1alpha1.Application) {
			a.Spec.Backup = &paasv1alpha1.Backup{Bucket: "photos", Schedule: "@daily", Command: []string{"b"}}
		}, want: []string{
			`metadata.name: Invalid value: "` + strings.Repeat("w", 50) + `": must be no more than 45 characters with spec.backup set: the backup CronJob is named "` + strings.Repeat("w", 50) + `-backup", at most 52 characters`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldApp := validApp()
			if tt.old != nil {
				tt.old(oldApp)
			}
			newApp := oldApp.DeepCopy()
			tt.modify(newApp)
			warnings, err := (&ApplicationValidator{Reader: readerWith(), Applications: readerWith()}).ValidateUpdate(context.Background(), oldApp, newApp)
			if len(warnings) > 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplicationValidateDelete(t *testing.T) {
	app := validApp()
	app.Spec.Image = ""
	if _, err := (&ApplicationValidator{Reader: readerWith(), Applications: readerWith()}).ValidateDelete(context.Background(), app); err != nil {
		t.Errorf("ValidateDelete() error = %v, want nil", err)
	}
}
