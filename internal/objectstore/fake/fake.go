// Package fake is an in-memory objectstore.Store for unit tests of the Bucket controller: one
// account's buckets, with their tags, ACL, policy and object count, and failures on demand,
// including a call that acts and then loses its answer, which real servers do not do when asked.
package fake

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/aws/smithy-go"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Bucket is the state of one bucket.
type Bucket struct {
	Tags       map[string]string
	ACL        objectstore.ACL
	Policy     string
	Objects    int
	Versioning string
	Lifecycle  []objectstore.LifecycleRule
	CORS       []objectstore.CORSRule
	ObjectLock objectstore.ObjectLock
	// Encryption starts as AWS's default, SSE-S3.
	Encryption        objectstore.Encryption
	PublicAccessBlock objectstore.PublicAccessBlock
	// Ownership is the bucket's object ownership; CreateBucket sets what it is asked for, or
	// ObjectWriter, as the real Store asks.
	Ownership     string
	Logging       objectstore.Logging
	Website       objectstore.Website
	Notifications []objectstore.Notification
	// Versions are the bucket's object versions and delete markers, in listing order: by key,
	// then by version ID from the highest (the fake's stand-in for newest first); a marker is a
	// position in that order, found even when its version is gone, as S3 seeks it. A bucket
	// with any is not empty, whatever Objects says.
	Versions []objectstore.ObjectVersion
	// Holds are the versions object lock keeps: DeleteVersions refuses them (AccessDenied).
	Holds map[objectstore.ObjectVersion]objectstore.Hold
}

// Failure is what the next call of an operation does instead of answering.
type Failure struct {
	// Err is returned.
	Err error
	// AfterActing: the call does its work first, so only the answer is lost.
	AfterActing bool
}

// Store is objectstore.Store in memory, for one account (Owner). Buckets of other accounts are
// in Elsewhere. The zero value is ready to use.
type Store struct {
	mu sync.Mutex
	// Owner is the account's canonical id.
	Owner string
	// Buckets are the account's own.
	Buckets map[string]*Bucket
	// Elsewhere are bucket names other accounts own.
	Elsewhere []string
	// TagsOnCreate: CreateBucket takes the tags it is given, as AWS and versitygw do; by
	// default the fake is a server without (Ceph RGW), whose callers tag separately.
	TagsOnCreate bool
	// Access is what CheckAccess finds the key able to do; nil: everything, as an account's
	// own key may.
	Access   *objectstore.AccessCheck
	failures map[string][]Failure
	calls    []string
	listed   []objectstore.ObjectVersion
}

var _ objectstore.Store = (*Store)(nil)

// Fail queues failures for the next calls of op ("CreateBucket", "PutBucketTags", ...).
func (s *Store) Fail(op string, f ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[string][]Failure{}
	}
	s.failures[op] = append(s.failures[op], f...)
}

// Calls lists the operations called, in order.
func (s *Store) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Bucket returns a copy of a bucket of the account, or nil.
func (s *Store) Bucket(name string) *Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.Buckets[name]
	if b == nil {
		return nil
	}
	out := *b
	out.Tags = cloneTags(b.Tags)
	return &out
}

// call records op and runs act unless a queued failure says otherwise.
func (s *Store) call(op string, act func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, op)
	if s.Buckets == nil {
		s.Buckets = map[string]*Bucket{}
	}
	if q := s.failures[op]; len(q) > 0 {
		s.failures[op] = q[1:]
		if q[0].AfterActing {
			_ = act()
		}
		return q[0].Err
	}
	return act()
}

func (s *Store) bucket(name string) (*Bucket, error) {
	if b := s.Buckets[name]; b != nil {
		return b, nil
	}
	if slices.Contains(s.Elsewhere, name) {
		return nil, objectstore.ErrAccessDenied
	}
	return nil, objectstore.ErrNoSuchBucket
}

