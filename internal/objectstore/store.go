package objectstore

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// Store is the set of bucket calls the Bucket controller makes. Reads never change anything.
type Store interface {
	// BucketNames lists the buckets the account owns.
	BucketNames(ctx context.Context) ([]string, error)
	// HeadBucket returns nil when the bucket exists and the account may use it,
	// ErrNoSuchBucket, or ErrAccessDenied when someone else has it.
	HeadBucket(ctx context.Context, bucket string) error
	// CreateBucket creates a bucket with the object ownership opts ask for (ObjectWriter, on
	// which ACLs apply, when they ask for none; nothing where the server knows no ownership
	// controls), with object lock when opts ask for it. tagged says the
	// bucket was made carrying opts.Tags; otherwise the server does not take tags at creation,
	// and the caller must tag the bucket itself.
	CreateBucket(ctx context.Context, bucket string, opts CreateOptions) (tagged bool, err error)
	// CreateTells reports whether this Store's server is known to keep the tags given at
	// creation and to refuse a CreateBucket of a bucket the account owns already
	// (BucketAlreadyOwnedByYou). Then a bucket the operator made always carries its owner's tags,
	// and a CreateBucket cannot take over an existing one unnoticed: no look is needed first.
	// Learnt from the Store's first creation; until then, and on servers that answer 200 (Ceph
	// RGW, AWS in us-east-1), it is false.
	CreateTells() bool
	// BucketTags returns the bucket's tags.
	BucketTags(ctx context.Context, bucket string) (map[string]string, error)
	// PutBucketTags replaces the bucket's tags.
	PutBucketTags(ctx context.Context, bucket string, tags map[string]string) error
	// ACL reads the bucket's ACL, normalised.
	ACL(ctx context.Context, bucket string) (ACL, error)
	// PutACL replaces the bucket's ACL.
	PutACL(ctx context.Context, bucket string, acl ACL) error
	// Policy reads the bucket's policy; "" when it has none.
	Policy(ctx context.Context, bucket string) (string, error)
	// PutPolicy replaces the bucket's policy.
	PutPolicy(ctx context.Context, bucket, policy string) error
	// DeletePolicy removes the bucket's policy.
	DeletePolicy(ctx context.Context, bucket string) error
	// Versioning reads the bucket's versioning state: "Enabled", "Suspended", or "" when it was
	// never versioned.
	Versioning(ctx context.Context, bucket string) (string, error)
	// PutVersioning sets the bucket's versioning state.
	PutVersioning(ctx context.Context, bucket, status string) error
	// Lifecycle reads the bucket's lifecycle rules; nil when it has none.
	Lifecycle(ctx context.Context, bucket string) ([]LifecycleRule, error)
	// PutLifecycle replaces the bucket's lifecycle rules.
	PutLifecycle(ctx context.Context, bucket string, rules []LifecycleRule) error
	// DeleteLifecycle removes the bucket's lifecycle rules.
	DeleteLifecycle(ctx context.Context, bucket string) error
	// CORS reads the bucket's CORS rules; nil when it has none.
	CORS(ctx context.Context, bucket string) ([]CORSRule, error)
	// PutCORS replaces the bucket's CORS rules.
	PutCORS(ctx context.Context, bucket string, rules []CORSRule) error
	// DeleteCORS removes the bucket's CORS rules.
	DeleteCORS(ctx context.Context, bucket string) error
	// ObjectLock reads the bucket's object lock; Enabled is false when it has none.
	ObjectLock(ctx context.Context, bucket string) (ObjectLock, error)
	// PutObjectLock sets the default retention of a bucket created with object lock.
	PutObjectLock(ctx context.Context, bucket string, lock ObjectLock) error
	// Encryption reads the bucket's default encryption; the zero value when it has none.
	Encryption(ctx context.Context, bucket string) (Encryption, error)
	// PutEncryption sets the bucket's default encryption.
	PutEncryption(ctx context.Context, bucket string, enc Encryption) error
	// DeleteEncryption removes it (AWS then encrypts with SSE-S3, its default).
	DeleteEncryption(ctx context.Context, bucket string) error
	// PublicAccessBlock reads the bucket's public access block; the zero value when it has none.
	PublicAccessBlock(ctx context.Context, bucket string) (PublicAccessBlock, error)
	// PutPublicAccessBlock sets the bucket's public access block.
	PutPublicAccessBlock(ctx context.Context, bucket string, block PublicAccessBlock) error
	// DeletePublicAccessBlock removes it.
	DeletePublicAccessBlock(ctx context.Context, bucket string) error
	// OwnershipControls reads the bucket's object ownership (BucketOwnerEnforced,
	// BucketOwnerPreferred, ObjectWriter); "" when it has none. There is no call to delete
	// them: Ceph RGW 16.2 takes DELETE ?ownershipControls for a DeleteBucket.
	OwnershipControls(ctx context.Context, bucket string) (string, error)
	// PutOwnershipControls sets the bucket's object ownership.
	PutOwnershipControls(ctx context.Context, bucket, ownership string) error
	// Logging reads where the bucket's access logs go; the zero value when logging is off.
	Logging(ctx context.Context, bucket string) (Logging, error)
	// PutLogging sets where they go; the zero value turns logging off.
	PutLogging(ctx context.Context, bucket string, logging Logging) error
	// Website reads the bucket's website configuration; the zero value when it has none.
	Website(ctx context.Context, bucket string) (Website, error)
	// PutWebsite sets it.
	PutWebsite(ctx context.Context, bucket string, website Website) error
	// DeleteWebsite removes it.
	DeleteWebsite(ctx context.Context, bucket string) error
	// Notifications reads the bucket's event notifications, normalised; nil when it has none.
	Notifications(ctx context.Context, bucket string) ([]Notification, error)
	// PutNotifications replaces them; none removes every one.
	PutNotifications(ctx context.Context, bucket string, notifications []Notification) error
	// CountObjects counts the bucket's objects up to limit; more says there are others.
	CountObjects(ctx context.Context, bucket string, limit int32) (n int, more bool, err error)
	// DeleteBucket deletes an empty bucket; ErrBucketNotEmpty otherwise.
	DeleteBucket(ctx context.Context, bucket string) error
	// Emptier empties a bucket for a deletion that may (spec.deletion.emptyOnDelete).
	Emptier
	// CheckAccess finds out what the Store's own key may do in bucket: list, read, write; under
	// prefix and outside it, when prefix is not "". It changes nothing.
	CheckAccess(ctx context.Context, bucket, prefix string) (AccessCheck, error)
}

