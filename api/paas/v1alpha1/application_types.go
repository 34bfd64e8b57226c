package v1alpha1

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// BucketLink links a Bucket to the Application: its containers get the bucket's name, endpoint,
// region and credentials as environment variables that start with envPrefix. The credentials
// are those of a BucketAccess the operator makes for the link, with the link's access; never the
// keys of the Bucket's Contract.
type BucketLink struct {
	// name is the Bucket, in the Application's namespace, to link.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// envPrefix starts the names of the link's environment variables: <envPrefix>BUCKET,
	// <envPrefix>ENDPOINT, <envPrefix>REGION, <envPrefix>ACCESS_KEY_ID and
	// <envPrefix>SECRET_ACCESS_KEY. Defaults to the Bucket's name in upper case with every other
	// character replaced by "_", and a trailing "_" ("user-uploads" gives "USER_UPLOADS_").
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Z_][A-Z0-9_]*$`
	EnvPrefix string `json:"envPrefix,omitempty"`

	// access is what the link's credentials may do in the Bucket: ReadOnly, ReadWrite or
	// WriteOnly. The operator makes a BucketAccess with this access for the link, owned by the
	// Application, and the containers get its keys. Defaults to ReadWrite.
	// +optional
	// +kubebuilder:default=ReadWrite
	Access storagev1alpha1.AccessMode `json:"access,omitempty"`
}

// Backup runs a command on a schedule, with the environment of a linked Bucket, to copy the
// application's data into it.
type Backup struct {
	// bucket is the linked Bucket (one of spec.buckets[].name) the backup writes to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Bucket string `json:"bucket"`

	// schedule is when the backup runs, in cron format ("0 3 * * *", "@daily").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`

	// command is the backup's entrypoint with its arguments. It finds the bucket in
	// BACKUP_BUCKET and the key prefix to write under in BACKUP_PREFIX; each run should write
	// under BACKUP_SNAPSHOT_PREFIX (BACKUP_PREFIX, the run's Job name and "/"), so every run is a
	// snapshot that can be restored on its own. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY hold
	// the keys of the backup's own WriteOnly BucketAccess: they put objects and cannot list, read
	// or delete them, so a run writes new keys and never lists what is there. Each link's
	// variables carry a key that can only read: the link's own when it is ReadOnly, a ReadOnly
	// one of the backup's otherwise, none for a WriteOnly link.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +listType=atomic
	Command []string `json:"command"`

	// restoreCommand is the entrypoint of a restore, with its arguments. It runs in a Job when
	// the annotation paas.osm.dev/restore names a snapshot, with the backup's environment and
	// RESTORE_SNAPSHOT and RESTORE_PREFIX (where that snapshot's objects are); its AWS_* keys are
	// those of a ReadOnly BucketAccess of the backup Bucket, and only the links that may write
	// (ReadWrite, WriteOnly) carry their keys, to put the data back.
	// +optional
	// +listType=atomic
	RestoreCommand []string `json:"restoreCommand,omitempty"`

	// image runs the backup. Defaults to spec.image.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`

	// prefix is the object key prefix the backup writes under, given to the command as
	// BACKUP_PREFIX; the retention rule expires and status.backups lists the same prefix.
	// Defaults to "<application name>/". It is a folder of its own: segments of letters,
	// digits, '.', '_' and '-' that start with a letter or digit, each followed by "/"
	// ("team/web/"), so no "$", no leading "/", no "." or "..". No other Application of the
	// namespace may back up into the same Bucket under a prefix that starts with this one or
	// that this one starts with; of two that do, the one created first keeps its backup.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`

	// suspend stops scheduling new backup runs; runs already started finish.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// retention is how long each backup is kept, in days: "14d". The backup Bucket gets a
	// lifecycle rule (id osm-backup-<name>) that expires the objects under the backup prefix
	// after that long; a server without lifecycle rules says so in the Bucket's Ready. Expiring
	// is deleting, so the Application's link to the backup Bucket must be ReadWrite or
	// WriteOnly, not ReadOnly.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,4}d$`
	Retention string `json:"retention,omitempty"`

	// requireVersionedBucket holds the backup back (BackupScheduled=False, BucketNotVersioned)
	// until the backup Bucket has versioning Enabled, so that a backup overwritten or deleted by
	// a bad run keeps its old version.
	// +optional
	RequireVersionedBucket bool `json:"requireVersionedBucket,omitempty"`
}