// BucketNames implements objectstore.Store.
func (s *Store) BucketNames(context.Context) ([]string, error) {
	var names []string
	err := s.call("BucketNames", func() error {
		for n := range s.Buckets {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil
	})
	return names, err
}

// HeadBucket implements objectstore.Store.
func (s *Store) HeadBucket(_ context.Context, name string) error {
	return s.call("HeadBucket", func() error { _, err := s.bucket(name); return err })
}

// CreateBucket implements objectstore.Store.
func (s *Store) CreateBucket(_ context.Context, name string, opts objectstore.CreateOptions) (bool, error) {
	err := s.call("CreateBucket", func() error {
		switch _, err := s.bucket(name); err {
		case nil:
			return &smithy.GenericAPIError{Code: "BucketAlreadyOwnedByYou", Message: "you already own it"}
		case objectstore.ErrAccessDenied:
			return objectstore.ErrBucketTakenElsewhere
		}
		s.Buckets[name] = &Bucket{ACL: objectstore.ACL{Owner: s.Owner, Grants: []objectstore.Grant{{
			Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: s.Owner}, Permission: objectstore.PermissionFullControl}}},
			Encryption: awsDefaultEncryption, Ownership: cmp.Or(opts.ObjectOwnership, "ObjectWriter")}
		if opts.ObjectLock {
			// As on S3: object lock comes with versioning.
			s.Buckets[name].ObjectLock = objectstore.ObjectLock{Enabled: true}
			s.Buckets[name].Versioning = "Enabled"
		}
		if s.TagsOnCreate {
			s.Buckets[name].Tags = cloneTags(opts.Tags)
		}
		return nil
	})
	return err == nil && s.TagsOnCreate && len(opts.Tags) > 0, err
}

// CreateTells implements objectstore.Store: the fake refuses a CreateBucket of a bucket it
// has, so it tells whenever it keeps tags given at creation.
func (s *Store) CreateTells() bool { return s.TagsOnCreate }

// read is a call that reads one bucket: get picks what it answers.
func read[V any](s *Store, op, name string, get func(*Bucket) V) (V, error) {
	var v V
	err := s.call(op, func() error {
		b, err := s.bucket(name)
		if err == nil {
			v = get(b)
		}
		return err
	})
	return v, err
}

// write is a call that changes one bucket with set, or refuses with the error set returns.
func (s *Store) write(op, name string, set func(*Bucket) error) error {
	return s.call(op, func() error {
		b, err := s.bucket(name)
		if err != nil {
			return err
		}
		return set(b)
	})
}

// BucketTags implements objectstore.Store.
func (s *Store) BucketTags(_ context.Context, name string) (map[string]string, error) {
	return read(s, "BucketTags", name, func(b *Bucket) map[string]string { return cloneTags(b.Tags) })
}

// PutBucketTags implements objectstore.Store.
func (s *Store) PutBucketTags(_ context.Context, name string, tags map[string]string) error {
	return s.write("PutBucketTags", name, func(b *Bucket) error { b.Tags = cloneTags(tags); return nil })
}

// ACL implements objectstore.Store.
func (s *Store) ACL(_ context.Context, name string) (objectstore.ACL, error) {
	return read(s, "ACL", name, func(b *Bucket) objectstore.ACL { return objectstore.Normalize(b.ACL) })
}

// PutACL implements objectstore.Store. As on AWS, a public access block that blocks public ACLs
// refuses an ACL that grants the public anything.
func (s *Store) PutACL(_ context.Context, name string, acl objectstore.ACL) error {
	return s.write("PutACL", name, func(b *Bucket) error {
		if b.PublicAccessBlock.BlockPublicAcls && objectstore.IsPublicACL(acl) {
			return errDeniedByBlock
		}
		if b.Ownership == "BucketOwnerEnforced" && !acl.Equal(objectstore.DesiredACL(b.ACL.Owner, "private", nil)) {
			return errACLsDisabled
		}
		b.ACL = acl
		return nil
	})
}

// Policy implements objectstore.Store.
func (s *Store) Policy(_ context.Context, name string) (string, error) {
	return read(s, "Policy", name, func(b *Bucket) string { return b.Policy })
}

// PutPolicy implements objectstore.Store. As on AWS, a public access block that blocks public
// policies refuses a policy that allows anyone.
func (s *Store) PutPolicy(_ context.Context, name, policy string) error {
	return s.write("PutPolicy", name, func(b *Bucket) error {
		if b.PublicAccessBlock.BlockPublicPolicy && bucketpolicy.IsPublic(policy) {
			return errDeniedByBlock
		}
		b.Policy = policy
		return nil
	})
}

// DeletePolicy implements objectstore.Store.
func (s *Store) DeletePolicy(_ context.Context, name string) error {
	return s.write("DeletePolicy", name, func(b *Bucket) error { b.Policy = ""; return nil })
}

// NotImplemented is the error a server answers a call it does not implement, as versitygw
// answers lifecycle calls; queue it with Fail.
var NotImplemented = &smithy.GenericAPIError{Code: "NotImplemented", Message: "not implemented"}

