package contractserver

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ceph/go-ceph/rgw/admin"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
)

// Roles and OpenID Connect providers on Ceph RGW 16.2 (radosgw with rgw_s3_auth_use_sts and an
// rgw_sts_key), as found on Debian's 16.2.15 (docs/s3-servers.md):
//   - both live in a tenant, and AssumeRoleWithWebIdentity looks the provider up in the role's
//     tenant by the token's iss: a role of one contract cannot trust another tenant's provider;
//   - RGW fetches <iss>/.well-known/openid-configuration and its jwks_uri at every exchange and
//     takes only keys with an x5c certificate; the thumbprints are recorded, not checked;
//   - the token's aud must be one of the provider's client ids, and the role's trust policy
//     sees the token's sub as <issuer host>:sub and its aud as <issuer host>:app_id;
//   - a user needs the caps roles=* and oidc-provider=* to make either, which a contract's user
//     never gets (its keys are its tenant's). A system user acting as a tenant's user (rgwx-uid,
//     as the admin makes topics) makes roles and providers, but kills radosgw on any change of
//     a role (PutRolePolicy, UpdateAssumeRolePolicy: a segmentation fault in RGWRole::update),
//     so they are made by an IAM user of the tenant (osm-iam, with those caps) whose keys only
//     the server holds, for one call at a time (withIAM);
//   - a role is read at every request of its sessions: deleting its policy or the role ends
//     what sessions already handed out can do, and a role with a policy cannot be deleted;
//   - UpdateAssumeRolePolicy killed radosgw too when the admin sent it as a tenant's user; a
//     role whose trust changes is deleted and made again, never updated.

// rgwRolePolicyName is the one inline policy the server gives each role.
const rgwRolePolicyName = "osm-access"

// rgwIAMUser is the user of each tenant that makes its roles and providers.
const rgwIAMUser = "osm-iam"

// iamCall posts one IAM action to radosgw as the tenant's IAM user.
type iamCall func(form url.Values) ([]byte, error)

// withIAM runs fn with calls as the IAM user of a's tenant, made on first use with the caps
// roles=* and oidc-provider=* and no bucket. Its key lives for fn alone: made before, removed
// after, and any other key it holds (one a crash left) removed first, so no key of it outlives
// a call. The caller holds the contract's lock, so no other call uses the user meanwhile.
func (b *RGWBackend) withIAM(ctx context.Context, a rgwAccount, fn func(iam iamCall) error) error {
	uid := a.tenant + "$" + rgwIAMUser
	user, err := b.api.GetUser(ctx, admin.User{ID: uid})
	if errors.Is(err, admin.ErrNoSuchUser) {
		generate, noBuckets := false, -1
		user, err = b.api.CreateUser(ctx, admin.User{ID: uid, DisplayName: "roles of contract " + a.contractID(),
			UserCaps: "roles=*;oidc-provider=*", GenerateKey: &generate, MaxBuckets: &noBuckets})
	}
	if err != nil {
		return fmt.Errorf("rgw IAM user %q: %w", uid, redact(err))
	}
	for _, k := range user.Keys {
		if err := b.removeKey(ctx, uid, k.AccessKey); err != nil {
			return err
		}
	}
	creds := newCredentials(newAccessKeyID())
	if err := b.addKey(ctx, uid, creds); err != nil {
		return err
	}
	defer func() { _ = b.removeKey(context.WithoutCancel(ctx), uid, creds.AccessKeyID) }()
	c := newSignedClient("iam", b.region, creds.AccessKeyID, creds.SecretAccessKey, b.http)
	return fn(func(form url.Values) ([]byte, error) {
		return c.do(ctx, "rgw "+form.Get("Action"), http.MethodPost, strings.TrimSuffix(b.endpoint, "/")+"/",
			"application/x-www-form-urlencoded", []byte(form.Encode()))
	})
}

// PutOIDCProvider implements RoleBackend. RGW 16.2 changes no provider, so one of the issuer
// that exists (with other audiences) is deleted and made again.
func (b *RGWBackend) PutOIDCProvider(ctx context.Context, account string, p OIDCProviderSpec) (arn string, err error) {
	a, err := rgwRoleAccount(account)
	if err != nil {
		return "", err
	}
	form := url.Values{"Action": {"CreateOpenIDConnectProvider"}, "Url": {p.IssuerURL}}
	for i, aud := range p.Audiences {
		form.Set("ClientIDList.member."+strconv.Itoa(i+1), aud)
	}
	for i, t := range p.Thumbprints {
		form.Set("ThumbprintList.member."+strconv.Itoa(i+1), t)
	}
	err = b.withIAM(ctx, a, func(iam iamCall) error {
		data, err := iam(form)
		if isCode(err, "EntityAlreadyExists") {
			if err := deleteOIDCProvider(iam, a, p.IssuerURL); err != nil {
				return err
			}
			data, err = iam(form)
		}
		if err != nil {
			return err
		}
		var out struct {
			ARN string `xml:"CreateOpenIDConnectProviderResult>OpenIDConnectProviderArn"`
		}
		if err := xml.Unmarshal(data, &out); err != nil || out.ARN == "" {
			return fmt.Errorf("rgw CreateOpenIDConnectProvider answered no ARN: %v", err)
		}
		arn = out.ARN
		return nil
	})
	return arn, err
}

