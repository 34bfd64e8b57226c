package contractserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"

	"github.com/ceph/go-ceph/rgw/admin"
)

// RGWConfig configures the Ceph RGW backend.
type RGWConfig struct {
	// Endpoint is the radosgw URL: clients use it for S3, the backend for admin ops (/admin/...).
	Endpoint string
	// Region is the region clients sign for. RGW accepts a signature for any region, but takes
	// only its zonegroup's api_name ("default" on a fresh cluster) as a CreateBucket location.
	Region string
	// AdminAccessKey and AdminSecretKey belong to an RGW user with the admin-ops caps
	// "users=*;buckets=*".
	AdminAccessKey string
	AdminSecretKey string
	// HTTPClient is used for every admin call; one with a 2 minute timeout when nil, because a
	// forced DeleteAccount purges objects within a single request.
	HTTPClient *http.Client
}

// RGWBackend makes contracts on Ceph RGW through its admin ops API: one RGW user per contract,
// in an RGW tenant of the contract's own (rgwAccount), with S3 key pairs and an optional user
// quota, and one RGW user per principal in the same tenant. The contract server's keys are
// imported as they are, so RGW never generates a secret the server did not record.
//
// The admin user needs the admin-ops caps "users=*;buckets=*" and, for topics, to be a system
// user: RGW makes a topic in the tenant of the user who asks, and only a system user may ask as
// another (rgw_topics.go). Roles and OpenID Connect providers (rgw_roles.go, which radosgw serves
// only with rgw_s3_auth_use_sts and an rgw_sts_key) are made by a user of the tenant that only
// the server holds keys of.
type RGWBackend struct {
	endpoint, region string
	api              *admin.API
	// topics calls RGW's SNS API, with the admin's keys.
	topics *signedClient
	// http calls RGW's IAM API (roles, OpenID Connect providers) with a tenant's IAM user's keys.
	http *http.Client
}

var (
	_ Backend          = (*RGWBackend)(nil)
	_ AccountNamer     = (*RGWBackend)(nil)
	_ WebsiteForms     = (*RGWBackend)(nil)
	_ QuotaSupport     = (*RGWBackend)(nil)
	_ KeySupport       = (*RGWBackend)(nil)
	_ PrincipalBackend = (*RGWBackend)(nil)
	_ RoleBackend      = (*RGWBackend)(nil)
)

// NewRGWBackend checks the configuration; it does not contact radosgw.
func NewRGWBackend(cfg RGWConfig) (*RGWBackend, error) {
	if u, err := url.Parse(cfg.Endpoint); err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("rgw endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	if cfg.Region == "" {
		return nil, errors.New("rgw region is required")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	}
	api, err := admin.New(strings.TrimSuffix(cfg.Endpoint, "/"), cfg.AdminAccessKey, cfg.AdminSecretKey, cfg.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("rgw admin client: %w", err)
	}
	return &RGWBackend{endpoint: cfg.Endpoint, region: cfg.Region, api: api,
		topics: newSignedClient("sns", cfg.Region, cfg.AdminAccessKey, cfg.AdminSecretKey, cfg.HTTPClient),
		http:   cfg.HTTPClient}, nil
}

func (b *RGWBackend) Kind() string     { return "rgw" }
func (b *RGWBackend) Endpoint() string { return b.endpoint }
func (b *RGWBackend) Region() string   { return b.region }

// SupportsQuotas is true: a plan's quota becomes the RGW user quota.
func (b *RGWBackend) SupportsQuotas() bool { return true }

// BucketPolicyForm implements PolicyForms: RGW names a user as an IAM user ARN, and the owner
// keeps control of its bucket whatever the policy says, as on AWS. A bucket ARN without a
// tenant is read as one of the bucket owner's tenant.
func (b *RGWBackend) BucketPolicyForm(account, _ string) contractapi.BucketPolicyForm {
	return contractapi.BucketPolicyForm{ResourcePrefix: awsResourcePrefix,
		OwnerPrincipal: map[string]string{"AWS": rgwAccountOf(account).iamARN()}}
}

// A contract's account at RGW is a user in an RGW tenant of the contract's own, named after
// the contract: RGW 16.2 keeps notification topics per tenant and checks no permission on
// them, so in a tenant shared with others any contract's keys read, repoint and delete the
// others' topics and attach them to its own buckets (rgw_topics_test.go). Bucket names are per
// tenant too. Contracts recorded before tenants stay in RGW's default tenant, whose topics they
// still share: RGW moves no user into a tenant ("users have to be under the same tenant
// namespace").
type rgwAccount struct {
	// tenant is the contract's own; "" for a contract in the default tenant.
	tenant string
	// user is the user's id within the tenant.
	user string
}