// Account is one account's keys on one S3 endpoint, and how buckets are addressed there.
type Account struct {
	Endpoint        string
	Region          string
	AccessKeyID     string
	SecretAccessKey string
	VirtualHosted   bool
	// TenantEndpoint says a tenant named the endpoint (an account of spec.credentials), rather
	// than the provider reporting it for an account it sold: every connection to it is held to
	// the platform's list of allowed endpoints (egress.Allowlist).
	TenantEndpoint bool
}

// Config says how to reach an S3 endpoint.
type Config struct {
	Endpoint        string
	Region          string
	AccessKeyID     string
	SecretAccessKey string
	// VirtualHosted addresses buckets as <bucket>.<endpoint host>, as AWS prefers, instead of
	// <endpoint>/<bucket>, which every server here (and bucket names with dots) needs.
	VirtualHosted bool
	// HTTPClient is shared between Stores, so connections are reused; it bounds each request.
	HTTPClient *http.Client
	// MaxAttempts bounds the SDK's retries of one call (3 when 0).
	MaxAttempts int
	// APIOptions add middleware to every call; tests use it to count calls.
	APIOptions []func(*middleware.Stack) error
}

// NewHTTPClient returns the client Stores share: each request bounded by timeout, each answer by
// tuning.MaxS3Answer (less for some calls, see answerLimits), no redirect followed to another
// host, and up to conns idle connections kept per endpoint. net/http keeps two by default, so
// with more workers than that calling one endpoint most calls would open (and leave in
// TIME_WAIT) a connection of their own. With allow, it connects only where allow says: the
// client of endpoints tenants name.
func NewHTTPClient(timeout time.Duration, conns int, allow *egress.Allowlist) *http.Client {
	return egress.NewClient(egress.ClientConfig{Allow: allow, Timeout: timeout, IdleConnsPerHost: conns, MaxAnswer: tuning.MaxS3Answer})
}

