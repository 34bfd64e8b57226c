package storage

import (
	"bytes"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// hasCredentials reports whether the Secret still holds a key pair.
func hasCredentials(s *corev1.Secret) bool {
	return len(s.Data[storagev1alpha1.SecretKeyAccessKeyID]) > 0 &&
		len(s.Data[storagev1alpha1.SecretKeySecretAccessKey]) > 0
}

// setSecretData writes the connection details into s and reports whether anything changed. A
// nil creds keeps the key pair s already holds.
func setSecretData(s *corev1.Secret, contractName, endpoint, region string, accessKeyID, secretAccessKey []byte) bool {
	want := map[string][]byte{
		storagev1alpha1.SecretKeyEndpointURL: []byte(endpoint),
		storagev1alpha1.SecretKeyRegion:      []byte(region),
	}
	if accessKeyID != nil {
		want[storagev1alpha1.SecretKeyAccessKeyID] = accessKeyID
		want[storagev1alpha1.SecretKeySecretAccessKey] = secretAccessKey
	}
	changed := false
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range want {
		if !bytes.Equal(s.Data[k], v) {
			s.Data[k] = v
			changed = true
		}
	}
	if s.Labels[storagev1alpha1.ContractLabel] != contractName {
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[storagev1alpha1.ContractLabel] = contractName
		changed = true
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	return changed
}
