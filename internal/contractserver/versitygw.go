package contractserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersityGWConfig configures the versitygw backend.
type VersityGWConfig struct {
	// S3Endpoint is the gateway's S3 URL that clients use; Region is the region it signs for.
	S3Endpoint string
	Region     string
	// AdminEndpoint is the gateway's admin API URL (its --admin-port).
	AdminEndpoint string
	// AdminAccessKey and AdminSecretKey are an admin account of the gateway (its root account
	// will do). They sign admin calls, and S3 calls when a forced cancel empties buckets.
	AdminAccessKey string
	AdminSecretKey string
	// HTTPClient is used for every call; one with a 30s timeout when nil.
	HTTPClient *http.Client
}

// VersityGWBackend makes contracts on versitygw: one gateway user with role userplus (may
// create buckets) per contract.
//
// In versitygw a user is its access key: the user is named by the contract's first access key
// (FirstAccessKeyID), and has no other key. So AddKey and RemoveKey are not supported, and
// neither are quotas. A principal is a set of users of role user, one per key pair: such a user
// cannot create buckets, and bucket policies name it by its access key.
type VersityGWBackend struct {
	cfg   VersityGWConfig
	admin *vgwAdmin
	s3    *s3.Client
}

var (
	_ Backend          = (*VersityGWBackend)(nil)
	_ QuotaSupport     = (*VersityGWBackend)(nil)
	_ KeySupport       = (*VersityGWBackend)(nil)
	_ PrincipalBackend = (*VersityGWBackend)(nil)
)

// NewVersityGWBackend checks the configuration; it does not contact the gateway.
func NewVersityGWBackend(cfg VersityGWConfig) (*VersityGWBackend, error) {
	for name, v := range map[string]string{"S3 endpoint": cfg.S3Endpoint, "admin endpoint": cfg.AdminEndpoint} {
		if u, err := url.Parse(v); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("versitygw %s %q is not an http(s) URL", name, v)
		}
	}
	if cfg.Region == "" {
		return nil, errors.New("versitygw region is required")
	}
	if cfg.AdminAccessKey == "" || cfg.AdminSecretKey == "" {
		return nil, errors.New("versitygw admin access key and secret key are required")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &VersityGWBackend{
		cfg: cfg,
		admin: &vgwAdmin{
			endpoint: cfg.AdminEndpoint,
			signed:   newSignedClient("s3", cfg.Region, cfg.AdminAccessKey, cfg.AdminSecretKey, cfg.HTTPClient),
		},
		s3: s3.New(s3.Options{
			BaseEndpoint: aws.String(cfg.S3Endpoint),
			Region:       cfg.Region,
			UsePathStyle: true,
			Credentials:  credentials.NewStaticCredentialsProvider(cfg.AdminAccessKey, cfg.AdminSecretKey, ""),
			HTTPClient:   cfg.HTTPClient,
		}),
	}, nil
}

func (b *VersityGWBackend) Kind() string         { return "versitygw" }
func (b *VersityGWBackend) Endpoint() string     { return b.cfg.S3Endpoint }
func (b *VersityGWBackend) Region() string       { return b.cfg.Region }
func (b *VersityGWBackend) SupportsQuotas() bool { return false }

// BucketPolicyForm implements PolicyForms: versitygw names an account by its access key, and
// judges even a bucket's owner by the bucket policy alone once there is one.
func (b *VersityGWBackend) BucketPolicyForm(_, firstAccessKeyID string) contractapi.BucketPolicyForm {
	return contractapi.BucketPolicyForm{ResourcePrefix: awsResourcePrefix,
		OwnerPrincipal: map[string]string{"AWS": firstAccessKeyID}, OwnerNeedsAllow: true}
}

// CreateAccount creates the gateway user of the contract.
func (b *VersityGWBackend) CreateAccount(ctx context.Context, contractID string, creds Credentials, plan Plan) error {
	if plan.QuotaBytes > 0 {
		return fmt.Errorf("plan %q has a quota: %w", plan.Name, ErrNotSupported)
	}
	if creds.AccessKeyID != FirstAccessKeyID(contractID) {
		return fmt.Errorf("versitygw names a contract's user by its first key %q, not %q", FirstAccessKeyID(contractID), creds.AccessKeyID)
	}
	return b.ensureUser(ctx, vgwAccount{Access: creds.AccessKeyID, Secret: creds.SecretAccessKey, Role: vgwRoleUserPlus})
}