// New returns a Store for one account on one endpoint. It is cheap: the connections live in
// cfg.HTTPClient.
func New(cfg Config) Store {
	return &store{s3: newClient(cfg), region: cfg.Region}
}

// What a Store's server does with tags given in CreateBucket: AWS (since 2025) and versitygw
// keep them, Ceph RGW does not. It is learnt per Store, an account on an endpoint, because AWS
// also asks the key for s3:TagResource: until one creation shows it, each reads the tags back.
const (
	createTagsUnknown int32 = iota
	createTagsTaken
	createTagsIgnored
)

func newClient(cfg Config) *s3.Client {
	attempts := cfg.MaxAttempts
	if attempts == 0 {
		attempts = 3
	}
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(cfg.Endpoint),
		Region:       cfg.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		// Bucket names with dots and local endpoints both need path-style addressing.
		UsePathStyle: !cfg.VirtualHosted,
		HTTPClient:   cfg.HTTPClient,
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = attempts }),
		APIOptions:   append([]func(*middleware.Stack) error{answerLimits}, cfg.APIOptions...),
		// Checksums only where S3 requires them: not every server speaks the newer ones.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

type store struct {
	s3     *s3.Client
	region string
	// createTags is what the server did with tags sent in CreateBucket (createTags*).
	createTags atomic.Int32
	// recreate is what the server answered a CreateBucket of a bucket the account owns
	// (recreate*).
	recreate atomic.Int32
}

// What a Store's server answers a CreateBucket of a bucket the account owns already: versitygw
// and AWS outside us-east-1 refuse it with BucketAlreadyOwnedByYou, Ceph RGW and AWS in
// us-east-1 answer 200 as for a new bucket. Learnt per Store, once, by asking again right after
// its first creation.
const (
	recreateUnknown int32 = iota
	recreateRefused
	recreateAnswered
)

func (s *store) CreateTells() bool {
	return s.createTags.Load() == createTagsTaken && s.recreate.Load() == recreateRefused
}

func (s *store) BucketNames(ctx context.Context) ([]string, error) {
	var names []string
	p := s3.NewListBucketsPaginator(s.s3, &s3.ListBucketsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, classify(fmt.Errorf("listing buckets: %w", err))
		}
		if page.Owner == nil {
			// Every ListBuckets answer names the account; a 200 without one (an empty body)
			// is some other server's, and proves nothing about the keys.
			return nil, fmt.Errorf("listing buckets: %w: the answer names no owner", ErrNotAnAnswer)
		}
		for _, b := range page.Buckets {
			names = append(names, aws.ToString(b.Name))
		}
	}
	return names, nil
}

func (s *store) HeadBucket(ctx context.Context, bucket string) error {
	_, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	return classify(wrap("looking up bucket", bucket, err))
}

// CreateOptions are what can only be chosen when a bucket is created.
type CreateOptions struct {
	// ObjectLock creates the bucket with object lock (and so versioning) on.
	ObjectLock bool
	// Tags are the tags the bucket is made with, where the server takes them at creation: then
	// the bucket is never seen untagged, and no tagging call follows.
	Tags map[string]string
	// ObjectOwnership is the object ownership the bucket is made with; "" is ObjectWriter.
	// Made with it, a bucket never has a moment with ACLs on that its spec turns off.
	ObjectOwnership string
}

func (s *store) CreateBucket(ctx context.Context, bucket string, opts CreateOptions) (bool, error) {
	sendTags := len(opts.Tags) > 0 && s.createTags.Load() != createTagsIgnored
	err := s.create(ctx, bucket, opts, sendTags)
	if err != nil && sendTags && s.createTags.Load() == createTagsUnknown && refusesCreateTags(err, opts) {
		// An endpoint that knows no tags at creation (or keys without s3:TagResource on AWS):
		// make the bucket without them, and tag it separately from now on.
		s.createTags.Store(createTagsIgnored)
		sendTags = false
		err = s.create(ctx, bucket, opts, false)
	}
	if err != nil || !sendTags {
		return false, classify(wrap("creating bucket", bucket, err))
	}
	if s.createTags.Load() == createTagsTaken {
		s.learnRecreate(ctx, bucket, opts)
		return true, nil
	}
	// The first creation here: a server may ignore what it does not know, so look.
	tags, err := s.BucketTags(ctx, bucket)
	if err != nil {
		// Made, but unknown whether tagged: the caller's tagging call settles it.
		return false, nil
	}
	for k, v := range opts.Tags {
		if tags[k] != v {
			s.createTags.Store(createTagsIgnored)
			return false, nil
		}
	}
	s.createTags.Store(createTagsTaken)
	s.learnRecreate(ctx, bucket, opts)
	return true, nil
}