// AccountName implements AccountNamer: the user contract-<id> of tenant <id>, written as RGW
// writes a user of a tenant.
func (b *RGWBackend) AccountName(contractID string) string {
	return contractID + "$" + rgwUserID(contractID)
}

// rgwAccountOf reads an account as the server names it: AccountName's form, or the contract id
// of a contract in the default tenant.
func rgwAccountOf(account string) rgwAccount {
	if tenant, user, ok := strings.Cut(account, "$"); ok {
		return rgwAccount{tenant: tenant, user: user}
	}
	return rgwAccount{user: rgwUserID(account)}
}

// uid is the user as the admin ops API names it: tenant$user, or the user alone in the default
// tenant.
func (a rgwAccount) uid() string {
	if a.tenant == "" {
		return a.user
	}
	return a.tenant + "$" + a.user
}

// principal is the account of one of the contract's principals: a user of the same tenant, so
// that a bucket's name means the same bucket to it.
func (a rgwAccount) principal(principalID string) rgwAccount {
	return rgwAccount{tenant: a.tenant, user: a.user + "-" + principalID}
}

// contractID is the contract whose account this is.
func (a rgwAccount) contractID() string { return strings.TrimPrefix(a.user, "contract-") }

// iamARN names the user in a bucket policy. RGW reads an ARN without an account as a user of
// the default tenant, so a tenant's user needs its tenant there.
func (a rgwAccount) iamARN() string { return "arn:aws:iam::" + a.tenant + ":user/" + a.user }

// rgwUserID is the RGW user of a contract within its tenant. The prefix keeps contract users
// apart from the operator's own users, such as the admin.
func rgwUserID(contractID string) string { return "contract-" + contractID }

// WebsiteEndpoint implements WebsiteForms. RGW finds a website's bucket by the host name in
// the default tenant only; a tenant's bucket is reached by path, as <tenant>:<bucket>, on the
// website host itself: http://{bucket}.s3-website.example becomes
// http://s3-website.example/<tenant>:{bucket}.
func (b *RGWBackend) WebsiteEndpoint(account, endpoint string) string {
	a := rgwAccountOf(account)
	if a.tenant == "" {
		return endpoint
	}
	const bucket = "osm-bucket-placeholder" // {bucket}, which url.Parse would escape
	u, err := url.Parse(strings.ReplaceAll(endpoint, "{bucket}", bucket))
	if err != nil {
		return endpoint // the server checked it when it started
	}
	if host, ok := strings.CutPrefix(u.Host, bucket+"."); ok {
		u.Host, u.Path = host, "/"+bucket+u.Path
	}
	return strings.ReplaceAll(u.String(), bucket, a.tenant+":{bucket}")
}

// CreateAccount creates the RGW user with the given key pair and sets its quota. A user that
// already exists and holds this exact key pair is an earlier attempt of the same call; the quota
// is set again, in case that attempt stopped before it.
func (b *RGWBackend) CreateAccount(ctx context.Context, account string, creds Credentials, plan Plan) error {
	uid := rgwAccountOf(account).uid()
	generate := false
	_, err := b.api.CreateUser(ctx, admin.User{
		ID:          uid,
		DisplayName: "contract " + rgwAccountOf(account).contractID(),
		KeyType:     "s3",
		Keys:        []admin.UserKeySpec{{AccessKey: creds.AccessKeyID, SecretKey: creds.SecretAccessKey}},
		GenerateKey: &generate,
	})
	switch {
	case errors.Is(err, admin.ErrUserExists):
		if err := b.checkHasKey(ctx, uid, creds); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("creating rgw user %q: %w", uid, redact(err))
	}
	if plan.QuotaBytes > 0 {
		enabled := true
		if err := b.api.SetUserQuota(ctx, admin.QuotaSpec{UID: uid, Enabled: &enabled, MaxSize: &plan.QuotaBytes}); err != nil {
			return fmt.Errorf("setting quota of rgw user %q: %w", uid, err)
		}
	}
	return nil
}

// checkHasKey succeeds when the existing user uid holds exactly the key pair creds.
func (b *RGWBackend) checkHasKey(ctx context.Context, uid string, creds Credentials) error {
	user, err := b.api.GetUser(ctx, admin.User{ID: uid})
	if err != nil {
		return fmt.Errorf("reading existing rgw user %q: %w", uid, redact(err))
	}
	for _, k := range user.Keys {
		if k.AccessKey == creds.AccessKeyID &&
			subtle.ConstantTimeCompare([]byte(k.SecretKey), []byte(creds.SecretAccessKey)) == 1 {
			return nil
		}
	}
	return fmt.Errorf("rgw user %q exists without key %q", uid, creds.AccessKeyID)
}