// ApplicationSpec is the application to run and the Buckets it uses.
type ApplicationSpec struct {
	// image is the container image to run.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image"`

	// command replaces the image's entrypoint.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// args replaces the image's arguments.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// env is more environment for the container. It comes after the variables of the linked
	// Buckets, so values can refer to them as $(PREFIX_BUCKET).
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// port is the TCP port the application listens on; the Service exposes it under the name
	// "http".
	// +optional
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// replicas is the number of pods to run.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// host is the DNS name to serve the application on. When set, an Ingress routes
	// http://<host>/ to the Service; removing it removes the Ingress.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host,omitempty"`

	// runAsUser is the user ID the application's and the backup's containers run as. The
	// operator runs every pod as the "restricted" Pod Security Standard asks (not as root, no
	// privilege escalation, no capabilities, the runtime's seccomp profile, no service account
	// token), so an image whose own user is root needs it. Defaults to the image's user.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// resources are the container's compute resource requests and limits.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty,omitzero"`

	// buckets are the Buckets the application uses; each link's variables are injected into
	// the application's containers with the link's key, and into the backup's and a restore's
	// with only the key each needs (see backup.command and backup.restoreCommand).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Buckets []BucketLink `json:"buckets,omitempty"`

	// backup, when set, runs a backup CronJob that writes to one of the linked Buckets.
	// +optional
	Backup *Backup `json:"backup,omitempty"`

	// authentication is how the application's pods reach the linked Buckets. Key (the default):
	// each link gets a BucketAccess of its own, and the pods its key pair
	// (<envPrefix>ACCESS_KEY_ID, <envPrefix>SECRET_ACCESS_KEY). ServiceAccount: no key at all.
	// The Application gets a ServiceAccount of its own name, and its links share one
	// BucketAccess of its own name with authentication ServiceAccount over all the linked
	// Buckets (an SDK takes one role per process), whose role that ServiceAccount's tokens
	// assume; the pods run under that ServiceAccount with a projected token
	// (AWS_WEB_IDENTITY_TOKEN_FILE) and AWS_ROLE_ARN. The linked Buckets must then belong to one
	// Contract. The backup and restore Jobs keep keys of their own (docs/application.md). It can
	// change: the BucketAccesses of the other kind are released and deleted.
	// +optional
	// +kubebuilder:default=Key
	Authentication storagev1alpha1.Authentication `json:"authentication,omitempty"`
}