// learnRecreate asks the server, once per Store, what it answers a CreateBucket of the bucket it
// has just made: CreateTells needs to know. Only servers that keep tags at creation are asked;
// on the others the caller looks before creating anyway.
func (s *store) learnRecreate(ctx context.Context, bucket string, opts CreateOptions) {
	if s.recreate.Load() != recreateUnknown {
		return
	}
	switch err := s.create(ctx, bucket, opts, true); {
	case err == nil:
		s.recreate.Store(recreateAnswered)
	case ErrorCode(err) == "BucketAlreadyOwnedByYou":
		s.recreate.Store(recreateRefused)
	}
}

// create makes the bucket, with opts.Tags when withTags.
func (s *store) create(ctx context.Context, bucket string, opts CreateOptions, withTags bool) error {
	in := &s3.CreateBucketInput{
		Bucket: aws.String(bucket),
		// AWS and versitygw create buckets with ACLs disabled (BucketOwnerEnforced); the
		// Bucket API is about ACLs, so ask for ObjectWriter unless the spec says otherwise.
		ObjectOwnership: types.ObjectOwnershipObjectWriter,
	}
	if opts.ObjectOwnership != "" {
		in.ObjectOwnership = types.ObjectOwnership(opts.ObjectOwnership)
	}
	if opts.ObjectLock {
		in.ObjectLockEnabledForBucket = aws.Bool(true)
	}
	config := &types.CreateBucketConfiguration{}
	// us-east-1 is the default location and must not be named.
	if s.region != "" && s.region != "us-east-1" {
		config.LocationConstraint = types.BucketLocationConstraint(s.region)
	}
	if withTags {
		config.Tags = tagSet(opts.Tags)
	}
	if config.LocationConstraint != "" || withTags {
		in.CreateBucketConfiguration = config
	}
	_, err := s.s3.CreateBucket(ctx, in)
	if err != nil && rejectsOwnership(err) {
		// Servers without ownership controls (Ceph RGW) have ACLs on anyway.
		in.ObjectOwnership = ""
		_, err = s.s3.CreateBucket(ctx, in)
	}
	return err
}

// refusesCreateTags reports whether a CreateBucket that carried tags may have failed for them:
// a server refusing what it does not parse, or AWS denying tags to keys without s3:TagResource.
// Names taken, object lock unsupported, and answers that say nothing of the request (5xx,
// throttling) do not count. A wrong guess costs only speed: the bucket is tagged separately.
func refusesCreateTags(err error, opts CreateOptions) bool {
	switch ErrorCode(err) {
	case "BucketAlreadyOwnedByYou", "BucketAlreadyExists", "InvalidBucketName", "TooManyBuckets":
		return false
	}
	if opts.ObjectLock && IsNotImplemented(err) {
		return false // object lock is what the server lacks
	}
	return !IsTransient(err)
}

// rejectsOwnership reports whether a CreateBucket failed because the server does not know the
// object-ownership header.
func rejectsOwnership(err error) bool {
	switch ErrorCode(err) {
	case "InvalidArgument", "NotImplemented", "InvalidRequest":
		return true
	}
	return false
}

