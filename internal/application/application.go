// Package application holds the rules of an Application that its webhook and its controller
// both apply: the names its children and environment variables get, and what a tenant may not
// ask the operator to write. Neither side imports the other.
package application

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// BackupCronJobName is the name of an Application's backup CronJob. The Deployment, Service and
// Ingress carry the Application's own name.
func BackupCronJobName(appName string) string { return appName + "-backup" }

// Suffixes of a link's environment variables, after its envPrefix.
const (
	EnvBucket          = "BUCKET"
	EnvEndpoint        = "ENDPOINT"
	EnvRegion          = "REGION"
	EnvAccessKeyID     = "ACCESS_KEY_ID"
	EnvSecretAccessKey = "SECRET_ACCESS_KEY"
)

// Variables the backup container gets on top of the links' variables: the target bucket and
// key prefix, and the backup link's credentials under the names every S3 client reads, so
// `aws s3 cp ... s3://$(BACKUP_BUCKET)/$(BACKUP_PREFIX)` works without configuration.
const (
	EnvBackupBucket = "BACKUP_BUCKET"
	EnvBackupPrefix = "BACKUP_PREFIX"
	// EnvBackupRun is the run's Job name, and EnvBackupSnapshotPrefix BACKUP_PREFIX with it and
	// "/": where a run writes, so that each run is a snapshot of its own.
	EnvBackupRun            = "BACKUP_RUN"
	EnvBackupSnapshotPrefix = "BACKUP_SNAPSHOT_PREFIX"
	// EnvRestoreSnapshot is the snapshot a restore Job restores, EnvRestorePrefix where its
	// objects are.
	EnvRestoreSnapshot = "RESTORE_SNAPSHOT"
	EnvRestorePrefix   = "RESTORE_PREFIX"
)

// Variables the application's container gets with spec.authentication ServiceAccount, under the
// names the AWS SDKs read to assume a role with a web identity token: the role and the
// endpoints from the links' shared BucketAccess's Secret, where the projected token is, and a
// session name.
const (
	EnvWebIdentityTokenFile = "AWS_WEB_IDENTITY_TOKEN_FILE"
	EnvRoleSessionName      = "AWS_ROLE_SESSION_NAME"
)

// KeylessEnvNames are the names the application's container gets besides the links' with
// spec.authentication ServiceAccount.
func KeylessEnvNames() []string {
	return []string{storagev1alpha1.SecretKeyRoleARN, EnvWebIdentityTokenFile, EnvRoleSessionName,
		storagev1alpha1.SecretKeyEndpointURL, storagev1alpha1.SecretKeyEndpointSTS, storagev1alpha1.SecretKeyRegion}
}

// LinkSuffixes are the variables each link defines, in the order they are injected. None is a
// suffix of another, so two different prefixes can never produce the same name.
var LinkSuffixes = []string{EnvBucket, EnvEndpoint, EnvRegion, EnvAccessKeyID, EnvSecretAccessKey}

// LinkEnvNames are the names of the variables a link with this prefix defines.
func LinkEnvNames(prefix string) []string {
	names := make([]string, len(LinkSuffixes))
	for i, s := range LinkSuffixes {
		names[i] = prefix + s
	}
	return names
}

// BackupEnvNames are the names of the variables the backup container gets besides the links'.
func BackupEnvNames() []string {
	return []string{EnvBackupBucket, EnvBackupPrefix, EnvBackupRun, EnvBackupSnapshotPrefix, EnvRestoreSnapshot, EnvRestorePrefix,
		storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey,
		storagev1alpha1.SecretKeyEndpointURL, storagev1alpha1.SecretKeyRegion}
}

// The operator writes Deployments, CronJobs and Ingresses with its own permissions, for whoever
// may write Applications. The rules below keep a tenant from borrowing those permissions. The
// webhook refuses what breaks them at admission, and the controller checks them again before it
// writes anything, since webhooks can be off and objects admitted under older rules stay stored.

