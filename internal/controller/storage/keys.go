package storage

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// What the Contract and BucketAccess controllers share: each hands out a key pair in a Secret,
// through the one credential lifecycle (credentials.Keys).

// keysOf is h's key through pass p: issued by issuer, into the Secret held.
func keysOf[T credentials.Holder](p *engine.Pass[T], h T, issuer credentials.Issuer, held *heldSecret, shared credentials.Shared) *credentials.Keys {
	record := func(ctx context.Context, mutate func(*storagev1alpha1.KeyStatus)) error {
		if err := p.Record(ctx, func(o T) { mutate(o.Keys()) }); err != nil {
			return fmt.Errorf("recording the keys: %w", err)
		}
		return nil
	}
	keys := credentials.For(h, issuer, record, credentials.KeyOf(held.secret), held.writeKey, shared)
	keys.Reread = held.reread
	return keys
}

// heldSecret is a resource's credentials Secret as this pass last read or wrote it.
type heldSecret struct {
	secrets credentials.Secrets
	owner   client.Object
	secret  *corev1.Secret
	// name is the Secret's name; render is the Secret as it should be, with key (nil: the key
	// pair it holds stays), or why it cannot be written (credentials.ErrUnsafeValue).
	name   string
	render func(key *contractclient.Credentials) (credentials.Secret, error)
	// keyFirst: the Secret is not written before it has a key to hold.
	keyFirst bool
}

// write writes the Secret as render says, with key when it is not nil, or else with the key it
// holds (in any format), so that every format it is asked for holds the same key.
func (h *heldSecret) write(ctx context.Context, key *contractclient.Credentials) error {
	if h.keyFirst && h.secret == nil && key == nil {
		return nil
	}
	if held := credentials.KeyOf(h.secret); key == nil && held.AccessKeyID != "" && held.SecretAccessKey != "" {
		key = &held
	}
	want, err := h.render(key)
	if err != nil {
		return fmt.Errorf("rendering Secret %s: %w", h.name, err)
	}
	want.Name = h.name
	written, err := h.secrets.Write(ctx, h.owner, h.secret, want)
	if written != nil {
		h.secret = written // written, though its ConfigMap may not be
	}
	return err
}

// reread reads the Secret again from the API server, and holds it from then on.
func (h *heldSecret) reread(ctx context.Context) (contractclient.Credentials, error) {
	secret, err := h.secrets.ReadLive(ctx, h.owner, h.name)
	if err != nil {
		return contractclient.Credentials{}, err
	}
	h.secret = secret
	return credentials.KeyOf(secret), nil
}

func (h *heldSecret) writeKey(ctx context.Context, key contractclient.Credentials) error {
	return h.write(ctx, &key)
}

// key is the key pair the Secret holds, when it is the one named id.
func (h *heldSecret) key(id string) (contractclient.Credentials, bool) {
	key := credentials.KeyOf(h.secret)
	return key, id != "" && key.AccessKeyID == id && key.SecretAccessKey != ""
}

// holdsKey reports whether the Secret holds the key pair named id.
func holdsKey(h *heldSecret, id string) bool {
	_, ok := h.key(id)
	return ok
}