// DeleteOIDCProvider implements RoleBackend.
func (b *RGWBackend) DeleteOIDCProvider(ctx context.Context, account, issuerURL string) error {
	a, err := rgwRoleAccount(account)
	if err != nil {
		return err
	}
	return b.withIAM(ctx, a, func(iam iamCall) error { return deleteOIDCProvider(iam, a, issuerURL) })
}

func deleteOIDCProvider(iam iamCall, a rgwAccount, issuerURL string) error {
	_, err := iam(url.Values{"Action": {"DeleteOpenIDConnectProvider"},
		"OpenIDConnectProviderArn": {"arn:aws:iam::" + a.tenant + ":oidc-provider/" + rgwIssuerID(issuerURL)}})
	return goneIsDone(err)
}

// PutRole implements RoleBackend: the role with a trust policy of the account's provider for
// the subject, and one inline policy with the grants' statements. A role whose trust differs
// is deleted and made again (see the top of this file).
func (b *RGWBackend) PutRole(ctx context.Context, account, name string, r RoleSpec) (string, error) {
	a, err := rgwRoleAccount(account)
	if err != nil {
		return "", err
	}
	trust, policy, err := rgwRoleDocuments(a.tenant, r)
	if err != nil {
		return "", err
	}
	err = b.withIAM(ctx, a, func(iam iamCall) error {
		create := url.Values{"Action": {"CreateRole"}, "RoleName": {name}, "AssumeRolePolicyDocument": {trust}}
		_, err := iam(create)
		if isCode(err, "EntityAlreadyExists") {
			var same bool
			if same, err = roleTrusts(iam, name, trust); err == nil && !same {
				if err = deleteRole(iam, name); err == nil {
					_, err = iam(create)
				}
			}
		}
		if err != nil {
			return err
		}
		_, err = iam(url.Values{"Action": {"PutRolePolicy"}, "RoleName": {name}, "PolicyName": {rgwRolePolicyName}, "PolicyDocument": {policy}})
		return err
	})
	if err != nil {
		return "", err
	}
	return "arn:aws:iam::" + a.tenant + ":role/" + name, nil
}

// DeleteRole implements RoleBackend.
func (b *RGWBackend) DeleteRole(ctx context.Context, account, name string) error {
	a, err := rgwRoleAccount(account)
	if err != nil {
		return err
	}
	return b.withIAM(ctx, a, func(iam iamCall) error { return deleteRole(iam, name) })
}

// deleteRole deletes the role's policy first, since RGW keeps a role with one.
func deleteRole(iam iamCall, name string) error {
	_, err := iam(url.Values{"Action": {"DeleteRolePolicy"}, "RoleName": {name}, "PolicyName": {rgwRolePolicyName}})
	if err := goneIsDone(err); err != nil {
		return err
	}
	_, err = iam(url.Values{"Action": {"DeleteRole"}, "RoleName": {name}})
	return goneIsDone(err)
}

// roleTrusts reports whether role name's trust policy is trust.
func roleTrusts(iam iamCall, name, trust string) (bool, error) {
	data, err := iam(url.Values{"Action": {"GetRole"}, "RoleName": {name}})
	if err != nil {
		return false, err
	}
	var out struct {
		Trust string `xml:"GetRoleResult>Role>AssumeRolePolicyDocument"`
	}
	if err := xml.Unmarshal(data, &out); err != nil {
		return false, fmt.Errorf("reading rgw GetRole of %q: %w", name, err)
	}
	return bucketpolicy.PoliciesEqual(out.Trust, trust), nil
}