// EnvProblems lists what spec.env may not hold: a reference of any kind (valueFrom), and a name
// a link or the backup already sets. The kubelet resolves a reference with the node's rights,
// for a pod the operator wrote with its own: a secretKeyRef or configMapKeyRef would hand the
// pods a Secret or ConfigMap their author may not read, and the downward API (fieldRef,
// resourceFieldRef) and fileKeyRef are not offered either. Credentials come only through linked
// Buckets, and every other value is written out in value.
func EnvProblems(path *field.Path, spec *paasv1alpha1.ApplicationSpec) field.ErrorList {
	reserved := map[string]string{}
	for i, l := range spec.Buckets {
		for _, name := range LinkEnvNames(l.EnvPrefixOrDefault()) {
			if _, taken := reserved[name]; !taken {
				reserved[name] = fmt.Sprintf("is set by the link to Bucket %s (%s)", l.Name, field.NewPath("spec", "buckets").Index(i))
			}
		}
	}
	if spec.Authentication == storagev1alpha1.AuthenticationServiceAccount {
		for _, name := range KeylessEnvNames() {
			if _, taken := reserved[name]; !taken {
				reserved[name] = "is set in the application's container (spec.authentication ServiceAccount)"
			}
		}
	}
	if spec.Backup != nil {
		for _, name := range BackupEnvNames() {
			if _, taken := reserved[name]; !taken {
				reserved[name] = "is set in the backup container (spec.backup)"
			}
		}
	}
	var errs field.ErrorList
	for i, e := range spec.Env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), e.Name, msg))
		}
		if who, ok := reserved[e.Name]; ok {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), e.Name, who+"; choose another name"))
		}
		if e.ValueFrom != nil {
			errs = append(errs, valueFromProblems(path.Index(i).Child("valueFrom"), e.ValueFrom)...)
		}
	}
	return errs
}

// valueFromProblems refuses every source of a value, each at its own path; a source this
// version does not know is refused as valueFrom.
func valueFromProblems(path *field.Path, from *corev1.EnvVarSource) field.ErrorList {
	const valuesOnly = "an Application's env holds plain values (value); "
	var errs field.ErrorList
	if from.SecretKeyRef != nil {
		errs = append(errs, field.Forbidden(path.Child("secretKeyRef"),
			"an Application reads Secrets only through its linked Buckets (spec.buckets)"))
	}
	if from.ConfigMapKeyRef != nil {
		errs = append(errs, field.Forbidden(path.Child("configMapKeyRef"),
			valuesOnly+"the operator writes the pods, which would read a ConfigMap the Application's author may not"))
	}
	if from.FieldRef != nil {
		errs = append(errs, field.Forbidden(path.Child("fieldRef"), valuesOnly+"the pod's fields (the downward API) are not offered"))
	}
	if from.ResourceFieldRef != nil {
		errs = append(errs, field.Forbidden(path.Child("resourceFieldRef"), valuesOnly+"the container's resources (the downward API) are not offered"))
	}
	if from.FileKeyRef != nil {
		errs = append(errs, field.Forbidden(path.Child("fileKeyRef"), valuesOnly+"an Application's pods have no volumes to read a file from"))
	}
	if len(errs) == 0 {
		errs = append(errs, field.Forbidden(path, valuesOnly+"references are not offered"))
	}
	return errs
}

// RestoreProblems says why the restore an Application's annotation asks for cannot run: the
// snapshot must be one key segment (it is joined to the backup prefix), and the spec must say
// how to restore.
func RestoreProblems(app *paasv1alpha1.Application) field.ErrorList {
	snapshot, ok := app.Annotations[paasv1alpha1.RestoreAnnotation]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "annotations").Key(paasv1alpha1.RestoreAnnotation)
	var errs field.ErrorList
	if msgs := validation.IsConfigMapKey(snapshot); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path, snapshot, "must name a snapshot listed in status.backups: "+strings.Join(msgs, "; ")))
	}
	if app.Spec.Backup == nil || len(app.Spec.Backup.RestoreCommand) == 0 {
		errs = append(errs, field.Required(field.NewPath("spec", "backup", "restoreCommand"),
			"a restore runs spec.backup.restoreCommand; set it to restore from a snapshot"))
	}
	return errs
}

// NamespacePlaceholder, a label of an allowed ingress domain ("{namespace}.apps.example.com"),
// stands for the Application's namespace: each namespace then serves names under a domain of
// its own, which no other namespace can claim.
const NamespacePlaceholder = "{namespace}"

// HostProblem says why an Application in namespace may not serve host, nil when it may. With
// allowed domains set (the manager's --ingress-domains), a host must be a name under one of
// them: with apps.example.com, shop.apps.example.com is allowed, and grafana.corp.example and
// apps.example.com itself are not; with {namespace}.apps.example.com, an Application in team-a
// may serve shop.team-a.apps.example.com and not shop.team-b.apps.example.com.
func HostProblem(path *field.Path, host, namespace string, allowedDomains []string) *field.Error {
	if host == "" || len(allowedDomains) == 0 {
		return nil
	}
	under := make([]string, len(allowedDomains))
	for i, d := range allowedDomains {
		d = strings.ReplaceAll(d, NamespacePlaceholder, namespace)
		if strings.HasSuffix(host, "."+d) {
			return nil
		}
		under[i] = "*." + d
	}
	return field.Invalid(path, host, "must be a name under a domain this cluster lets Applications serve: "+strings.Join(under, ", "))
}

