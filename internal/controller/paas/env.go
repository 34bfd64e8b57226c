package paas

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
)

// resolvedLink is a linked Bucket with everything its environment needs: where the bucket is,
// and which Secret holds its Contract's credentials.
type resolvedLink struct {
	// Name is the Bucket resource; Prefix the link's envPrefix.
	Name, Prefix string
	// BucketName, Endpoint and Region come from the Bucket's status.
	BucketName, Endpoint, Region string
	// SecretName is the Contract's credentials Secret.
	SecretName string
	// Versioning is the bucket's versioning as its Bucket observed it ("" when never set).
	Versioning string
	// accessKeyID and secretAccessKey feed the checksum only; they never leave this process.
	accessKeyID, secretAccessKey []byte
}

// bucketEnv is the environment of the links, in the order given: plain values for the bucket,
// endpoint and region, and references into the Contract's Secret for the keys, so no secret
// value is ever written into a Deployment or CronJob.
func bucketEnv(links []resolvedLink) []corev1.EnvVar {
	env := make([]corev1.EnvVar, 0, len(links)*len(application.LinkSuffixes))
	for _, l := range links {
		env = append(env,
			corev1.EnvVar{Name: l.Prefix + application.EnvBucket, Value: l.BucketName},
			corev1.EnvVar{Name: l.Prefix + application.EnvEndpoint, Value: l.Endpoint},
			corev1.EnvVar{Name: l.Prefix + application.EnvRegion, Value: l.Region},
			secretEnv(l.Prefix+application.EnvAccessKeyID, l.SecretName, storagev1alpha1.SecretKeyAccessKeyID),
			secretEnv(l.Prefix+application.EnvSecretAccessKey, l.SecretName, storagev1alpha1.SecretKeySecretAccessKey),
		)
	}
	return env
}

// backupEnv is the backup container's environment on top of the links': the target bucket and
// key prefix, and the target link's endpoint, region and credentials under the AWS names.
func backupEnv(target resolvedLink, prefix string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: application.EnvBackupBucket, Value: target.BucketName},
		{Name: application.EnvBackupPrefix, Value: prefix},
		secretEnv(storagev1alpha1.SecretKeyAccessKeyID, target.SecretName, storagev1alpha1.SecretKeyAccessKeyID),
		secretEnv(storagev1alpha1.SecretKeySecretAccessKey, target.SecretName, storagev1alpha1.SecretKeySecretAccessKey),
		{Name: storagev1alpha1.SecretKeyEndpointURL, Value: target.Endpoint},
		{Name: storagev1alpha1.SecretKeyRegion, Value: target.Region},
	}
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

// userEnv is spec.env with the defaults the API server would add, so that comparing it with
// the stored Deployment finds no difference where there is none.
func userEnv(env []corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, len(env))
	for i, e := range env {
		e.DeepCopyInto(&out[i])
		if f := out[i].ValueFrom; f != nil && f.FieldRef != nil && f.FieldRef.APIVersion == "" {
			f.FieldRef.APIVersion = "v1"
		}
	}
	return out
}

// credentialsChecksum hashes the credentials the links inject, with the Secrets and links they
// come from. It goes on the pod template, so new keys in a Secret roll the pods, which read
// secretKeyRefs only when they start. It covers the data, not the Secret's resourceVersion, so
// a label change alone rolls nothing. "" when there are no links.
func credentialsChecksum(links []resolvedLink) string {
	if len(links) == 0 {
		return ""
	}
	h := sha256.New()
	for _, l := range links {
		for _, field := range [][]byte{[]byte(l.Name), []byte(l.SecretName), l.accessKeyID, l.secretAccessKey} {
			writeField(h, field)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writeField writes b with its length first, so that no two different inputs hash alike.
func writeField(h hash.Hash, b []byte) {
	_, _ = fmt.Fprintf(h, "%d:", len(b))
	_, _ = h.Write(b)
}
