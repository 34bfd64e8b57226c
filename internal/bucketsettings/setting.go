// Package bucketsettings holds each part of a bucket's configuration that a Bucket's spec manages
// (its ACL, policy, versioning, object lock, lifecycle rules, CORS rules, tags) as a small type of
// its own behind one interface, Setting, and the one loop (Sync) that brings all of them to the
// spec the same way: read, compare by meaning, write only what differs, read back, say so in an
// event, and record what the server showed in status. Adding a setting is a file here, a field
// in the API and a line in All; the loop, the events, the drift correction and the quiet steady
// state come with it.
package bucketsettings

import (
	"context"
	"errors"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Input is what one pass knows when it brings a bucket's settings to its spec.
type Input struct {
	// Bucket is the resource: its spec says what is wanted, its status what was last observed.
	Bucket *storagev1alpha1.Bucket
	// Store reaches the bucket with its account's keys.
	Store objectstore.Store
	// Observe: only read. Every setting is read and recorded in status, whatever the spec asks,
	// and compared with the spec; nothing is written.
	Observe bool
	// Applied says the spec as it stands was applied by an earlier pass that ended Ready: what
	// the server showed then (status) still counts as the spec, so a server that echoes a
	// setting in a form of its own causes no write, and a change made there since is drift.
	Applied bool

	// What other resources add to the spec's: the statements of the Bucket's BucketAccesses, the
	// lifecycle rules its users ask for (an Application's backup retention), how policies are
	// written on this endpoint, and the tags that say whose bucket it is.
	Grants         []bucketpolicy.AccessGrant
	LifecycleRules []storagev1alpha1.LifecycleRule
	PolicyForm     *storagev1alpha1.BucketPolicyForm
	OwnerTags      map[string]string

	// WebsiteEndpoint is how the Contract's provider serves websites: a URL in which {bucket}
	// stands for the bucket's name; "" when it does not say.
	WebsiteEndpoint string
	// TopicARNs are the topics the provider made for the spec's notifications, by notification
	// name; TopicsErr says why some could not be made.
	TopicARNs map[string]string
	TopicsErr error
	// Provider reaches the bucket's provider through the contract API, for what it enforces
	// beyond S3 (a quota); nil where there is none to ask.
	Provider Provider
}

// Name is the bucket's name at the server.
func (in *Input) Name() string { return in.Bucket.Spec.BucketName }

// Info names a setting.
type Info struct {
	// Field is its field under spec, for messages: "versioning".
	Field string
	// Title is what messages call it: "bucket versioning".
	Title string
	// Event starts the reasons of its events: "Versioning" for VersioningUpdated and
	// VersioningDriftCorrected.
	Event string
	// Unsupported is the Ready reason when the server does not implement it.
	Unsupported string
}

// A Setting is one part of a bucket's configuration. V is its value in a form that compares by
// meaning, whatever form a server echoes it in.
type Setting[V any] interface {
	Info() Info
	// Wanted says whether this pass reads the setting at all: while the spec sets it (or, for
	// what a spec can drop, while status shows it), and never otherwise, so a Bucket that uses
	// none of it costs no call.
	Wanted(in *Input) bool
	// Observe reads it from the server.
	Observe(ctx context.Context, in *Input) (V, error)
	// Desired is what the server should have, given what it has (an ACL keeps its owner).
	Desired(in *Input, observed V) V
	// Equal says whether two values mean the same.
	Equal(a, b V) bool
	// Write makes the server have v, and Describe says what that did, for its event.
	Write(ctx context.Context, in *Input, v V) error
	Describe(in *Input, v V) string
	// Recorded is what status shows was observed last; ok is false when it shows nothing.
	Recorded(in *Input) (v V, ok bool)
	// Record puts what was observed into status (the zero V and false: nothing).
	Record(in *Input, st *storagev1alpha1.BucketStatus, v V, ok bool)
}

// Remover is a Setting the spec can drop: what the operator wrote is then removed from the
// bucket (lifecycle and CORS rules). A Setting that is not a Remover is left on the server as
// it is when the spec stops naming it (versioning: the server's state stays).
type Remover interface {
	// Remove deletes the setting from the bucket; Removed says so, for the event.
	Remove(ctx context.Context, in *Input) error
	Removed(in *Input) string
}

// Checker is a Setting that must hold something the operator cannot give it (object lock,
// which S3 turns on only when a bucket is created): Check says what is missing.
type Checker[V any] interface {
	Check(observed V) error
}

// Refiner is a Setting whose desired value also comes from outside the spec (statements for
// BucketAccesses, rules for an Application's backups): those parts change without the
// Bucket's generation, so what status shows counts as applied only while it carries exactly
// the parts wanted now.
type Refiner[V any] interface {
	StillApplied(recorded, desired V) bool
}

// ErrObjectLockNotEnabled: the spec asks for object lock and the bucket was created without it.
var ErrObjectLockNotEnabled = errors.New("the bucket has no object lock")

// ErrLoggingTargetClaimed: the spec's logging target carries the operator's tag for someone else:
// a COSI bucket, or another namespace's Bucket.
var ErrLoggingTargetClaimed = errors.New("the logging target is someone else's bucket")