// HostConflicts returns a field error when an Application among others, in any namespace,
// serves app's host too and counts says it holds it (every one at admission, those that came
// first in the controller): two Ingresses for one name would let one tenant take another's
// traffic. Another namespace's Application is not named, as its namespace is not app's
// author's to know.
func HostConflicts(path *field.Path, app *paasv1alpha1.Application, others []paasv1alpha1.Application,
	counts func(other *paasv1alpha1.Application) bool) field.ErrorList {
	if app.Spec.Host == "" {
		return nil
	}
	for i := range others {
		o := &others[i]
		if o.Spec.Host != app.Spec.Host || (o.Namespace == app.Namespace && o.Name == app.Name) || !o.DeletionTimestamp.IsZero() || !counts(o) {
			continue
		}
		who := "an Application in another namespace"
		if o.Namespace == app.Namespace {
			who = "Application " + o.Name
		}
		return field.ErrorList{field.Invalid(path, app.Spec.Host, "is already served by "+who+": a host belongs to one Application")}
	}
	return nil
}

// An Application's backups live under one object key prefix, BackupPrefix, in its backup
// Bucket. The same string is the backup and restore pods' BACKUP_PREFIX, the prefix of the
// lifecycle rule its retention writes, and the prefix status.backups lists, so the rules below
// make sure nothing turns it into another: the kubelet expands $(VAR) in an env value, and
// tools that treat keys as paths resolve "." and "..". The retention rule is written with the
// account's keys, so the prefix must also be the Application's own: no other Application of
// the namespace backs up into the same Bucket under a prefix that overlaps it, and a retention
// only expires what the Application's own link to the Bucket could change.

// BackupPrefix is the object key prefix app's backups live under: spec.backup.prefix, or
// "<name>/".
func BackupPrefix(app *paasv1alpha1.Application) string { return app.BackupPrefixOrDefault() }

// backupPrefixSegmentRE is one segment of a backup prefix: it starts with a letter or digit, so
// it is never "." or "..".
var backupPrefixSegmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// BackupPrefixProblems says why prefix cannot hold an Application's backups, one error per
// rule it breaks: it is a folder ("team/web/"): no "$", no leading "/", a trailing "/", and
// segments of letters, digits, '.', '_' and '-' that start with a letter or digit (so no empty,
// "." or ".." segment).
func BackupPrefixProblems(path *field.Path, prefix string) field.ErrorList {
	var msgs []string
	if strings.Contains(prefix, "$") {
		msgs = append(msgs, `must not contain "$": the pod would expand $(VAR) in it and write where the retention rule and the listing do not look`)
	}
	if strings.HasPrefix(prefix, "/") {
		msgs = append(msgs, `must not start with "/": object keys are relative to the bucket`)
	}
	if !strings.HasSuffix(prefix, "/") {
		msgs = append(msgs, `must end with "/": a prefix is a folder of its own ("web" would also cover "web-old/")`)
	}
	var empty, dots, chars bool
	for _, seg := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(prefix, "/"), "/"), "/") {
		switch {
		case seg == "":
			empty = true
		case seg == "." || seg == "..":
			dots = true
		case !backupPrefixSegmentRE.MatchString(strings.ReplaceAll(seg, "$", "x")):
			chars = true
		}
	}
	if empty {
		msgs = append(msgs, `must not have an empty segment ("//")`)
	}
	if dots {
		msgs = append(msgs, `must not have a "." or ".." segment: tools that treat keys as paths would write elsewhere`)
	}
	if chars {
		msgs = append(msgs, `each segment must start with a letter or digit and hold only letters, digits, '.', '_' and '-' (regex `+
			backupPrefixSegmentRE.String()+`)`)
	}
	errs := make(field.ErrorList, 0, len(msgs))
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, prefix, m))
	}
	return errs
}

// BackupProblem is one reason the operator refuses an Application's backup, with the reason
// of the condition that reports it (paasv1alpha1.ReasonBackupPrefixNotAllowed,
// ReasonBackupPrefixConflict or ReasonRetentionNotAllowed).
type BackupProblem struct {
	Reason string
	*field.Error
}