// ensureUser creates a gateway user. One that already exists with the same secret and role is
// the result of an earlier attempt, and counts as success.
func (b *VersityGWBackend) ensureUser(ctx context.Context, acc vgwAccount) error {
	err := b.admin.createUser(ctx, acc)
	var vErr *backendError
	if !errors.As(err, &vErr) || vErr.Code != "XAdminUserExists" {
		if err != nil {
			return fmt.Errorf("creating user %q: %w", acc.Access, err)
		}
		return nil
	}
	users, err := b.admin.listUsers(ctx)
	if err != nil {
		return fmt.Errorf("checking existing user %q: %w", acc.Access, err)
	}
	for _, u := range users {
		if u.Access == acc.Access {
			if subtle.ConstantTimeCompare([]byte(u.Secret), []byte(acc.Secret)) == 1 && u.Role == acc.Role {
				return nil
			}
			return fmt.Errorf("user %q exists with other credentials or role", acc.Access)
		}
	}
	return fmt.Errorf("user %q reported as existing but not listed", acc.Access)
}

// DeleteAccount deletes the gateway user, after its buckets when forced. versitygw itself would
// delete a user that owns buckets and leave them orphaned, so the check is made here.
func (b *VersityGWBackend) DeleteAccount(ctx context.Context, contractID string, force bool) error {
	access := FirstAccessKeyID(contractID)
	buckets, err := b.admin.bucketsOwnedBy(ctx, access)
	if err != nil {
		return fmt.Errorf("listing buckets of user %q: %w", access, err)
	}
	if len(buckets) > 0 && !force {
		return fmt.Errorf("user %q owns %d buckets: %w", access, len(buckets), ErrAccountHasBuckets)
	}
	for _, bucket := range buckets {
		if err := purgeBucket(ctx, b.s3, bucket); err != nil {
			return err
		}
	}
	// delete-user succeeds for a user that is already gone, which makes this idempotent.
	if err := b.admin.deleteUser(ctx, access); err != nil {
		return fmt.Errorf("deleting user %q: %w", access, err)
	}
	return nil
}

// versitygwOneKey says why a contract on versitygw cannot rotate its key.
const versitygwOneKey = "versitygw accounts hold one key pair (a versitygw user is its access key)"

// SupportsKeys implements KeySupport: a versitygw account holds one key pair.
func (b *VersityGWBackend) SupportsKeys() (bool, string) { return false, versitygwOneKey }

// AddKey is not supported: a versitygw user has exactly one key, its name.
func (b *VersityGWBackend) AddKey(context.Context, string, Credentials) error {
	return fmt.Errorf("%s, so a contract on versitygw cannot have a second key for rotation: %w", versitygwOneKey, ErrNotSupported)
}

// RemoveKey is not supported: the only key is the user itself.
func (b *VersityGWBackend) RemoveKey(context.Context, string, string) error {
	return fmt.Errorf("versitygw accounts have a single key pair: %w", ErrNotSupported)
}

// CreatePrincipal makes the user of the principal's first key pair.
func (b *VersityGWBackend) CreatePrincipal(ctx context.Context, _, _ string, creds Credentials) error {
	return b.AddPrincipalKey(ctx, "", "", creds)
}

// AddPrincipalKey makes a user of role user named by the new access key: its rights come only
// from bucket policies that name that key.
func (b *VersityGWBackend) AddPrincipalKey(ctx context.Context, _, _ string, creds Credentials) error {
	return b.ensureUser(ctx, vgwAccount{Access: creds.AccessKeyID, Secret: creds.SecretAccessKey, Role: vgwRoleUser})
}

// RemovePrincipalKey deletes the user of the key; delete-user succeeds for one already gone.
func (b *VersityGWBackend) RemovePrincipalKey(ctx context.Context, _, _, accessKeyID string) error {
	if err := b.admin.deleteUser(ctx, accessKeyID); err != nil {
		return fmt.Errorf("deleting user %q: %w", accessKeyID, err)
	}
	return nil
}

// DeletePrincipal deletes the user of every key of the principal.
func (b *VersityGWBackend) DeletePrincipal(ctx context.Context, contractID, principalID string, accessKeyIDs []string) error {
	for _, k := range accessKeyIDs {
		if err := b.RemovePrincipalKey(ctx, contractID, principalID, k); err != nil {
			return err
		}
	}
	return nil
}

// PolicyPrincipal names every key of the principal, since each is a user of its own; a single
// key as a plain string, as AWS writes a Principal with one value.
func (b *VersityGWBackend) PolicyPrincipal(_, _ string, accessKeyIDs []string) map[string]any {
	if len(accessKeyIDs) == 1 {
		return map[string]any{"AWS": accessKeyIDs[0]}
	}
	keys := make([]any, len(accessKeyIDs))
	for i, k := range accessKeyIDs {
		keys[i] = k
	}
	return map[string]any{"AWS": keys}
}
