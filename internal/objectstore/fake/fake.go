// Package fake is an in-memory objectstore.Store for unit tests of the Bucket controller: one
// account's buckets, with their tags, ACL, policy and object count, and failures on demand,
// including a call that acts and then loses its answer, which real servers do not do when asked.
package fake

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/aws/smithy-go"

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
			Grantee: objectstore.Grantee{Type: objectstore.GranteeID, Value: s.Owner}, Permission: objectstore.PermissionFullControl}}}}
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

// BucketTags implements objectstore.Store.
func (s *Store) BucketTags(_ context.Context, name string) (map[string]string, error) {
	var tags map[string]string
	err := s.call("BucketTags", func() error {
		b, err := s.bucket(name)
		if err == nil {
			tags = cloneTags(b.Tags)
		}
		return err
	})
	return tags, err
}

// PutBucketTags implements objectstore.Store.
func (s *Store) PutBucketTags(_ context.Context, name string, tags map[string]string) error {
	return s.call("PutBucketTags", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.Tags = cloneTags(tags)
		}
		return err
	})
}

// ACL implements objectstore.Store.
func (s *Store) ACL(_ context.Context, name string) (objectstore.ACL, error) {
	var acl objectstore.ACL
	err := s.call("ACL", func() error {
		b, err := s.bucket(name)
		if err == nil {
			acl = objectstore.Normalize(b.ACL)
		}
		return err
	})
	return acl, err
}

// PutACL implements objectstore.Store.
func (s *Store) PutACL(_ context.Context, name string, acl objectstore.ACL) error {
	return s.call("PutACL", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.ACL = acl
		}
		return err
	})
}

// Policy implements objectstore.Store.
func (s *Store) Policy(_ context.Context, name string) (string, error) {
	var policy string
	err := s.call("Policy", func() error {
		b, err := s.bucket(name)
		if err == nil {
			policy = b.Policy
		}
		return err
	})
	return policy, err
}

// PutPolicy implements objectstore.Store.
func (s *Store) PutPolicy(_ context.Context, name, policy string) error {
	return s.call("PutPolicy", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.Policy = policy
		}
		return err
	})
}

// DeletePolicy implements objectstore.Store.
func (s *Store) DeletePolicy(_ context.Context, name string) error {
	return s.call("DeletePolicy", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.Policy = ""
		}
		return err
	})
}

// NotImplemented is the error a server answers a call it does not implement, as versitygw
// answers lifecycle calls; queue it with Fail.
var NotImplemented = &smithy.GenericAPIError{Code: "NotImplemented", Message: "not implemented"}

// Versioning implements objectstore.Store.
func (s *Store) Versioning(_ context.Context, name string) (string, error) {
	var v string
	err := s.call("Versioning", func() error {
		b, err := s.bucket(name)
		if err == nil {
			v = b.Versioning
		}
		return err
	})
	return v, err
}

// PutVersioning implements objectstore.Store.
func (s *Store) PutVersioning(_ context.Context, name, status string) error {
	return s.call("PutVersioning", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.Versioning = status
		}
		return err
	})
}

// Lifecycle implements objectstore.Store.
func (s *Store) Lifecycle(_ context.Context, name string) ([]objectstore.LifecycleRule, error) {
	var rules []objectstore.LifecycleRule
	err := s.call("Lifecycle", func() error {
		b, err := s.bucket(name)
		if err == nil {
			rules = objectstore.NormalizeLifecycle(b.Lifecycle)
		}
		return err
	})
	return rules, err
}

// PutLifecycle implements objectstore.Store.
func (s *Store) PutLifecycle(_ context.Context, name string, rules []objectstore.LifecycleRule) error {
	return s.call("PutLifecycle", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.Lifecycle = objectstore.NormalizeLifecycle(rules)
		}
		return err
	})
}

// DeleteLifecycle implements objectstore.Store.
func (s *Store) DeleteLifecycle(_ context.Context, name string) error {
	return s.call("DeleteLifecycle", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.Lifecycle = nil
		}
		return err
	})
}

// CORS implements objectstore.Store.
func (s *Store) CORS(_ context.Context, name string) ([]objectstore.CORSRule, error) {
	var rules []objectstore.CORSRule
	err := s.call("CORS", func() error {
		b, err := s.bucket(name)
		if err == nil {
			rules = slices.Clone(b.CORS)
		}
		return err
	})
	return rules, err
}

// PutCORS implements objectstore.Store.
func (s *Store) PutCORS(_ context.Context, name string, rules []objectstore.CORSRule) error {
	return s.call("PutCORS", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.CORS = slices.Clone(rules)
		}
		return err
	})
}

// DeleteCORS implements objectstore.Store.
func (s *Store) DeleteCORS(_ context.Context, name string) error {
	return s.call("DeleteCORS", func() error {
		b, err := s.bucket(name)
		if err == nil {
			b.CORS = nil
		}
		return err
	})
}

// ObjectLock implements objectstore.Store.
func (s *Store) ObjectLock(_ context.Context, name string) (objectstore.ObjectLock, error) {
	var lock objectstore.ObjectLock
	err := s.call("ObjectLock", func() error {
		b, err := s.bucket(name)
		if err == nil {
			lock = b.ObjectLock
		}
		return err
	})
	return lock, err
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
		case b.Objects > 0:
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