func (s *store) BucketTags(ctx context.Context, bucket string) (map[string]string, error) {
	out, err := s.s3.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	tags := map[string]string{}
	if isNoTagSet(err) {
		return tags, nil
	}
	if err != nil {
		return nil, classify(wrap("reading tags of bucket", bucket, err))
	}
	for _, t := range out.TagSet {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

func (s *store) PutBucketTags(ctx context.Context, bucket string, tags map[string]string) error {
	_, err := s.s3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{
		Bucket:  aws.String(bucket),
		Tagging: &types.Tagging{TagSet: tagSet(tags)},
	})
	return classify(wrap("tagging bucket", bucket, err))
}

// tagSet is tags as S3 takes them, in key order.
func tagSet(tags map[string]string) []types.Tag {
	set := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		set = append(set, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return set
}

// isNoTagSet reports whether err says the bucket has no tags (AWS and servers disagree on the
// code's spelling).
func isNoTagSet(err error) bool {
	code := ErrorCode(err)
	return code == "NoSuchTagSet" || code == "NoSuchTagSetError"
}

func (s *store) ACL(ctx context.Context, bucket string) (ACL, error) {
	out, err := s.s3.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String(bucket)})
	if err != nil {
		return ACL{}, classify(wrap("reading ACL of bucket", bucket, err))
	}
	acl := ACL{}
	if out.Owner != nil {
		acl.Owner = aws.ToString(out.Owner.ID)
	}
	for _, g := range out.Grants {
		if g.Grantee == nil {
			continue
		}
		acl.Grants = append(acl.Grants, Grant{Grantee: fromSDKGrantee(g.Grantee), Permission: Permission(g.Permission)})
	}
	return Normalize(acl), nil
}

func fromSDKGrantee(g *types.Grantee) Grantee {
	switch g.Type {
	case types.TypeGroup:
		// versitygw spells the group in ID ("all-users"); AWS and RGW in URI.
		if uri := aws.ToString(g.URI); uri != "" {
			return Grantee{GranteeGroup, uri}
		}
		return Grantee{GranteeGroup, aws.ToString(g.ID)}
	case types.TypeAmazonCustomerByEmail:
		return Grantee{GranteeEmail, aws.ToString(g.EmailAddress)}
	default:
		return Grantee{GranteeID, aws.ToString(g.ID)}
	}
}

func toSDKGrantee(g Grantee) *types.Grantee {
	switch g.Type {
	case GranteeGroup:
		return &types.Grantee{Type: types.TypeGroup, URI: aws.String(g.Value)}
	case GranteeEmail:
		return &types.Grantee{Type: types.TypeAmazonCustomerByEmail, EmailAddress: aws.String(g.Value)}
	default:
		return &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String(g.Value)}
	}
}

// PutACL writes a canned ACL when one means the same, and the full grant list otherwise. Every
// server understands canned ACLs; versitygw takes group grants in no other form.
func (s *store) PutACL(ctx context.Context, bucket string, acl ACL) error {
	in := &s3.PutBucketAclInput{Bucket: aws.String(bucket)}
	if canned, ok := acl.Canned(); ok {
		in.ACL = types.BucketCannedACL(canned)
	} else {
		policy := &types.AccessControlPolicy{Owner: &types.Owner{ID: aws.String(acl.Owner)}}
		for _, g := range acl.Grants {
			policy.Grants = append(policy.Grants, types.Grant{Grantee: toSDKGrantee(g.Grantee), Permission: types.Permission(g.Permission)})
		}
		in.AccessControlPolicy = policy
	}
	_, err := s.s3.PutBucketAcl(ctx, in)
	return classify(wrap("writing ACL of bucket", bucket, err))
}

func (s *store) Policy(ctx context.Context, bucket string) (string, error) {
	out, err := s.s3.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchBucketPolicy" {
		return "", nil
	}
	if err != nil {
		return "", classify(wrap("reading policy of bucket", bucket, err))
	}
	policy := aws.ToString(out.Policy)
	if err := bucketpolicy.CheckShape([]byte(policy)); err != nil {
		return "", fmt.Errorf("reading policy of bucket %q: %w: %w", bucket, ErrNotAnAnswer, err)
	}
	return policy, nil
}

func (s *store) PutPolicy(ctx context.Context, bucket, policy string) error {
	_, err := s.s3.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)})
	return classify(wrap("writing policy of bucket", bucket, err))
}

func (s *store) DeletePolicy(ctx context.Context, bucket string) error {
	_, err := s.s3.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchBucketPolicy" {
		return nil
	}
	return classify(wrap("deleting policy of bucket", bucket, err))
}

