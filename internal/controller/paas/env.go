package paas

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
)

// resolvedLink is a linked Bucket with everything its environment needs: where the bucket is,
// and the BucketAccess whose Secret holds the link's key.
type resolvedLink struct {
	// Name is the Bucket resource; Prefix the link's envPrefix.
	Name, Prefix string
	// Mode is the link's access.
	Mode storagev1alpha1.AccessMode
	// BucketName, Endpoint and Region come from the Bucket's status.
	BucketName, Endpoint, Region string
	// Versioning is the bucket's versioning as its Bucket observed it ("" when never set).
	Versioning string
	// Access is the link's BucketAccess, with a key in its Secret.
	Access accessState
}

// bucketEnv is the environment of the links, in the order given: plain values for the bucket,
// endpoint and region, and references into the Secret of the BucketAccess keyOf gives each link
// for its keys (no key variables when it gives none), so no secret value is ever written into a
// Deployment, CronJob or Job.
func bucketEnv(links []resolvedLink, keyOf func(resolvedLink) *accessState) []corev1.EnvVar {
	env := make([]corev1.EnvVar, 0, len(links)*len(application.LinkSuffixes))
	for _, l := range links {
		env = append(env,
			corev1.EnvVar{Name: l.Prefix + application.EnvBucket, Value: l.BucketName},
			corev1.EnvVar{Name: l.Prefix + application.EnvEndpoint, Value: l.Endpoint},
			corev1.EnvVar{Name: l.Prefix + application.EnvRegion, Value: l.Region},
		)
		if key := keyOf(l); key != nil {
			env = append(env,
				secretEnv(l.Prefix+application.EnvAccessKeyID, key.SecretName, storagev1alpha1.SecretKeyAccessKeyID),
				secretEnv(l.Prefix+application.EnvSecretAccessKey, key.SecretName, storagev1alpha1.SecretKeySecretAccessKey),
			)
		}
	}
	return env
}

// ownKey gives each link its own BucketAccess's key, as the app's pods get them.
func ownKey(l resolvedLink) *accessState { return &l.Access }

// backupEnv is the environment of a backup or restore container on top of the links': the
// target bucket and key prefix, and the target's endpoint and region with the keys of creds
// (the backup's WriteOnly BucketAccess, or the restore's ReadOnly one) under the AWS names.
func backupEnv(target resolvedLink, creds accessState, prefix string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: application.EnvBackupBucket, Value: target.BucketName},
		{Name: application.EnvBackupPrefix, Value: prefix},
		secretEnv(storagev1alpha1.SecretKeyAccessKeyID, creds.SecretName, storagev1alpha1.SecretKeyAccessKeyID),
		secretEnv(storagev1alpha1.SecretKeySecretAccessKey, creds.SecretName, storagev1alpha1.SecretKeySecretAccessKey),
		{Name: storagev1alpha1.SecretKeyEndpointURL, Value: target.Endpoint},
		{Name: storagev1alpha1.SecretKeyRegion, Value: target.Region},
	}
}

// linkAccesses are the BucketAccesses of the links, in order.
func linkAccesses(links []resolvedLink) []accessState {
	out := make([]accessState, 0, len(links))
	for _, l := range links {
		out = append(out, l.Access)
	}
	return out
}

// backupRunEnv names each backup run, so that it writes a snapshot of its own: BACKUP_RUN is
// the run's Job name (from its pod's label) and BACKUP_SNAPSHOT_PREFIX is BACKUP_PREFIX, the
// run and "/", expanded by the kubelet from the variables before it.
func backupRunEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: application.EnvBackupRun, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			APIVersion: "v1", FieldPath: "metadata.labels['" + batchv1.JobNameLabel + "']"}}},
		{Name: application.EnvBackupSnapshotPrefix, Value: "$(" + application.EnvBackupPrefix + ")$(" + application.EnvBackupRun + ")/"},
	}
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret},
		Key:                  key,
	}}}
}

// userEnv is a copy of spec.env, which holds plain values only (application.EnvProblems).
func userEnv(env []corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, len(env))
	for i, e := range env {
		e.DeepCopyInto(&out[i])
	}
	return out
}
