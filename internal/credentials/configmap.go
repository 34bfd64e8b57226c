package credentials

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// ErrConfigMapConflict: a ConfigMap of the Secret's name exists and belongs to someone else. It
// is never overwritten.
var ErrConfigMapConflict = errors.New("a ConfigMap of the Secret's name exists and belongs to someone else")

// writeConfigMap brings owner's ConfigMap of the Secret's name in line with want.ConfigMap:
// created or updated when the obc format is asked for, deleted (when it is owner's) when not.
// It holds the connection only: a key never goes into a ConfigMap.
func (s Secrets) writeConfigMap(ctx context.Context, owner client.Object, want Secret) error {
	cm := &corev1.ConfigMap{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: want.Name}, cm)
	switch {
	case apierrors.IsNotFound(err) && want.ConfigMap == nil:
		return nil
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: want.Name, Labels: want.Labels},
			Data: want.ConfigMap}
		if err := controllerutil.SetControllerReference(owner, cm, s.Client.Scheme()); err != nil {
			return err
		}
		if err := s.Client.Create(ctx, cm); err != nil {
			return fmt.Errorf("creating ConfigMap %q: %w", want.Name, err)
		}
		s.Recorder.Eventf(owner, cm, corev1.EventTypeNormal, "ConfigMapCreated", "Create", "Wrote the connection of %s to ConfigMap %s", want.What, cm.Name)
		return nil
	case err != nil:
		return fmt.Errorf("reading ConfigMap %q: %w", want.Name, err)
	case !metav1.IsControlledBy(cm, owner):
		if want.ConfigMap == nil {
			return nil
		}
		return ErrConfigMapConflict
	case want.ConfigMap == nil:
		if err := s.Client.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting ConfigMap %q: %w", want.Name, err)
		}
		s.Recorder.Eventf(owner, cm, corev1.EventTypeNormal, "ConfigMapDeleted", "Delete", "Deleted ConfigMap %s: the obc format is no longer asked for", cm.Name)
		return nil
	case maps.Equal(cm.Data, want.ConfigMap):
		return nil
	}
	cm.Data = want.ConfigMap
	if err := s.Client.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating ConfigMap %q: %w", want.Name, err)
	}
	return nil
}
