package credentials

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/ttlcache"
)

// Holder is a resource that holds a key pair in a Secret: a Contract or a BucketAccess.
type Holder interface {
	client.Object
	// Keys is the state of its key pair, in its status.
	Keys() *storagev1alpha1.KeyStatus
	// Rotation is how its key rotates (nil: only when asked), and the field that says so.
	Rotation() (*storagev1alpha1.KeyRotation, string)
	SecretNameOrDefault() string
}

// Shared is what a controller keeps for the keys of all its resources, and sets alike for each.
type Shared struct {
	// Refusals remembers providers' refusals of a second key (Keys.Refusals).
	Refusals     *ttlcache.Cache[types.UID, string]
	ResyncPeriod time.Duration
	Now          time.Time
	Recorder     events.EventRecorder
}

// For is h's key through one pass: issued by issuer, its state recorded with record, written
// to h's Secret (which holds inSecret now) with write.
func For(h Holder, issuer Issuer, record func(context.Context, func(*storagev1alpha1.KeyStatus)) error,
	inSecret contractclient.Credentials, write func(context.Context, contractclient.Credentials) error, s Shared) *Keys {
	rotation, field := h.Rotation()
	return &Keys{
		Issuer: issuer, UID: h.GetUID(), Status: h.Keys(), Record: record,
		SecretName: h.SecretNameOrDefault(), InSecret: inSecret, WriteSecret: write,
		Rotation: rotation, RotationField: field, Annotation: h.GetAnnotations()[storagev1alpha1.RotateKeyAnnotation],
		Refusals: s.Refusals, ResyncPeriod: s.ResyncPeriod, Now: s.Now,
		Emit: func(eventType, reason, message string) {
			s.Recorder.Eventf(h, nil, eventType, reason, "RotateKey", "%s", message)
		},
	}
}

// Describe is h's keys as its KeyRotation condition talks about them.
func Describe(h Holder) Described {
	rotation, field := h.Rotation()
	return Described{Kind: reflect.TypeOf(h).Elem().Name(), Status: h.Keys(), SecretName: h.SecretNameOrDefault(),
		Rotation: rotation, RotationField: field}
}
