package v1alpha1

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

// validBucketAccess is a BucketAccess that passes every rule: ReadOnly credentials for Bucket
// data (validBucket) in namespace team-a, with the default secretName.
func validBucketAccess() *storagev1alpha1.BucketAccess {
	return &storagev1alpha1.BucketAccess{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "team-a"},
		Spec: storagev1alpha1.BucketAccessSpec{
			Bucket: "data",
			Access: storagev1alpha1.AccessReadOnly,
		},
	}
}

func duration(s string) metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return metav1.Duration{Duration: d}
}

func durationPtr(s string) *metav1.Duration {
	d := duration(s)
	return &d
}

// readyBucket is Bucket data of validBucket with Ready=True.
func readyBucket() *storagev1alpha1.Bucket {
	b := validBucket()
	b.Status.Conditions = []metav1.Condition{{Type: storagev1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"}}
	return b
}

func TestBucketAccessDefault(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*storagev1alpha1.BucketAccess)
		want   storagev1alpha1.BucketAccessSpec
	}{
		{name: "secretName defaults to <name>-credentials", modify: func(*storagev1alpha1.BucketAccess) {}, want: storagev1alpha1.BucketAccessSpec{
			Bucket: "data", Access: storagev1alpha1.AccessReadOnly, SecretName: "reader-credentials",
		}},
		{name: "a set secretName stays", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "s3" }, want: storagev1alpha1.BucketAccessSpec{
			Bucket: "data", Access: storagev1alpha1.AccessReadOnly, SecretName: "s3",
		}},
		{name: "no name yet (generateName)", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Name = ""
			a.GenerateName = "reader-"
		}, want: storagev1alpha1.BucketAccessSpec{Bucket: "data", Access: storagev1alpha1.AccessReadOnly}},
		// A written-in overlap would not follow a later change of period.
		{name: "overlap is not filled in", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("720h")}
		}, want: storagev1alpha1.BucketAccessSpec{
			Bucket: "data", Access: storagev1alpha1.AccessReadOnly, SecretName: "reader-credentials",
			Rotation: &storagev1alpha1.KeyRotation{Period: duration("720h")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validBucketAccess()
			tt.modify(a)
			if err := (&BucketAccessDefaulter{}).Default(context.Background(), a); err != nil {
				t.Fatalf("Default() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, a.Spec); diff != "" {
				t.Errorf("spec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBucketAccessValidateCreate(t *testing.T) {
	deleting := metav1.Now()
	notReady := validBucket()
	notReady.Name = "waiting"
	notReady.Status.Conditions = []metav1.Condition{{Type: storagev1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "ContractNotReady"}}
	fresh := validBucket()
	fresh.Name = "fresh"
	going := readyBucket()
	going.Name, going.DeletionTimestamp, going.Finalizers = "going", &deleting, []string{"x"}
	elsewhere := readyBucket()
	elsewhere.Namespace = "team-b"
	elsewhere.Name = "theirs"
	logs := readyBucket()
	logs.Name = "logs"
	foreign := readyBucket()
	foreign.Name, foreign.Spec.ContractName = "foreign", "team-c"
	reader := webhooktest.Reader{Objects: []client.Object{
		readyBucket(), notReady, fresh, going, elsewhere, logs, foreign,
		// Contract team-a writes team-a-credentials (the default); Contract moved has moved its
		// Secret in the spec but status still names the old one, which still holds the keys.
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}},
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "moved"},
			Spec: storagev1alpha1.ContractSpec{SecretName: "moved-new"}, Status: storagev1alpha1.ContractStatus{SecretName: "moved-old"}},
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "team-b"}},
		&storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "writer"},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "data", Access: storagev1alpha1.AccessReadWrite}},
		&storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "old", DeletionTimestamp: &deleting, Finalizers: []string{"x"}},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "data", Access: storagev1alpha1.AccessReadOnly, SecretName: "shared"}},
		&storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "elsewhere"},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: "theirs", Access: storagev1alpha1.AccessReadOnly, SecretName: "taken-in-team-b"}},
	}}
	const overlapZero = "must be more than 0: without an overlap the previous key is revoked the moment the new one is written, " +
		"and consumers still using it are refused until they read the Secret again; leave overlap out for the default, a tenth of period and at most 1h"
	const dnsSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
		`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	tests := []struct {
		name     string
		modify   func(*storagev1alpha1.BucketAccess)
		want     []string
		warnings []string
	}{
		{name: "minimal", modify: func(*storagev1alpha1.BucketAccess) {}},
		{name: "everything set", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Access = storagev1alpha1.AccessWriteOnly
			a.Spec.SecretName = "backup.s3-credentials"
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("720h"), Overlap: durationPtr("1h")}
		}},
		{name: "ReadWrite access", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Access = storagev1alpha1.AccessReadWrite }},

		// metadata.name
		{name: "name of 63 characters", modify: func(a *storagev1alpha1.BucketAccess) { a.Name = strings.Repeat("a", 63) }},
		{name: "name of 64 characters", modify: func(a *storagev1alpha1.BucketAccess) { a.Name = strings.Repeat("a", 64) }, want: []string{
			`metadata.name: Invalid value: "` + strings.Repeat("a", 64) + `": a BucketAccess's name is at most 63 characters: it is the value of the storage.osm.dev/bucket-access label on its Secret`,
		}},
		{name: "no name yet (generateName)", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Name = ""
			a.GenerateName = "reader-"
		}},

		// spec.bucket
		{name: "no bucket", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "" }, want: []string{
			`spec.bucket: Required value: name the Bucket, in this namespace, the credentials are for (or several in spec.buckets)`,
		}},
		{name: "bucket that is no object name is not looked up", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "Data" }, want: []string{
			`spec.bucket: Invalid value: "Data": ` + dnsSubdomain + ` (the name of a Bucket in this namespace)`,
		}},
		{name: "no Bucket of that name", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "missing" }, want: []string{
			`spec.bucket: Invalid value: "missing": no Bucket of this name in namespace "team-a"`,
		}},
		{name: "a Bucket of that name in another namespace only", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "theirs" }, want: []string{
			`spec.bucket: Invalid value: "theirs": no Bucket of this name in namespace "team-a"`,
		}},
		{name: "Bucket being deleted", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "going" }, want: []string{
			`spec.bucket: Invalid value: "going": the Bucket is being deleted`,
		}},
		{name: "Bucket not Ready is admitted with a warning", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "waiting" }, warnings: []string{
			`spec.bucket: Bucket waiting is not Ready (ContractNotReady): the BucketAccess waits for it (Ready=False, reason BucketNotReady)`,
		}},
		{name: "Bucket without conditions yet is admitted with a warning", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "fresh" }, warnings: []string{
			`spec.bucket: Bucket fresh is not Ready yet: the BucketAccess waits for it (Ready=False, reason BucketNotReady)`,
		}},

		// spec.buckets
		{name: "several Buckets of one Contract, one not Ready", modify: multi(
			storagev1alpha1.AccessBucket{Name: "data", Access: storagev1alpha1.AccessReadOnly},
			storagev1alpha1.AccessBucket{Name: "logs", Access: storagev1alpha1.AccessWriteOnly, Prefix: "web/"},
			storagev1alpha1.AccessBucket{Name: "waiting", Access: storagev1alpha1.AccessReadWrite}), warnings: []string{
			`spec.buckets[2].name: Bucket waiting is not Ready (ContractNotReady): the BucketAccess waits for it (Ready=False, reason BucketNotReady)`,
		}},
		{name: "both forms", modify: func(a *storagev1alpha1.BucketAccess) {
			multi(storagev1alpha1.AccessBucket{Name: "logs", Access: storagev1alpha1.AccessReadOnly})(a)
			a.Spec.Bucket, a.Spec.Access, a.Spec.Prefix = "data", storagev1alpha1.AccessReadOnly, "web/"
		}, want: []string{
			`spec.bucket: Forbidden: name either spec.bucket (one Bucket) or spec.buckets (several), not both`,
			`spec.access: Forbidden: spec.access goes with spec.bucket; with spec.buckets each item says its access`,
			`spec.prefix: Forbidden: spec.prefix goes with spec.bucket; with spec.buckets each item says its prefix`,
		}},
		{name: "items named twice, malformed, without access", modify: multi(
			storagev1alpha1.AccessBucket{Name: "data", Access: storagev1alpha1.AccessReadOnly},
			storagev1alpha1.AccessBucket{Name: "data", Access: storagev1alpha1.AccessReadWrite},
			storagev1alpha1.AccessBucket{Name: "Logs", Access: "Admin"},
			storagev1alpha1.AccessBucket{Name: "photos"}), want: []string{
			`spec.buckets[1].name: Duplicate value: "data"`,
			`spec.buckets[2].name: Invalid value: "Logs": ` + dnsSubdomain + ` (the name of a Bucket in this namespace)`,
			`spec.buckets[2].access: Unsupported value: "Admin": supported values: "ReadOnly", "ReadWrite", "WriteOnly"`,
			`spec.buckets[3].access: Required value: say what the credentials may do: ReadOnly, ReadWrite or WriteOnly`,
		}},
		{name: "names that give the same variables, and formats of one bucket", modify: func(a *storagev1alpha1.BucketAccess) {
			multi(storagev1alpha1.AccessBucket{Name: "data", Access: storagev1alpha1.AccessReadOnly},
				storagev1alpha1.AccessBucket{Name: "a-b", Access: storagev1alpha1.AccessReadOnly},
				storagev1alpha1.AccessBucket{Name: "a.b", Access: storagev1alpha1.AccessReadOnly})(a)
			a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatCOSI, storagev1alpha1.FormatOBC}
		}, want: []string{
			`spec.buckets[2].name: Invalid value: "a.b": its variables in the Secret would be those of Bucket a-b (BUCKET_NAME_A_B): ` +
				`name the Buckets so that they differ in more than '-' and '.'`,
			`spec.formats[1]: Invalid value: "cosi": cosi describes one bucket per Secret, and spec.buckets has several: ` +
				`use env, aws-files, rclone or s3cfg, or a BucketAccess per bucket (spec.bucket) for cosi`,
			`spec.formats[2]: Invalid value: "obc": obc describes one bucket per Secret, and spec.buckets has several: ` +
				`use env, aws-files, rclone or s3cfg, or a BucketAccess per bucket (spec.bucket) for obc`,
		}},
		{name: "more items than a BucketAccess reaches", modify: func(a *storagev1alpha1.BucketAccess) {
			var items []storagev1alpha1.AccessBucket
			for i := range storagev1alpha1.MaxAccessBuckets + 1 {
				items = append(items, storagev1alpha1.AccessBucket{Name: storagev1alpha1.BucketName(fmt.Sprintf("b%d", i)), Access: storagev1alpha1.AccessReadOnly})
			}
			multi(items...)(a)
		}, want: []string{`spec.buckets: Too many: 17: must have at most 16 items`}},
		{name: "a Bucket missing, one being deleted, one of another Contract", modify: multi(
			storagev1alpha1.AccessBucket{Name: "data", Access: storagev1alpha1.AccessReadOnly},
			storagev1alpha1.AccessBucket{Name: "missing", Access: storagev1alpha1.AccessReadOnly},
			storagev1alpha1.AccessBucket{Name: "going", Access: storagev1alpha1.AccessReadOnly},
			storagev1alpha1.AccessBucket{Name: "foreign", Access: storagev1alpha1.AccessReadOnly}), want: []string{
			`spec.buckets[1].name: Invalid value: "missing": no Bucket of this name in namespace "team-a"`,
			`spec.buckets[2].name: Invalid value: "going": the Bucket is being deleted`,
			`spec.buckets[3].name: Invalid value: "foreign": Bucket foreign belongs to Contract team-c, and Bucket data to Contract team-a: ` +
				`one key reaches the Buckets of one Contract (its principal is in that Contract's account); make a BucketAccess for each Contract`,
		}},

		// spec.access
		{name: "no access", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Access = "" }, want: []string{
			`spec.access: Required value: say what the credentials may do: ReadOnly, ReadWrite or WriteOnly`,
		}},
		{name: "unknown access", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Access = "Admin" }, want: []string{
			`spec.access: Unsupported value: "Admin": supported values: "ReadOnly", "ReadWrite", "WriteOnly"`,
		}},

		// spec.secretName
		{name: "secretName not a DNS subdomain", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "Team_A" }, want: []string{
			`spec.secretName: Invalid value: "Team_A": must be a valid Secret name: ` + dnsSubdomain,
		}},
		{name: "secretName too long", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = strings.Repeat("a", 254) }, want: []string{
			`spec.secretName: Invalid value: "` + strings.Repeat("a", 254) + `": must be a valid Secret name: must be no more than 253 characters`,
		}},
		{name: "secretName of the Contract's Secret", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "team-a-credentials" }, want: []string{
			`spec.secretName: Invalid value: "team-a-credentials": is the Secret of Contract team-a, which holds the account's own keys: ` +
				`credentials written there would overwrite them; choose another secretName`,
		}},
		{name: "default secretName that is the Contract's Secret", modify: func(a *storagev1alpha1.BucketAccess) { a.Name = "team-a" }, want: []string{
			`spec.secretName: Invalid value: "team-a-credentials": is the Secret of Contract team-a, which holds the account's own keys: ` +
				`credentials written there would overwrite them; choose another secretName`,
		}},
		{name: "secretName a Contract's status still names", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "moved-old" }, want: []string{
			`spec.secretName: Invalid value: "moved-old": is the Secret of Contract moved, which holds the account's own keys: ` +
				`credentials written there would overwrite them; choose another secretName`,
		}},
		{name: "secretName a Contract's spec moves to", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "moved-new" }, want: []string{
			`spec.secretName: Invalid value: "moved-new": is the Secret of Contract moved, which holds the account's own keys: ` +
				`credentials written there would overwrite them; choose another secretName`,
		}},
		{name: "secretName of a Contract in another namespace", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "team-b-credentials" }},
		{name: "secretName of another BucketAccess (its default)", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "writer-credentials" }, want: []string{
			`spec.secretName: Invalid value: "writer-credentials": BucketAccess writer in this namespace already writes its credentials to this Secret, and exactly one may; choose another secretName`,
		}},
		{name: "secretName of a BucketAccess being deleted", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "shared" }, want: []string{
			`spec.secretName: Invalid value: "shared": BucketAccess old in this namespace, being deleted, still writes its credentials to this Secret; try again once it is gone, or choose another secretName`,
		}},
		// A second create of the same name is the API server's AlreadyExists, not a conflict
		// with itself.
		{name: "the name of an existing BucketAccess", modify: func(a *storagev1alpha1.BucketAccess) { a.Name = "writer" }},
		{name: "secretName of a BucketAccess in another namespace", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "taken-in-team-b" }},

		// spec.rotation
		{name: "rotation without overlap", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("1m")}
		}},
		{name: "shortest rotation with an overlap", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("1m"), Overlap: durationPtr("59s")}
		}},
		{name: "period under a minute", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("59s")}
		}, want: []string{
			`spec.rotation.period: Invalid value: "59s": must be at least 1m0s: a new key needs time to reach its consumers before the next one replaces it`,
		}},
		{name: "period missing", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{}
		}, want: []string{
			`spec.rotation.period: Invalid value: "0s": must be at least 1m0s: a new key needs time to reach its consumers before the next one replaces it`,
		}},
		{name: "overlap zero", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h"), Overlap: durationPtr("0s")}
		}, want: []string{`spec.rotation.overlap: Invalid value: "0s": ` + overlapZero}},
		{name: "overlap negative", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h"), Overlap: durationPtr("-5m")}
		}, want: []string{`spec.rotation.overlap: Invalid value: "-5m0s": ` + overlapZero}},
		{name: "overlap equal to period", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h"), Overlap: durationPtr("24h")}
		}, want: []string{
			`spec.rotation.overlap: Invalid value: "24h0m0s": must be shorter than period (24h0m0s): the previous key must be revoked before the next rotation replaces the current one`,
		}},
		{name: "overlap longer than period", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("1h"), Overlap: durationPtr("2h")}
		}, want: []string{
			`spec.rotation.overlap: Invalid value: "2h0m0s": must be shorter than period (1h0m0s): the previous key must be revoked before the next rotation replaces the current one`,
		}},

		// spec.authentication and spec.serviceAccountName
		{name: "ServiceAccount authentication", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "backup.job"
			a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv}
		}},
		{name: "ServiceAccount authentication without a ServiceAccount", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication = storagev1alpha1.AuthenticationServiceAccount
		}, want: []string{
			`spec.serviceAccountName: Required value: name the ServiceAccount, in this namespace, whose tokens assume the role`,
		}},
		{name: "ServiceAccount name that is no object name", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "team-b:app"
		}, want: []string{
			`spec.serviceAccountName: Invalid value: "team-b:app": must be the name of a ServiceAccount in this namespace: ` + dnsSubdomain,
		}},
		{name: "ServiceAccount with Key authentication", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationKey, "app"
		}, want: []string{
			`spec.serviceAccountName: Forbidden: goes with spec.authentication: ServiceAccount; a key is not tied to a ServiceAccount`,
		}},
		{name: "ServiceAccount without authentication (Key)", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.ServiceAccountName = "app" }, want: []string{
			`spec.serviceAccountName: Forbidden: goes with spec.authentication: ServiceAccount; a key is not tied to a ServiceAccount`,
		}},
		{name: "unknown authentication", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Authentication = "Token" }, want: []string{
			`spec.authentication: Unsupported value: "Token": supported values: "Key", "ServiceAccount"`,
		}},
		{name: "ServiceAccount authentication with a key's formats and a rotation", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "app"
			a.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, "rclone"}
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("720h")}
		}, want: []string{
			`spec.formats[1]: Forbidden: rclone holds a key pair, and with spec.authentication ServiceAccount there is none: only env (the role's ARN and the endpoints)`,
			`spec.rotation: Forbidden: goes with spec.authentication Key: with ServiceAccount there is no key to rotate, the credentials STS returns expire by themselves`,
		}},

		// Every problem at once, in field order, then what the lookups found.
		{name: "all problems reported together", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Name = strings.Repeat("b", 64)
			a.Spec.Bucket = "missing"
			a.Spec.Access = "Admin"
			a.Spec.SecretName = "team-a-credentials"
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("30s"), Overlap: durationPtr("0s")}
		}, want: []string{
			`metadata.name: Invalid value: "` + strings.Repeat("b", 64) + `": a BucketAccess's name is at most 63 characters: it is the value of the storage.osm.dev/bucket-access label on its Secret`,
			`spec.access: Unsupported value: "Admin": supported values: "ReadOnly", "ReadWrite", "WriteOnly"`,
			`spec.rotation.period: Invalid value: "30s": must be at least 1m0s: a new key needs time to reach its consumers before the next one replaces it`,
			`spec.rotation.overlap: Invalid value: "0s": ` + overlapZero,
			`spec.bucket: Invalid value: "missing": no Bucket of this name in namespace "team-a"`,
			`spec.secretName: Invalid value: "team-a-credentials": is the Secret of Contract team-a, which holds the account's own keys: ` +
				`credentials written there would overwrite them; choose another secretName`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validBucketAccess()
			tt.modify(a)
			warnings, err := (&BucketAccessValidator{Reader: reader}).ValidateCreate(context.Background(), a)
			if diff := cmp.Diff(tt.warnings, []string(warnings)); diff != "" {
				t.Errorf("ValidateCreate() warnings mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// multi turns a BucketAccess into one over items (spec.buckets).
func multi(items ...storagev1alpha1.AccessBucket) func(*storagev1alpha1.BucketAccess) {
	return func(a *storagev1alpha1.BucketAccess) {
		a.Spec.Bucket, a.Spec.Access, a.Spec.Buckets = "", "", items
	}
}

// listFails answers Gets from its objects and fails every List, as when the API server stops
// answering between the two.
type listFails struct{ webhooktest.Reader }

func (r listFails) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("connection refused")
}

func TestBucketAccessValidateCreateLookupFails(t *testing.T) {
	tests := []struct {
		name   string
		reader client.Reader
		want   string
	}{
		{name: "the Bucket", reader: webhooktest.Reader{Err: errors.New("connection refused")},
			want: `Internal error occurred: looking up Bucket "data": connection refused`},
		{name: "the Contracts", reader: listFails{webhooktest.Reader{Objects: []client.Object{readyBucket()}}},
			want: `Internal error occurred: listing Contracts in "team-a": connection refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&BucketAccessValidator{Reader: tt.reader}).ValidateCreate(context.Background(), validBucketAccess())
			if !apierrors.IsInternalError(err) {
				t.Fatalf("ValidateCreate() error = %v, want an internal error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("ValidateCreate() error = %q, want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestBucketAccessValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*storagev1alpha1.BucketAccess)
		modify func(*storagev1alpha1.BucketAccess)
		want   []string
	}{
		{name: "unchanged", modify: func(*storagev1alpha1.BucketAccess) {}},
		{name: "finalizer and rotate-key annotation added", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Finalizers = []string{"storage.osm.dev/bucket-access"}
			a.Annotations = map[string]string{storagev1alpha1.RotateKeyAnnotation: "1"}
		}},
		{name: "access and rotation changed", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Access = storagev1alpha1.AccessReadWrite
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h"), Overlap: durationPtr("10m")}
		}},
		{name: "rotation removed", old: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h")}
		}, modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Rotation = nil }},
		// Names are not checked again: a BucketAccess stored before the rule can still lose its
		// finalizer or have its spec edited.
		{name: "long name stored before the rule", old: func(a *storagev1alpha1.BucketAccess) { a.Name = strings.Repeat("a", 64) },
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Access = storagev1alpha1.AccessWriteOnly }},
		{name: "fields left as they were are not checked again", old: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("30s")}
		}, modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Access = storagev1alpha1.AccessWriteOnly }},

		{name: "bucket changed", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Bucket = "other" }, want: []string{
			`spec.bucket: Invalid value: "other": cannot change (was "data")`,
		}},
		{name: "secretName changed", old: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "s3" },
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "s4" }, want: []string{
				`spec.secretName: Invalid value: "s4": cannot change (was "s3")`,
			}},
		// The CRD's rule compares two set values only; the webhook catches the rest.
		{name: "secretName set where it was left to the default", old: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "" },
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "s3" }, want: []string{
				`spec.secretName: Invalid value: "s3": cannot change (was unset, which is "reader-credentials")`,
			}},
		{name: "secretName cleared where it was not the default", old: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "s3" },
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "" }, want: []string{
				`spec.secretName: Invalid value: "": cannot change (was "s3")`,
			}},
		// What the defaulting webhook does on the first update of a BucketAccess made with
		// generateName, and the reverse with webhooks off: the same Secret either way.
		{name: "default written in", old: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "" },
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "reader-credentials" }},
		{name: "default cleared", old: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "reader-credentials" },
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.SecretName = "" }},

		{name: "authentication changed to ServiceAccount", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "app"
		}, want: []string{
			`spec.authentication: Invalid value: "ServiceAccount": cannot change (was Key): a key and a role are different credentials; make a new BucketAccess`,
		}},
		{name: "authentication written in as the default", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication = storagev1alpha1.AuthenticationKey
		}},
		{name: "ServiceAccount changed", old: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "app"
		}, modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.ServiceAccountName = "worker" }},
		{name: "ServiceAccount cleared", old: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Authentication, a.Spec.ServiceAccountName = storagev1alpha1.AuthenticationServiceAccount, "app"
		}, modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.ServiceAccountName = "" }, want: []string{
			`spec.serviceAccountName: Required value: name the ServiceAccount, in this namespace, whose tokens assume the role`,
		}},
		{name: "access cleared", modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Access = "" }, want: []string{
			`spec.access: Required value: say what the credentials may do: ReadOnly, ReadWrite or WriteOnly`,
		}},
		{name: "rotation added with a zero overlap", modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h"), Overlap: durationPtr("0s")}
		}, want: []string{
			`spec.rotation.overlap: Invalid value: "0s": must be more than 0: without an overlap the previous key is revoked the moment the new one is written, ` +
				"and consumers still using it are refused until they read the Secret again; leave overlap out for the default, a tenth of period and at most 1h",
		}},
		{name: "period shortened below overlap", old: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: duration("24h"), Overlap: durationPtr("2h")}
		}, modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Rotation.Period = duration("1h") }, want: []string{
			`spec.rotation.overlap: Invalid value: "2h0m0s": must be shorter than period (1h0m0s): the previous key must be revoked before the next rotation replaces the current one`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldA := validBucketAccess()
			oldA.Spec.SecretName = "reader-credentials" // as the defaulting webhook stored it
			if tt.old != nil {
				tt.old(oldA)
			}
			newA := oldA.DeepCopy()
			tt.modify(newA)
			// No lookups on update: a reader that fails proves none is made.
			v := &BucketAccessValidator{Reader: webhooktest.Reader{Err: errors.New("no lookups on update")}}
			warnings, err := v.ValidateUpdate(context.Background(), oldA, newA)
			if len(warnings) > 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Buckets added to spec.buckets are looked up as on create, and held to the Contract of the
// Buckets already there; anything else is not looked up.
func TestBucketAccessValidateUpdateBuckets(t *testing.T) {
	logs := readyBucket()
	logs.Name = "logs"
	foreign := readyBucket()
	foreign.Name, foreign.Spec.ContractName = "foreign", "team-c"
	reader := webhooktest.Reader{Objects: []client.Object{readyBucket(), logs, foreign}}
	data := storagev1alpha1.AccessBucket{Name: "data", Access: storagev1alpha1.AccessReadOnly}
	tests := []struct {
		name   string
		modify func(*storagev1alpha1.BucketAccess)
		reader client.Reader
		want   []string
	}{
		{name: "an item's access and prefix changed: no lookups", reader: webhooktest.Reader{Err: errors.New("no lookups")},
			modify: func(a *storagev1alpha1.BucketAccess) {
				a.Spec.Buckets[0].Access, a.Spec.Buckets[0].Prefix = storagev1alpha1.AccessReadWrite, "web/"
			}},
		{name: "a Bucket removed: no lookups", reader: webhooktest.Reader{Err: errors.New("no lookups")},
			modify: func(a *storagev1alpha1.BucketAccess) { a.Spec.Buckets = a.Spec.Buckets[:1] }},
		{name: "a Bucket of the same Contract added first in the list", reader: reader, modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Buckets = append([]storagev1alpha1.AccessBucket{{Name: "logs", Access: storagev1alpha1.AccessWriteOnly}}, a.Spec.Buckets...)
		}},
		{name: "a Bucket of another Contract added first in the list", reader: reader, modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Buckets = append([]storagev1alpha1.AccessBucket{{Name: "foreign", Access: storagev1alpha1.AccessWriteOnly}}, a.Spec.Buckets...)
		}, want: []string{
			`spec.buckets[0].name: Invalid value: "foreign": Bucket foreign belongs to Contract team-c, and Bucket data to Contract team-a: ` +
				`one key reaches the Buckets of one Contract (its principal is in that Contract's account); make a BucketAccess for each Contract`,
		}},
		{name: "a missing Bucket added", reader: reader, modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Buckets = append(a.Spec.Buckets, storagev1alpha1.AccessBucket{Name: "missing", Access: storagev1alpha1.AccessReadOnly})
		}, want: []string{`spec.buckets[2].name: Invalid value: "missing": no Bucket of this name in namespace "team-a"`}},
		{name: "the list form turned into the single form", reader: reader, modify: func(a *storagev1alpha1.BucketAccess) {
			a.Spec.Buckets, a.Spec.Bucket, a.Spec.Access = nil, "data", storagev1alpha1.AccessReadOnly
		}, want: []string{
			`spec.bucket: Invalid value: "data": cannot change (was unset)`,
			`spec.buckets: Forbidden: a BucketAccess keeps its form: spec.bucket cannot become spec.buckets or the reverse (make a new BucketAccess)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldA := validBucketAccess()
			oldA.Spec.SecretName = "reader-credentials"
			multi(data, storagev1alpha1.AccessBucket{Name: "gone", Access: storagev1alpha1.AccessReadOnly})(oldA)
			newA := oldA.DeepCopy()
			tt.modify(newA)
			_, err := (&BucketAccessValidator{Reader: tt.reader}).ValidateUpdate(context.Background(), oldA, newA)
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBucketAccessValidateDelete(t *testing.T) {
	a := validBucketAccess()
	a.Spec.Bucket = "Not A Name"
	warnings, err := (&BucketAccessValidator{Reader: webhooktest.Reader{Err: errors.New("no lookups on delete")}}).ValidateDelete(context.Background(), a)
	if err != nil || len(warnings) > 0 {
		t.Errorf("ValidateDelete() = %q, %v; want every deletion allowed", warnings, err)
	}
}