// errDeniedByBlock is AWS's answer to a public ACL or policy under a public access block.
var errDeniedByBlock = fmt.Errorf("%w: %w", objectstore.ErrAccessDenied,
	&smithy.GenericAPIError{Code: "AccessDenied", Message: "Access Denied"})

// errACLsDisabled is AWS's answer to an ACL other than private on a bucket with object
// ownership BucketOwnerEnforced.
var errACLsDisabled = &smithy.GenericAPIError{Code: "AccessControlListNotSupported", Message: "The bucket does not allow ACLs"}

// errACLNotPrivate is AWS's answer to BucketOwnerEnforced on a bucket whose ACL grants others.
var errACLNotPrivate = &smithy.GenericAPIError{Code: "InvalidBucketAclWithObjectOwnership",
	Message: "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"}

// Versioning implements objectstore.Store.
func (s *Store) Versioning(_ context.Context, name string) (string, error) {
	return read(s, "Versioning", name, func(b *Bucket) string { return b.Versioning })
}

// PutVersioning implements objectstore.Store.
func (s *Store) PutVersioning(_ context.Context, name, status string) error {
	return s.write("PutVersioning", name, func(b *Bucket) error { b.Versioning = status; return nil })
}

// Lifecycle implements objectstore.Store.
func (s *Store) Lifecycle(_ context.Context, name string) ([]objectstore.LifecycleRule, error) {
	return read(s, "Lifecycle", name, func(b *Bucket) []objectstore.LifecycleRule { return objectstore.NormalizeLifecycle(b.Lifecycle) })
}

// PutLifecycle implements objectstore.Store.
func (s *Store) PutLifecycle(_ context.Context, name string, rules []objectstore.LifecycleRule) error {
	return s.write("PutLifecycle", name, func(b *Bucket) error { b.Lifecycle = objectstore.NormalizeLifecycle(rules); return nil })
}

// DeleteLifecycle implements objectstore.Store.
func (s *Store) DeleteLifecycle(_ context.Context, name string) error {
	return s.write("DeleteLifecycle", name, func(b *Bucket) error { b.Lifecycle = nil; return nil })
}

// CORS implements objectstore.Store.
func (s *Store) CORS(_ context.Context, name string) ([]objectstore.CORSRule, error) {
	return read(s, "CORS", name, func(b *Bucket) []objectstore.CORSRule { return slices.Clone(b.CORS) })
}

// PutCORS implements objectstore.Store.
func (s *Store) PutCORS(_ context.Context, name string, rules []objectstore.CORSRule) error {
	return s.write("PutCORS", name, func(b *Bucket) error { b.CORS = slices.Clone(rules); return nil })
}

// DeleteCORS implements objectstore.Store.
func (s *Store) DeleteCORS(_ context.Context, name string) error {
	return s.write("DeleteCORS", name, func(b *Bucket) error { b.CORS = nil; return nil })
}

// Encryption implements objectstore.Store.
func (s *Store) Encryption(_ context.Context, name string) (objectstore.Encryption, error) {
	return read(s, "Encryption", name, func(b *Bucket) objectstore.Encryption { return b.Encryption })
}

// PutEncryption implements objectstore.Store. As on AWS, a key id or a bucket key comes only
// with SSE-KMS.
func (s *Store) PutEncryption(_ context.Context, name string, enc objectstore.Encryption) error {
	return s.write("PutEncryption", name, func(b *Bucket) error {
		if enc.Algorithm != objectstore.SSES3 && enc.Algorithm != objectstore.SSEKMS ||
			enc.Algorithm == objectstore.SSES3 && enc.KMSKeyID != "" {
			return &smithy.GenericAPIError{Code: "InvalidArgument", Message: "invalid server-side encryption configuration"}
		}
		b.Encryption = enc
		return nil
	})
}

// DeleteEncryption implements objectstore.Store: as on AWS since 2023, the bucket is then
// encrypted with SSE-S3, the default of every bucket.
func (s *Store) DeleteEncryption(_ context.Context, name string) error {
	return s.write("DeleteEncryption", name, func(b *Bucket) error { b.Encryption = awsDefaultEncryption; return nil })
}

// awsDefaultEncryption is what AWS answers for a bucket whose encryption was never set.
var awsDefaultEncryption = objectstore.Encryption{Algorithm: objectstore.SSES3}

// PublicAccessBlock implements objectstore.Store.
func (s *Store) PublicAccessBlock(_ context.Context, name string) (objectstore.PublicAccessBlock, error) {
	return read(s, "PublicAccessBlock", name, func(b *Bucket) objectstore.PublicAccessBlock { return b.PublicAccessBlock })
}