// ApplicationStatus is what the controller last observed of the application and its Buckets.
type ApplicationStatus struct {
	// url is where the application is served, http://<spec.host>, when a host is set.
	// +optional
	URL string `json:"url,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, BucketsReady and BackupScheduled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastBackupTime is when the backup CronJob last started a run.
	// +optional
	LastBackupTime *metav1.Time `json:"lastBackupTime,omitempty"`

	// lastSuccessfulBackupTime is when a backup run last completed successfully.
	// +optional
	LastSuccessfulBackupTime *metav1.Time `json:"lastSuccessfulBackupTime,omitempty"`

	// backups are the most recent snapshots the operator sees in the backup bucket, newest
	// first (at most ten).
	// +optional
	// +listType=atomic
	Backups []BackupSnapshot `json:"backups,omitempty"`

	// restore is the restore the annotation paas.osm.dev/restore asked for last.
	// +optional
	Restore *RestoreStatus `json:"restore,omitempty"`
}

// BackupSnapshot is one backup run's objects in the backup bucket.
type BackupSnapshot struct {
	// name is the snapshot, the key segment after the backup prefix (the run's Job name).
	Name string `json:"name"`
	// objects and bytes are how many objects the snapshot holds, and their size.
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// lastModified is when its newest object was written.
	// +optional
	LastModified *metav1.Time `json:"lastModified,omitempty"`
}

// RestorePhase is where a restore stands.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type RestorePhase string

const (
	RestorePending   RestorePhase = "Pending"
	RestoreRunning   RestorePhase = "Running"
	RestoreSucceeded RestorePhase = "Succeeded"
	RestoreFailed    RestorePhase = "Failed"
)

// RestoreAnnotation names the snapshot to restore the Application from; setting it (kubectl
// annotate application/NAME paas.osm.dev/restore=SNAPSHOT) starts a restore Job. A snapshot
// already restored is not restored again until its Job is deleted.
const RestoreAnnotation = "paas.osm.dev/restore"

// RestoreStatus is the outcome of a restore.
type RestoreStatus struct {
	// snapshot is what is being restored.
	Snapshot string `json:"snapshot"`
	// job runs the restore; empty while it cannot start.
	// +optional
	Job string `json:"job,omitempty"`
	// phase is where the restore stands.
	Phase RestorePhase `json:"phase"`
	// message says why, for Pending and Failed.
	// +optional
	Message string `json:"message,omitempty"`
	// startTime and completionTime are the Job's.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=osm,shortName=app
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Application runs an image as a Deployment and a Service (and an Ingress when a host is set),
// injects the credentials of the Buckets it links, and backs up into one of them on a schedule.
type Application struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user asks for.
	// +required
	Spec ApplicationSpec `json:"spec"`

	// status is what the controller observed.
	// +optional
	Status ApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ApplicationList is a list of Applications.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}

// EnvPrefixOrDefault is the prefix of the link's environment variables.
func (l BucketLink) EnvPrefixOrDefault() string {
	if l.EnvPrefix != "" {
		return l.EnvPrefix
	}
	return DefaultEnvPrefix(l.Name)
}

// AccessOrDefault is what the link's credentials may do: spec.buckets[].access, ReadWrite when
// unset (an Application stored before the field existed).
func (l BucketLink) AccessOrDefault() storagev1alpha1.AccessMode {
	if l.Access != "" {
		return l.Access
	}
	return storagev1alpha1.AccessReadWrite
}

// DefaultEnvPrefix derives an environment variable prefix from a Bucket's name: upper case,
// every character other than A-Z and 0-9 replaced by "_", "B_" in front when it would start with
// a digit, and "_" at the end. "photos" gives "PHOTOS_", "user-uploads" "USER_UPLOADS_",
// "2024.logs" "B_2024_LOGS_". Different names can give the same prefix ("a-b" and "a.b"); the
// webhook refuses such links until one has an explicit envPrefix.
func DefaultEnvPrefix(bucketName string) string {
	if bucketName == "" {
		return ""
	}
	return storagev1alpha1.EnvNameOf(bucketName) + "_"
}

// Keyless says whether the Application's pods reach their Buckets with a ServiceAccount token
// and no key (spec.authentication ServiceAccount).
func (a *Application) Keyless() bool {
	return a.Spec.Authentication == storagev1alpha1.AuthenticationServiceAccount
}

// BackupPrefixOrDefault is the object key prefix the backup writes under.
func (a *Application) BackupPrefixOrDefault() string {
	if a.Spec.Backup != nil && a.Spec.Backup.Prefix != "" {
		return a.Spec.Backup.Prefix
	}
	return a.Name + "/"
}

// BackupRetentionDays is spec.backup.retention in days, 0 when none is set or it does not parse
// (the schema admits only "<days>d").
func (a *Application) BackupRetentionDays() int32 {
	if a.Spec.Backup == nil || !strings.HasSuffix(a.Spec.Backup.Retention, "d") {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(a.Spec.Backup.Retention, "d"), 10, 32)
	if err != nil || n < 1 {
		return 0
	}
	return int32(n)
}

// BackupImageOrDefault is the image the backup runs.
func (a *Application) BackupImageOrDefault() string {
	if a.Spec.Backup != nil && a.Spec.Backup.Image != "" {
		return a.Spec.Backup.Image
	}
	return a.Spec.Image
}
