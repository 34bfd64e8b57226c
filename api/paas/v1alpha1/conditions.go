package v1alpha1

// Condition types of an Application.
const (
	// ReadyCondition summarises an Application: True when its Deployment is available and every
	// linked Bucket, and the BucketAccess of each link, is Ready.
	ReadyCondition = "Ready"

	// BucketsReadyCondition is True when every linked Bucket is Ready and so is the BucketAccess
	// that holds the link's credentials; otherwise its message names the links that are not.
	BucketsReadyCondition = "BucketsReady"

	// BackupScheduledCondition is True when spec.backup is set and its CronJob is scheduled.
	BackupScheduledCondition = "BackupScheduled"
)

// Reasons for the conditions above. Each is one CamelCase word that tools can match on; the
// condition's message says the same for people.
const (
	// ReasonAvailable: the Deployment has its replicas available and every linked Bucket is Ready.
	ReasonAvailable = "Available"
	// ReasonDeploymentUnavailable: the Deployment does not exist yet or has fewer replicas
	// available than spec.replicas.
	ReasonDeploymentUnavailable = "DeploymentUnavailable"
	// ReasonDeploymentProgressing: the Deployment has not yet observed its latest spec (a
	// rollout is starting).
	ReasonDeploymentProgressing = "DeploymentProgressing"
	// ReasonBucketsNotReady: a linked Bucket does not exist or is not Ready.
	ReasonBucketsNotReady = "BucketsNotReady"
	// ReasonBucketAccessNotReady: every linked Bucket is Ready, and the BucketAccess that holds
	// a link's (or the backup's) credentials has no working key in its Secret yet.
	ReasonBucketAccessNotReady = "BucketAccessNotReady"
	// ReasonBucketsReady: every linked Bucket is Ready.
	ReasonBucketsReady = "BucketsReady"
	// ReasonNoBuckets: the Application links no Bucket.
	ReasonNoBuckets = "NoBuckets"
	// ReasonScheduled: the backup CronJob exists and is not suspended.
	ReasonScheduled = "Scheduled"
	// ReasonSuspended: spec.backup.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonNotConfigured: spec.backup is not set.
	ReasonNotConfigured = "NotConfigured"
	// ReasonEnvPrefixConflict: two links would define the same environment variables. The
	// webhook refuses such Applications; this shows when it was bypassed.
	ReasonEnvPrefixConflict = "EnvPrefixConflict"
	// ReasonBucketNotLinked: spec.backup.bucket is not one of spec.buckets (the webhook refuses
	// this too).
	ReasonBucketNotLinked = "BucketNotLinked"
	// ReasonBucketNotVersioned: spec.backup.requireVersionedBucket is set and the backup
	// Bucket does not have versioning Enabled.
	ReasonBucketNotVersioned = "BucketNotVersioned"
	// ReasonEnvNotAllowed: spec.env references a Secret or sets a name a link or the backup
	// sets. The webhook refuses this; the controller refuses to write such pods too, since
	// webhooks can be off and older objects stay stored.
	ReasonEnvNotAllowed = "EnvNotAllowed"
	// ReasonHostNotAllowed: spec.host is not under a domain the manager lets Applications
	// serve (--ingress-domains); no Ingress is made for it.
	ReasonHostNotAllowed = "HostNotAllowed"
	// ReasonHostConflict: another Application, in this namespace or another one, created first,
	// serves spec.host; no Ingress is made for it (one made before is deleted). The webhook
	// refuses this; the controller decides when two got in at once.
	ReasonHostConflict = "HostConflict"
	// ReasonBackupPrefixNotAllowed: spec.backup.prefix (or the default "<name>/") is not a
	// folder of plain segments ending in "/" (no "$", no leading "/", no "." or ".."). The
	// webhook refuses it; the controller writes no CronJob, restore Job or retention rule for
	// it, lists no backups, and deletes a backup CronJob it made before.
	ReasonBackupPrefixNotAllowed = "BackupPrefixNotAllowed"
	// ReasonBackupPrefixConflict: another Application of the namespace, created first, backs up
	// into the same Bucket under a prefix that overlaps this one's. Treated as
	// BackupPrefixNotAllowed.
	ReasonBackupPrefixConflict = "BackupPrefixConflict"
	// ReasonRetentionNotAllowed: spec.backup.retention is set on a Bucket the Application links
	// ReadOnly: expiring objects is deleting them. Treated as BackupPrefixNotAllowed.
	ReasonRetentionNotAllowed = "RetentionNotAllowed"
	// ReasonResourceConflict: an object the Application needs (Deployment, Service, Ingress,
	// CronJob, BucketAccess, ServiceAccount) exists with its name and belongs to something
	// else; it is never taken over.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonAuthenticationUnsupported: spec.authentication is ServiceAccount, and the links'
	// shared BucketAccess cannot be served so: the manager has no ServiceAccount token issuer
	// configured, or the provider has no STS (versitygw). Its message is the BucketAccess's.
	ReasonAuthenticationUnsupported = "AuthenticationUnsupported"
	// ReasonLinksSpanContracts: spec.authentication is ServiceAccount and the linked Buckets
	// belong to more than one Contract: one role, in one Contract's account, cannot reach them
	// all. The webhook refuses this; the controller makes no BucketAccess for it.
	ReasonLinksSpanContracts = "LinksSpanContracts"
	// ReasonChildRejected: the API server refused a child the spec describes (for example an
	// environment variable name or resource requests it does not accept); the message is its own.
	// Nothing is retried until the spec changes.
	ReasonChildRejected = "ChildRejected"
)