// PutPublicAccessBlock implements objectstore.Store.
func (s *Store) PutPublicAccessBlock(_ context.Context, name string, block objectstore.PublicAccessBlock) error {
	return s.write("PutPublicAccessBlock", name, func(b *Bucket) error { b.PublicAccessBlock = block; return nil })
}

// OwnershipControls implements objectstore.Store.
func (s *Store) OwnershipControls(_ context.Context, name string) (string, error) {
	return read(s, "OwnershipControls", name, func(b *Bucket) string { return b.Ownership })
}

// PutOwnershipControls implements objectstore.Store. As on AWS, BucketOwnerEnforced is refused
// while the bucket's ACL grants anyone but its owner.
func (s *Store) PutOwnershipControls(_ context.Context, name, ownership string) error {
	return s.write("PutOwnershipControls", name, func(b *Bucket) error {
		if ownership == "BucketOwnerEnforced" && !b.ACL.Equal(objectstore.DesiredACL(b.ACL.Owner, "private", nil)) {
			return errACLNotPrivate
		}
		b.Ownership = ownership
		return nil
	})
}

// DeletePublicAccessBlock implements objectstore.Store.
func (s *Store) DeletePublicAccessBlock(_ context.Context, name string) error {
	return s.write("DeletePublicAccessBlock", name, func(b *Bucket) error { b.PublicAccessBlock = objectstore.PublicAccessBlock{}; return nil })
}

// Logging implements objectstore.Store.
func (s *Store) Logging(_ context.Context, name string) (objectstore.Logging, error) {
	return read(s, "Logging", name, func(b *Bucket) objectstore.Logging { return b.Logging })
}

// PutLogging implements objectstore.Store. As on AWS, the target must be a bucket of the same
// account.
func (s *Store) PutLogging(_ context.Context, name string, logging objectstore.Logging) error {
	return s.write("PutLogging", name, func(b *Bucket) error {
		if logging.TargetBucket != "" && s.Buckets[logging.TargetBucket] == nil {
			return &smithy.GenericAPIError{Code: "InvalidTargetBucketForLogging", Message: "The target bucket for logging does not exist"}
		}
		b.Logging = logging
		return nil
	})
}

// Website implements objectstore.Store.
func (s *Store) Website(_ context.Context, name string) (objectstore.Website, error) {
	return read(s, "Website", name, func(b *Bucket) objectstore.Website { return b.Website })
}

// PutWebsite implements objectstore.Store. As on AWS, a website either serves the bucket with
// an index document or redirects every request.
func (s *Store) PutWebsite(_ context.Context, name string, w objectstore.Website) error {
	return s.write("PutWebsite", name, func(b *Bucket) error {
		if (w.IndexDocument == "") == (w.RedirectAll == nil) {
			return &smithy.GenericAPIError{Code: "InvalidArgument", Message: "A value for IndexDocument Suffix must be provided if RedirectAllRequestsTo is empty"}
		}
		b.Website = w
		return nil
	})
}

// DeleteWebsite implements objectstore.Store.
func (s *Store) DeleteWebsite(_ context.Context, name string) error {
	return s.write("DeleteWebsite", name, func(b *Bucket) error { b.Website = objectstore.Website{}; return nil })
}

// Notifications implements objectstore.Store.
func (s *Store) Notifications(_ context.Context, name string) ([]objectstore.Notification, error) {
	return read(s, "Notifications", name, func(b *Bucket) []objectstore.Notification {
		if len(b.Notifications) == 0 {
			return nil
		}
		return objectstore.NormalizeNotifications(b.Notifications)
	})
}

// PutNotifications implements objectstore.Store. As on AWS, each names a topic.
func (s *Store) PutNotifications(_ context.Context, name string, ns []objectstore.Notification) error {
	return s.write("PutNotifications", name, func(b *Bucket) error {
		for _, n := range ns {
			if n.TopicARN == "" {
				return &smithy.GenericAPIError{Code: "InvalidArgument", Message: "Unable to validate the following destination configurations"}
			}
		}
		b.Notifications = objectstore.NormalizeNotifications(ns)
		return nil
	})
}

// ObjectLock implements objectstore.Store.
func (s *Store) ObjectLock(_ context.Context, name string) (objectstore.ObjectLock, error) {
	return read(s, "ObjectLock", name, func(b *Bucket) objectstore.ObjectLock { return b.ObjectLock })
}

