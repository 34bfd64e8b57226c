package storage

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// secretReader serves Secrets from a map and counts its reads.
type secretReader struct {
	secrets map[string]*corev1.Secret
	reads   int
}

func (r *secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.reads++
	s, ok := r.secrets[key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	s.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

func (r *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// The cache holds an account's Secret without data: its data is read from the API server once
// per version of the Secret, and only the entries the operator reads are kept.
func TestAccountSecretsReadTheAPIServerOncePerVersion(t *testing.T) {
	ctx := context.Background()
	full := func(rv, key string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "own", ResourceVersion: rv},
			Data: map[string][]byte{storagev1alpha1.SecretKeyAccessKeyID: []byte(key), "blob": make([]byte, 1024)}}
	}
	stripped := func(rv string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "own", ResourceVersion: rv}}
	}
	cache := &secretReader{secrets: map[string]*corev1.Secret{}}
	api := &secretReader{secrets: map[string]*corev1.Secret{"own": full("1", "AK1")}}
	var s accountSecrets
	read := func() string {
		t.Helper()
		secret := &corev1.Secret{}
		if err := s.get(ctx, cache, api, client.ObjectKey{Name: "own"}, secret); err != nil {
			t.Fatal(err)
		}
		return string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
	}

	if got := read(); got != "AK1" || api.reads != 1 {
		t.Fatalf("not labelled yet: key %q after %d API reads, want AK1 after 1", got, api.reads)
	}
	cache.secrets["own"] = stripped("1")
	read()
	read()
	if api.reads != 2 {
		t.Errorf("%d API reads for one version in the cache, want 2 (one before the cache had it, one after)", api.reads)
	}
	if _, ok := s.kept[client.ObjectKey{Name: "own"}].data["blob"]; ok {
		t.Error("an entry the operator does not read was kept")
	}
	cache.secrets["own"], api.secrets["own"] = stripped("2"), full("2", "AK2")
	if got := read(); got != "AK2" || api.reads != 3 {
		t.Errorf("a new version: key %q after %d API reads, want AK2 after 3", got, api.reads)
	}
	s.forget(client.ObjectKey{Name: "own"})
	if len(s.kept) != 0 {
		t.Error("a Secret let go is still kept")
	}
}