// BackupProblems lists why the operator refuses app's backup, nil when it may run: the prefix
// (BackupPrefixProblems), a prefix that overlaps the backup prefix of an Application among
// others that backs up into the same Bucket (only those for which counts says so: every one at
// admission, those that came first in the controller), and a retention on a Bucket the
// Application links ReadOnly (expiring objects is deleting them, which that link may not).
// An Application named by generateName that has no name yet gets its prefix checked once it has.
func BackupProblems(app *paasv1alpha1.Application, others []paasv1alpha1.Application, counts func(other *paasv1alpha1.Application) bool) []BackupProblem {
	b := app.Spec.Backup
	if b == nil {
		return nil
	}
	path := field.NewPath("spec", "backup")
	var out []BackupProblem
	prefix := BackupPrefix(app)
	if b.Prefix != "" || app.Name != "" {
		for _, e := range BackupPrefixProblems(path.Child("prefix"), prefix) {
			out = append(out, BackupProblem{paasv1alpha1.ReasonBackupPrefixNotAllowed, e})
		}
		for i := range others {
			o := &others[i]
			if !SharesBackupBucket(app, o) || !counts(o) {
				continue
			}
			theirs := BackupPrefix(o)
			if strings.HasPrefix(prefix, theirs) || strings.HasPrefix(theirs, prefix) {
				out = append(out, BackupProblem{paasv1alpha1.ReasonBackupPrefixConflict, field.Invalid(path.Child("prefix"), prefix, fmt.Sprintf(
					"overlaps %q, where Application %s backs up into Bucket %s: each Application backs up under a prefix of its own that no other one's starts with",
					theirs, o.Name, b.Bucket))})
			}
		}
	}
	if b.Retention != "" {
		for i, l := range app.Spec.Buckets {
			if l.Name == b.Bucket && l.AccessOrDefault() == storagev1alpha1.AccessReadOnly {
				out = append(out, BackupProblem{paasv1alpha1.ReasonRetentionNotAllowed, field.Forbidden(path.Child("retention"), fmt.Sprintf(
					"expires objects in Bucket %s, which this Application links ReadOnly (spec.buckets[%d].access): link it ReadWrite or WriteOnly, or keep the backups without a retention",
					b.Bucket, i))})
			}
		}
	}
	return out
}

// SharesBackupBucket says whether other, an Application that is not app and is not being
// deleted, backs up into the Bucket app backs up into, in app's namespace.
func SharesBackupBucket(app, other *paasv1alpha1.Application) bool {
	return app.Spec.Backup != nil && other.Spec.Backup != nil && other.Namespace == app.Namespace && other.Name != app.Name &&
		other.DeletionTimestamp.IsZero() && other.Spec.Backup.Bucket == app.Spec.Backup.Bucket
}

// Precedes says whether a came before b: created earlier, or in the same second with a
// namespace and name that sort first. Of two Applications that claim the same thing (a backup
// prefix, a host), the one that came first keeps it.
func Precedes(a, b *paasv1alpha1.Application) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// Errors are the field errors of problems.
func Errors(problems []BackupProblem) field.ErrorList {
	errs := make(field.ErrorList, 0, len(problems))
	for _, p := range problems {
		errs = append(errs, p.Error)
	}
	return errs
}

// ContractProblems refuses, with spec.authentication ServiceAccount, links to Buckets of more
// than one Contract: the links share one role, made in one Contract's account. contractOf
// gives a linked Bucket's spec.contractName, false for a Bucket it does not know (not there
// yet), which is left out. Each link whose Contract differs from the first known one is named.
func ContractProblems(app *paasv1alpha1.Application, contractOf func(bucket string) (string, bool)) field.ErrorList {
	if !app.Keyless() {
		return nil
	}
	path := field.NewPath("spec", "buckets")
	var errs field.ErrorList
	first, firstBucket := "", ""
	for i, l := range app.Spec.Buckets {
		c, ok := contractOf(l.Name)
		switch {
		case !ok:
		case first == "":
			first, firstBucket = c, l.Name
		case c != first:
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), l.Name, fmt.Sprintf(
				"belongs to Contract %s and Bucket %s to Contract %s: with spec.authentication ServiceAccount the links share one role, "+
					"in one Contract's account, so every linked Bucket must belong to the same Contract", c, firstBucket, first)))
		}
	}
	return errs
}
