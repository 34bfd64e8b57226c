package storage

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// accountSecrets reads the Secrets of spec.credentials: a user's own account's keys. The cache
// holds such a Secret without its data (a tenant can label any Secret, and must not make the
// manager hold its data), so the data is read from the API server, once per change of the
// Secret: the cached metadata's resourceVersion says when the copy kept here is stale. Only the
// entries the operator reads are kept, for as many Secrets as Contracts name.
type accountSecrets struct {
	mu   sync.Mutex
	kept map[client.ObjectKey]keptSecret
}

// keptSecret is the data of one Secret at one resourceVersion.
type keptSecret struct {
	resourceVersion string
	data            map[string][]byte
}

// accountSecretKeys are the entries of an account's Secret the operator reads.
var accountSecretKeys = []string{storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey,
	storagev1alpha1.SecretKeyEndpointURL, storagev1alpha1.SecretKeyRegion}

// get reads the Secret key into secret, with the data the operator reads. A Secret not in the
// cache (not labelled yet) is read from the API server, and not kept.
func (s *accountSecrets) get(ctx context.Context, cached, api client.Reader, key client.ObjectKey, secret *corev1.Secret) error {
	err := cached.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		return api.Get(ctx, key, secret)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	kept, ok := s.kept[key]
	s.mu.Unlock()
	if ok && kept.resourceVersion == secret.ResourceVersion {
		secret.Data = kept.data
		return nil
	}
	if err := api.Get(ctx, key, secret); err != nil {
		return err
	}
	data := map[string][]byte{}
	for _, k := range accountSecretKeys {
		if v, ok := secret.Data[k]; ok {
			data[k] = v
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept == nil {
		s.kept = map[client.ObjectKey]keptSecret{}
	}
	s.kept[key] = keptSecret{resourceVersion: secret.ResourceVersion, data: data}
	return nil
}

// forget drops what is kept of a Secret its Contract let go.
func (s *accountSecrets) forget(key client.ObjectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.kept, key)
}