func (s *store) Versioning(ctx context.Context, bucket string) (string, error) {
	out, err := s.s3.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
	if err != nil {
		return "", classify(wrap("reading versioning of bucket", bucket, err))
	}
	return string(out.Status), nil
}

func (s *store) PutVersioning(ctx context.Context, bucket, status string) error {
	_, err := s.s3.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatus(status)}})
	return classify(wrap("setting versioning of bucket", bucket, err))
}

func (s *store) Lifecycle(ctx context.Context, bucket string) ([]LifecycleRule, error) {
	out, err := s.s3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchLifecycleConfiguration" {
		return nil, nil
	}
	if err != nil {
		return nil, classify(wrap("reading lifecycle of bucket", bucket, err))
	}
	var rules []LifecycleRule
	for _, r := range out.Rules {
		rules = append(rules, fromSDKLifecycleRule(r))
	}
	return NormalizeLifecycle(rules), nil
}

func (s *store) PutLifecycle(ctx context.Context, bucket string, rules []LifecycleRule) error {
	conf := &types.BucketLifecycleConfiguration{}
	for _, r := range NormalizeLifecycle(rules) {
		conf.Rules = append(conf.Rules, toSDKLifecycleRule(r))
	}
	_, err := s.s3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(bucket), LifecycleConfiguration: conf})
	return classify(wrap("writing lifecycle of bucket", bucket, err))
}

func (s *store) DeleteLifecycle(ctx context.Context, bucket string) error {
	_, err := s.s3.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchLifecycleConfiguration" {
		return nil
	}
	return classify(wrap("deleting lifecycle of bucket", bucket, err))
}

func (s *store) CORS(ctx context.Context, bucket string) ([]CORSRule, error) {
	out, err := s.s3.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchCORSConfiguration" {
		return nil, nil
	}
	if err != nil {
		return nil, classify(wrap("reading CORS of bucket", bucket, err))
	}
	var rules []CORSRule
	for _, r := range out.CORSRules {
		rules = append(rules, fromSDKCORSRule(r))
	}
	return rules, nil
}

func (s *store) PutCORS(ctx context.Context, bucket string, rules []CORSRule) error {
	conf := &types.CORSConfiguration{}
	for _, r := range rules {
		conf.CORSRules = append(conf.CORSRules, toSDKCORSRule(r))
	}
	_, err := s.s3.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket), CORSConfiguration: conf})
	return classify(wrap("writing CORS of bucket", bucket, err))
}

func (s *store) DeleteCORS(ctx context.Context, bucket string) error {
	_, err := s.s3.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchCORSConfiguration" {
		return nil
	}
	return classify(wrap("deleting CORS of bucket", bucket, err))
}

func (s *store) ObjectLock(ctx context.Context, bucket string) (ObjectLock, error) {
	out, err := s.s3.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "ObjectLockConfigurationNotFoundError" {
		return ObjectLock{}, nil
	}
	if err != nil {
		return ObjectLock{}, classify(wrap("reading object lock of bucket", bucket, err))
	}
	return fromSDKObjectLock(out.ObjectLockConfiguration), nil
}

func (s *store) PutObjectLock(ctx context.Context, bucket string, lock ObjectLock) error {
	_, err := s.s3.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{
		Bucket: aws.String(bucket), ObjectLockConfiguration: toSDKObjectLock(lock)})
	return classify(wrap("writing object lock of bucket", bucket, err))
}

func (s *store) CountObjects(ctx context.Context, bucket string, limit int32) (int, bool, error) {
	out, err := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(limit)})
	if err != nil {
		return 0, false, classify(wrap("listing objects of bucket", bucket, err))
	}
	return len(out.Contents), aws.ToBool(out.IsTruncated), nil
}

func (s *store) DeleteBucket(ctx context.Context, bucket string) error {
	_, err := s.s3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return classify(wrap("deleting bucket", bucket, err))
}

func wrap(op, bucket string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %q: %w", op, bucket, err)
}

// IsMutating reports whether an S3 operation name changes anything; tests count these.
func IsMutating(operation string) bool {
	for _, prefix := range []string{"Put", "Create", "Delete"} {
		if strings.HasPrefix(operation, prefix) {
			return true
		}
	}
	return false
}