// PutObjectLock implements objectstore.Store. Like AWS and Ceph RGW, it refuses a bucket
// created without object lock.
func (s *Store) PutObjectLock(_ context.Context, name string, lock objectstore.ObjectLock) error {
	return s.call("PutObjectLock", func() error {
		b, err := s.bucket(name)
		switch {
		case err != nil:
			return err
		case !b.ObjectLock.Enabled:
			return &smithy.GenericAPIError{Code: "InvalidBucketState", Message: "object lock is not enabled"}
		}
		b.ObjectLock = objectstore.ObjectLock{Enabled: true, Mode: lock.Mode, Days: lock.Days}
		return nil
	})
}

// CountObjects implements objectstore.Store.
func (s *Store) CountObjects(_ context.Context, name string, limit int32) (int, bool, error) {
	var n int
	var more bool
	err := s.call("CountObjects", func() error {
		b, err := s.bucket(name)
		if err == nil {
			n, more = min(b.Objects, int(limit)), b.Objects > int(limit)
		}
		return err
	})
	return n, more, err
}

// DeleteBucket implements objectstore.Store.
func (s *Store) DeleteBucket(_ context.Context, name string) error {
	return s.call("DeleteBucket", func() error {
		b, err := s.bucket(name)
		switch {
		case err != nil:
			return err
		case b.Objects > 0 || len(b.Versions) > 0:
			return objectstore.ErrBucketNotEmpty
		}
		delete(s.Buckets, name)
		return nil
	})
}

// CheckAccess implements objectstore.Store.
// Checked under a prefix, the key can do as much outside it (Access.Outside says otherwise).
func (s *Store) CheckAccess(_ context.Context, name, prefix string) (objectstore.AccessCheck, error) {
	check := objectstore.AccessCheck{List: true, Read: true, Write: true}
	err := s.call("CheckAccess", func() error {
		if _, err := s.bucket(name); err != nil {
			return err
		}
		if s.Access != nil {
			check = *s.Access
		}
		if prefix != "" && check.Outside == nil {
			outside := check
			check.Outside = &outside
		}
		return nil
	})
	return check, err
}

func cloneTags(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

// Listed is every version ObjectVersions returned, in order, across calls.
func (s *Store) Listed() []objectstore.ObjectVersion {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.listed)
}

// ObjectVersions implements objectstore.Store: the versions after after, in listing order.
func (s *Store) ObjectVersions(_ context.Context, name string, after objectstore.ObjectVersion, limit int32) (objectstore.VersionPage, error) {
	var page objectstore.VersionPage
	err := s.call("ObjectVersions", func() error {
		b, err := s.bucket(name)
		if err != nil {
			return err
		}
		start := 0
		if after.Key != "" {
			start = slices.IndexFunc(b.Versions, func(v objectstore.ObjectVersion) bool {
				return v.Key > after.Key || v.Key == after.Key && v.VersionID < after.VersionID
			})
			if start < 0 {
				start = len(b.Versions)
			}
		}
		end := min(start+int(limit), len(b.Versions))
		page.Versions = slices.Clone(b.Versions[start:end])
		if page.More = end < len(b.Versions); page.More {
			page.Next = b.Versions[end-1]
		}
		s.listed = append(s.listed, page.Versions...)
		return nil
	})
	return page, err
}

// DeleteVersions implements objectstore.Store; versions in Holds are refused.
func (s *Store) DeleteVersions(_ context.Context, name string, versions []objectstore.ObjectVersion) ([]objectstore.Refusal, error) {
	var refused []objectstore.Refusal
	err := s.call("DeleteVersions", func() error {
		b, err := s.bucket(name)
		if err != nil {
			return err
		}
		gone := map[objectstore.ObjectVersion]bool{}
		for _, v := range versions {
			if _, held := b.Holds[v]; held {
				refused = append(refused, objectstore.Refusal{Version: v, Code: "AccessDenied", Message: "object protected by object lock"})
				continue
			}
			gone[v] = true
		}
		b.Versions = slices.DeleteFunc(b.Versions, func(v objectstore.ObjectVersion) bool { return gone[v] })
		return nil
	})
	return refused, err
}

// Hold implements objectstore.Store.
func (s *Store) Hold(_ context.Context, name string, v objectstore.ObjectVersion) (objectstore.Hold, error) {
	return read(s, "Hold", name, func(b *Bucket) objectstore.Hold { return b.Holds[v] })
}
