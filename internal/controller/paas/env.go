package paas

import (
	"strings"

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
	// BucketName, Endpoint and Region come from the Bucket's status: Endpoint is where the
	// manager reaches the bucket.
	BucketName, Endpoint, Region string
	// PodEndpoint is where pods reach it: Endpoint, unless the manager was told of another
	// (ApplicationReconciler.PodEndpoints).
	PodEndpoint string
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
			corev1.EnvVar{Name: l.Prefix + application.EnvEndpoint, Value: l.PodEndpoint},
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

// noKey gives no link a key, as the pods of a keyless Application get them.
func noKey(resolvedLink) *accessState { return nil }

// Where a keyless Application's pods find their ServiceAccount token: a projected volume of
// its own, never the namespace's automounted token (restrictPod).
const (
	tokenVolume    = "osm-token"
	tokenMountPath = "/var/run/secrets/osm.dev/serviceaccount"
	tokenFile      = "token"
)

// keylessEnv is what the SDKs read to assume the links' shared role with the pod's projected
// token: the role and the region by reference into the shared BucketAccess's Secret (link's
// Access), where the token is, a session name (the Application's), which the provider records
// with each request, and the S3 and STS endpoints as pods reach them (the provider serves STS at
// its S3 endpoint, as the Secret says too: credentials.Role).
func keylessEnv(app string, link resolvedLink) []corev1.EnvVar {
	shared := link.Access
	return []corev1.EnvVar{
		secretEnv(storagev1alpha1.SecretKeyRoleARN, shared.SecretName, storagev1alpha1.SecretKeyRoleARN),
		{Name: application.EnvWebIdentityTokenFile, Value: tokenMountPath + "/" + tokenFile},
		{Name: application.EnvRoleSessionName, Value: app},
		{Name: storagev1alpha1.SecretKeyEndpointURL, Value: link.PodEndpoint},
		{Name: storagev1alpha1.SecretKeyEndpointSTS, Value: link.PodEndpoint},
		secretEnv(storagev1alpha1.SecretKeyRegion, shared.SecretName, storagev1alpha1.SecretKeyRegion),
	}
}

// backupEnv is the environment of a backup or restore container on top of the links': the
// target bucket and key prefix, and the target's endpoint and region with the keys of creds
// (the backup's WriteOnly BucketAccess, or the restore's ReadOnly one) under the AWS names.
func backupEnv(target resolvedLink, creds accessState, prefix string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: application.EnvBackupBucket, Value: target.BucketName},
		{Name: application.EnvBackupPrefix, Value: prefix},
		secretEnv(storagev1alpha1.SecretKeyAccessKeyID, creds.SecretName, storagev1alpha1.SecretKeyAccessKeyID),
		secretEnv(storagev1alpha1.SecretKeySecretAccessKey, creds.SecretName, storagev1alpha1.SecretKeySecretAccessKey),
		{Name: storagev1alpha1.SecretKeyEndpointURL, Value: target.PodEndpoint},
		{Name: storagev1alpha1.SecretKeyRegion, Value: target.Region},
	}
}

// linkAccesses are the BucketAccesses of the links, in order, each once (a keyless
// Application's links share one).
func linkAccesses(links []resolvedLink) []accessState {
	out := make([]accessState, 0, len(links))
	seen := map[string]bool{}
	for _, l := range links {
		if !seen[l.Access.Name] {
			seen[l.Access.Name] = true
			out = append(out, l.Access)
		}
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

// AccessKeysAnnotation on a pod template names the key each BucketAccess the pods read had when
// the template was written: "<bucketaccess>=<access key id>", comma-separated (for a keyless
// one, "<bucketaccess>=<role ARN>"). Key ids and ARNs are not secret. A rotation changes the
// id, so the template, so the Deployment rolls its pods, which read secretKeyRefs only when
// they start.
const AccessKeysAnnotation = "paas.osm.dev/access-key-ids"

// accessKeys is the value of AccessKeysAnnotation for pods that read these BucketAccesses'
// Secrets, "" for none.
func accessKeys(accesses ...accessState) string {
	pairs := make([]string, 0, len(accesses))
	for _, a := range accesses {
		pairs = append(pairs, a.Name+"="+a.credentialID())
	}
	return strings.Join(pairs, ",")
}

// setAccessKeys sets the annotation on a pod template, or removes it when keys is "". It also
// removes the checksum annotation that older versions set over the Contract's keys.
func setAccessKeys(tpl *corev1.PodTemplateSpec, keys string) {
	delete(tpl.Annotations, legacyChecksumAnnotation)
	if keys == "" {
		delete(tpl.Annotations, AccessKeysAnnotation)
		return
	}
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[AccessKeysAnnotation] = keys
}

// backupReadKey is the key a backup run gets for link l: a ReadOnly one to its Bucket when the
// link may read (the link's own when it is ReadOnly and has a key, the backup's own read one
// otherwise), none for a WriteOnly link. ok is false when the key the link needs is not known
// yet.
func (a appAccesses) backupReadKey(l resolvedLink) (key *accessState, ok bool) {
	switch {
	case l.Mode == storagev1alpha1.AccessWriteOnly:
		return nil, true
	case l.Mode == storagev1alpha1.AccessReadOnly && !a.keyless:
		return &l.Access, true
	}
	st, found := a.backupReads[l.Name]
	return &st, found
}

// restoreWriteKey is the key a restore gets for link l: the link's own when it may write (for a
// keyless Application, the restore's own with the link's access), none for a ReadOnly link. ok
// is false when the key the link needs is not known yet.
func (a appAccesses) restoreWriteKey(l resolvedLink) (key *accessState, ok bool) {
	switch {
	case l.Mode == storagev1alpha1.AccessReadOnly:
		return nil, true
	case !a.keyless:
		return &l.Access, true
	}
	st, found := a.restoreWrites[l.Name]
	return &st, found
}