// DeleteAccount removes the RGW user. Forced, RGW itself deletes the user's buckets and their
// objects (purge-data). Unforced, RGW would refuse anyway while the user owns buckets; the
// buckets are listed first so that refusal becomes ErrAccountHasBuckets. Every topic of the
// contract's tenant goes first, while its user is there to act as: RGW deletes no topic with
// its user, and none can be deleted after.
func (b *RGWBackend) DeleteAccount(ctx context.Context, account string, force bool) error {
	a := rgwAccountOf(account)
	uid := a.uid()
	if !force {
		if err := b.checkNoBuckets(ctx, uid); err != nil {
			return err
		}
	}
	if err := b.deleteTenantTopics(ctx, a); err != nil {
		return err
	}
	if err := b.deleteTenantRoles(ctx, a); err != nil {
		return err
	}
	user := admin.User{ID: uid}
	if force {
		purge := 1
		user.PurgeData = &purge
	}
	err := b.api.RemoveUser(ctx, user)
	switch {
	case err == nil, errors.Is(err, admin.ErrNoSuchUser):
		return nil
	case !force:
		// A bucket created after the check above makes RGW refuse; say so plainly.
		if bErr := b.checkNoBuckets(ctx, uid); bErr != nil {
			return bErr
		}
	}
	return fmt.Errorf("deleting rgw user %q: %w", uid, err)
}

// checkNoBuckets returns ErrAccountHasBuckets while uid owns a bucket. RGW lists no buckets for
// a user that does not exist.
func (b *RGWBackend) checkNoBuckets(ctx context.Context, uid string) error {
	buckets, err := b.api.ListUsersBuckets(ctx, uid)
	if err != nil {
		return fmt.Errorf("listing buckets of rgw user %q: %w", uid, err)
	}
	if len(buckets) > 0 {
		return fmt.Errorf("rgw user %q owns %d buckets: %w", uid, len(buckets), ErrAccountHasBuckets)
	}
	return nil
}

// SupportsKeys implements KeySupport: an RGW user holds any number of S3 keys.
func (b *RGWBackend) SupportsKeys() (bool, string) { return true, "" }

// AddKey gives the user another S3 key pair.
func (b *RGWBackend) AddKey(ctx context.Context, account string, creds Credentials) error {
	return b.addKey(ctx, rgwAccountOf(account).uid(), creds)
}

// addKey gives user uid another S3 key pair. RGW treats adding a key the user already holds as
// an update of its secret, so a repeated call succeeds; a key held by another user fails.
func (b *RGWBackend) addKey(ctx context.Context, uid string, creds Credentials) error {
	generate := false
	keys, err := b.api.CreateKey(ctx, admin.UserKeySpec{
		UID:         uid,
		KeyType:     "s3",
		AccessKey:   creds.AccessKeyID,
		SecretKey:   creds.SecretAccessKey,
		GenerateKey: &generate,
	})
	if err != nil {
		return fmt.Errorf("adding key %q to rgw user %q: %w", creds.AccessKeyID, uid, redact(err))
	}
	if !slices.ContainsFunc(*keys, func(k admin.UserKeySpec) bool { return k.AccessKey == creds.AccessKeyID }) {
		return fmt.Errorf("rgw user %q does not list key %q after adding it", uid, creds.AccessKeyID)
	}
	return nil
}

// RemoveKey revokes one key pair of the contract's user.
func (b *RGWBackend) RemoveKey(ctx context.Context, account, accessKeyID string) error {
	return b.removeKey(ctx, rgwAccountOf(account).uid(), accessKeyID)
}

// removeKey revokes one key pair of user uid. It reads the user first, so a key already gone (or
// a user already gone) counts as success, and a key of some other user is never touched.
func (b *RGWBackend) removeKey(ctx context.Context, uid, accessKeyID string) error {
	user, err := b.api.GetUser(ctx, admin.User{ID: uid})
	if errors.Is(err, admin.ErrNoSuchUser) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading rgw user %q: %w", uid, redact(err))
	}
	if !slices.ContainsFunc(user.Keys, func(k admin.UserKeySpec) bool { return k.AccessKey == accessKeyID }) {
		return nil
	}
	if err := b.api.RemoveKey(ctx, admin.UserKeySpec{UID: uid, KeyType: "s3", AccessKey: accessKeyID}); err != nil {
		return fmt.Errorf("removing key %q of rgw user %q: %w", accessKeyID, uid, err)
	}
	return nil
}

