package credentials

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// ErrSecretConflict: a Secret of the name the credentials go to exists and belongs to someone
// else. It is never overwritten.
var ErrSecretConflict = errors.New("the Secret exists and belongs to someone else")

// Secrets reads and writes the Secrets credentials go to, for every resource that hands out
// keys: each is owned by its resource, labelled, and written only when something differs.
type Secrets struct {
	Client client.Client
	// APIReader reads from the API server whose a Secret is that the cache does not show:
	// the cache holds only labelled Secrets, and may not yet hold one just written.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// Read returns owner's Secret called name, as the cache shows it: nil when there is none,
// ErrSecretConflict when a Secret of that name is someone else's.
func (s Secrets) Read(ctx context.Context, owner client.Object, name string) (*corev1.Secret, error) {
	return read(ctx, s.Client, owner, name)
}

// ReadLive is Read from the API server, past the cache, which may not show yet what the
// operator last wrote.
func (s Secrets) ReadLive(ctx context.Context, owner client.Object, name string) (*corev1.Secret, error) {
	if s.APIReader == nil {
		return s.Read(ctx, owner, name)
	}
	return read(ctx, s.APIReader, owner, name)
}

func read(ctx context.Context, r client.Reader, owner client.Object, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Secret %q: %w", name, err)
	case !metav1.IsControlledBy(secret, owner):
		return nil, ErrSecretConflict
	}
	return secret, nil
}

// KeyOf is the key pair a Secret holds, in whichever format holds one; zero for none or a nil
// Secret.
func KeyOf(secret *corev1.Secret) contractclient.Credentials {
	if secret == nil {
		return contractclient.Credentials{}
	}
	return keyIn(secret.Data)
}

// Secret is a Secret as it should be.
type Secret struct {
	Name string
	// Labels and the rendered data are set on it, and the keys Rendered.Remove names taken out;
	// other labels and keys it has are left as they are. Rendered.ConfigMap goes to the
	// ConfigMap of the same name.
	Labels map[string]string
	Rendered
	// Finalizer, when set, keeps the Secret until the owner lets it go.
	Finalizer string
	// What it holds, for events: "the contract's credentials".
	What string
}

// Write creates owner's Secret, or updates existing (as Read returned it; nil: there is none),
// when something differs, and returns it as written; then its ConfigMap (Rendered.ConfigMap),
// whose failure (ErrConfigMapConflict) comes with the Secret as written. A Secret of that name made meanwhile by
// someone else is ErrSecretConflict; one of owner's own that the cache does not show yet is an
// error to retry.
func (s Secrets) Write(ctx context.Context, owner client.Object, existing *corev1.Secret, want Secret) (*corev1.Secret, error) {
	secret := existing
	if secret == nil {
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: want.Name}, Type: corev1.SecretTypeOpaque}
	}
	changed := apply(secret, want)
	if !metav1.IsControlledBy(secret, owner) {
		if err := controllerutil.SetControllerReference(owner, secret, s.Client.Scheme()); err != nil {
			return nil, err
		}
		changed = true
	}
	switch {
	case existing == nil:
		if err := s.Client.Create(ctx, secret); err != nil {
			return nil, s.createFailed(ctx, owner, want.Name, err)
		}
		s.Recorder.Eventf(owner, secret, corev1.EventTypeNormal, "SecretCreated", "Create", "Wrote %s to Secret %s", want.What, secret.Name)
	case changed:
		if err := s.Client.Update(ctx, secret); err != nil {
			return nil, fmt.Errorf("updating Secret %q: %w", secret.Name, err)
		}
		s.Recorder.Eventf(owner, secret, corev1.EventTypeNormal, "SecretUpdated", "Update", "Updated %s in Secret %s", want.What, secret.Name)
	}
	return secret, s.writeConfigMap(ctx, owner, want)
}

// apply sets want's labels, data and finalizer on secret, and reports whether anything changed.
func apply(secret *corev1.Secret, want Secret) bool {
	changed := false
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	for k, v := range want.Data {
		if !bytes.Equal(secret.Data[k], v) {
			secret.Data[k] = v
			changed = true
		}
	}
	for _, k := range want.Remove {
		if _, ok := secret.Data[k]; ok {
			delete(secret.Data, k)
			changed = true
		}
	}
	for k := range secret.Data {
		_, wanted := want.Data[k]
		if !wanted && slices.ContainsFunc(want.RemovePrefixed, func(p string) bool { return strings.HasPrefix(k, p) }) {
			delete(secret.Data, k)
			changed = true
		}
	}
	for k, v := range want.Labels {
		if secret.Labels[k] != v {
			if secret.Labels == nil {
				secret.Labels = map[string]string{}
			}
			secret.Labels[k] = v
			changed = true
		}
	}
	if want.Finalizer != "" && controllerutil.AddFinalizer(secret, want.Finalizer) {
		changed = true
	}
	return changed
}

// createFailed tells a Secret of someone else's, made since the cache was read, from one of
// owner's own that the cache does not show yet (the cache catches up: retry).
func (s Secrets) createFailed(ctx context.Context, owner client.Object, name string, err error) error {
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %q: %w", name, err)
	}
	existing := &corev1.Secret{}
	if getErr := s.APIReader.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, existing); getErr != nil {
		return fmt.Errorf("creating Secret %q: %w (and reading it: %w)", name, err, getErr)
	}
	if metav1.IsControlledBy(existing, owner) {
		return fmt.Errorf("creating Secret %q: %w", name, err)
	}
	return ErrSecretConflict
}