// deleteTenantRoles deletes every role and OpenID Connect provider of the account's tenant, and
// its IAM user, for its cancel: the tenant is the contract's alone. RGW answers NoSuchEntity
// to a listing of a tenant without roles, and without providers.
func (b *RGWBackend) deleteTenantRoles(ctx context.Context, a rgwAccount) error {
	if a.tenant == "" {
		return nil
	}
	uid := a.tenant + "$" + rgwIAMUser
	if _, err := b.api.GetUser(ctx, admin.User{ID: uid}); errors.Is(err, admin.ErrNoSuchUser) {
		return nil // it made every role and provider there is; none were made, or all are gone
	}
	err := b.withIAM(ctx, a, func(iam iamCall) error {
		data, err := iam(url.Values{"Action": {"ListRoles"}})
		if err = goneIsDone(err); err != nil {
			return err
		}
		var roles struct {
			Names []string `xml:"ListRolesResult>Roles>member>RoleName"`
		}
		if len(data) > 0 {
			if err := xml.Unmarshal(data, &roles); err != nil {
				return fmt.Errorf("reading rgw ListRoles of tenant %q: %w", a.tenant, err)
			}
		}
		for _, name := range roles.Names {
			if err := deleteRole(iam, name); err != nil {
				return fmt.Errorf("deleting role %q of tenant %q: %w", name, a.tenant, err)
			}
		}
		data, err = iam(url.Values{"Action": {"ListOpenIDConnectProviders"}})
		if err = goneIsDone(err); err != nil || len(data) == 0 {
			return err
		}
		var providers struct {
			ARNs []string `xml:"ListOpenIDConnectProvidersResult>OpenIDConnectProviderList>Arn>Arn"`
		}
		if err := xml.Unmarshal(data, &providers); err != nil {
			return fmt.Errorf("reading rgw ListOpenIDConnectProviders of tenant %q: %w", a.tenant, err)
		}
		for _, arn := range providers.ARNs {
			_, err := iam(url.Values{"Action": {"DeleteOpenIDConnectProvider"}, "OpenIDConnectProviderArn": {arn}})
			if err := goneIsDone(err); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := b.api.RemoveUser(ctx, admin.User{ID: uid}); err != nil && !errors.Is(err, admin.ErrNoSuchUser) {
		return fmt.Errorf("deleting rgw IAM user %q: %w", uid, err)
	}
	return nil
}

// rgwRoleAccount is the account of a contract with roles: one in a tenant of its own. Roles and
// providers of the default tenant would be every old contract's.
func rgwRoleAccount(account string) (rgwAccount, error) {
	a := rgwAccountOf(account)
	if a.tenant == "" {
		return a, fmt.Errorf("contract %s was made before tenants and shares RGW's default tenant, whose roles every such contract could assume: "+
			"buy a new contract for keyless access: %w", a.contractID(), ErrNotSupported)
	}
	return a, nil
}

// rgwIssuerID is how RGW names an issuer in a provider's ARN and in condition keys: its URL
// without the scheme.
func rgwIssuerID(issuerURL string) string {
	id := strings.TrimPrefix(strings.TrimPrefix(issuerURL, "https://"), "http://")
	return strings.TrimSuffix(id, "/")
}

// rgwRoleDocuments are a role's trust policy (the tenant's provider of r's issuer, r's subject
// and the provider's audiences) and its policy (r's grants, in the tenant's own buckets: RGW
// reads a bucket name without a tenant as one of the session's tenant).
func rgwRoleDocuments(tenant string, r RoleSpec) (trust, policy string, err error) {
	issuer := rgwIssuerID(r.Provider.IssuerURL)
	var aud any = r.Provider.Audiences
	if len(r.Provider.Audiences) == 1 {
		aud = r.Provider.Audiences[0]
	}
	t, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect":    "Allow",
			"Principal": map[string]any{"Federated": []string{"arn:aws:iam::" + tenant + ":oidc-provider/" + issuer}},
			"Action":    []string{"sts:AssumeRoleWithWebIdentity"},
			"Condition": map[string]any{"StringEquals": map[string]any{issuer + ":sub": r.Subject, issuer + ":app_id": aud}},
		}},
	})
	if err != nil {
		return "", "", err
	}
	stmts := []any{}
	for _, g := range r.Grants {
		stmts = append(stmts, bucketpolicy.IdentityStatements(g.Access, g.Prefix, awsResourcePrefix, g.Bucket)...)
	}
	p, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": stmts})
	return string(t), string(p), err
}

// goneIsDone reads the answer of a delete: a thing RGW does not know is deleted already.
func goneIsDone(err error) error {
	var bErr *backendError
	if errors.As(err, &bErr) && (bErr.Code == "NoSuchEntity" || bErr.Status == http.StatusNotFound) {
		return nil
	}
	return err
}

// isCode reports whether err is an answer of RGW with this error code.
func isCode(err error, code string) bool {
	var bErr *backendError
	return errors.As(err, &bErr) && bErr.Code == code
}