// rgwPrincipalUserID is the RGW user of a principal: named after its contract, so the users of
// one contract are found together, and never equal to a contract's user.
func rgwPrincipalUserID(account, principalID string) string {
	return rgwAccountOf(account).principal(principalID).uid()
}

// CreatePrincipal creates the principal's RGW user with its first key pair, allowed to own no
// bucket (max-buckets -1), so its only rights are those bucket policies give it. A user that
// already exists with this exact key pair is an earlier attempt of the same call.
func (b *RGWBackend) CreatePrincipal(ctx context.Context, account, principalID string, creds Credentials) error {
	uid := rgwPrincipalUserID(account, principalID)
	generate, noBuckets := false, -1
	_, err := b.api.CreateUser(ctx, admin.User{
		ID:          uid,
		DisplayName: "principal " + principalID + " of contract " + rgwAccountOf(account).contractID(),
		KeyType:     "s3",
		Keys:        []admin.UserKeySpec{{AccessKey: creds.AccessKeyID, SecretKey: creds.SecretAccessKey}},
		GenerateKey: &generate,
		MaxBuckets:  &noBuckets,
	})
	switch {
	case errors.Is(err, admin.ErrUserExists):
		return b.checkHasKey(ctx, uid, creds)
	case err != nil:
		return fmt.Errorf("creating rgw user %q: %w", uid, redact(err))
	}
	return nil
}

// DeletePrincipal removes the principal's RGW user, and with it every key it holds. It owns no
// bucket, so nothing is purged.
func (b *RGWBackend) DeletePrincipal(ctx context.Context, account, principalID string, _ []string) error {
	uid := rgwPrincipalUserID(account, principalID)
	if err := b.api.RemoveUser(ctx, admin.User{ID: uid}); err != nil && !errors.Is(err, admin.ErrNoSuchUser) {
		return fmt.Errorf("deleting rgw user %q: %w", uid, err)
	}
	return nil
}

// AddPrincipalKey gives the principal's user another key pair.
func (b *RGWBackend) AddPrincipalKey(ctx context.Context, account, principalID string, creds Credentials) error {
	return b.addKey(ctx, rgwPrincipalUserID(account, principalID), creds)
}

// RemovePrincipalKey revokes one key pair of the principal's user.
func (b *RGWBackend) RemovePrincipalKey(ctx context.Context, account, principalID, accessKeyID string) error {
	return b.removeKey(ctx, rgwPrincipalUserID(account, principalID), accessKeyID)
}

// PolicyPrincipal names the principal's user as an IAM user ARN, whichever keys it has.
func (b *RGWBackend) PolicyPrincipal(account, principalID string, _ []string) map[string]any {
	return map[string]any{"AWS": rgwAccountOf(account).principal(principalID).iamARN()}
}

// redact keeps secret keys out of an admin ops error: go-ceph quotes the whole response body
// (which lists every key of the user) when it cannot decode it, and the request URL (whose query
// holds the new secret key) when the request gets no answer.
func redact(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "failed to unmarshal radosgw http response") {
		return errors.New("radosgw admin ops answered with a response that could not be decoded")
	}
	// go-ceph sends secret keys in the query string of admin ops, and a request that gets no
	// answer fails with a *url.Error that quotes the whole URL: keep only scheme, host and path.
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		where := "the radosgw admin API"
		if u, parseErr := url.Parse(urlErr.URL); parseErr == nil {
			where = u.Scheme + "://" + u.Host + u.Path
		}
		return fmt.Errorf("%s %s: %w", urlErr.Op, where, urlErr.Err)
	}
	return err
}

// Keys implements KeyLister: the key pairs of every user of a contract or a principal (whose
// user id begins rgwUserID's way), in every tenant.
func (b *RGWBackend) Keys(ctx context.Context) ([]BackendKey, error) {
	uids, err := b.api.GetUsers(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing rgw users: %w", err)
	}
	var out []BackendKey
	for _, uid := range *uids {
		name := uid
		if _, u, ok := strings.Cut(uid, "$"); ok {
			name = u
		}
		if !strings.HasPrefix(name, rgwUserID("")) {
			continue
		}
		user, err := b.api.GetUser(ctx, admin.User{ID: uid})
		if err != nil {
			return nil, fmt.Errorf("reading rgw user %q: %w", uid, redact(err))
		}
		for _, k := range user.Keys {
			out = append(out, BackendKey{AccessKeyID: k.AccessKey, Owner: "rgw user " + uid})
		}
	}
	return out, nil
}
