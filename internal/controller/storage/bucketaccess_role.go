package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
)

// TokenIssuer is the cluster's ServiceAccount token issuer, as a contract's account is made to
// trust it for BucketAccesses with authentication ServiceAccount (the manager's --oidc-* flags).
// Without a URL such a BucketAccess is refused (AuthenticationUnsupported).
type TokenIssuer struct {
	// URL is the issuer (the tokens' iss) the provider fetches the signing keys from, through
	// its /.well-known/openid-configuration.
	URL string
	// Audience is what the workload's token is minted for and the provider checks (aud).
	Audience string
	// Thumbprints are the SHA-1 fingerprints of the certificates serving the issuer's keys.
	Thumbprints []string
}

// roleName is the provider's name of a BucketAccess's role: of its UID, so a request whose
// answer was lost is made again under the same name, and deletion needs nothing but status.
func roleName(a *storagev1alpha1.BucketAccess) string { return "osm-" + string(a.UID) }

// roleSubject is the token subject the role trusts: the ServiceAccount of the BucketAccess's
// own namespace.
func roleSubject(a *storagev1alpha1.BucketAccess) string {
	return "system:serviceaccount:" + a.Namespace + ":" + a.Spec.ServiceAccountName
}

// keyless serves a BucketAccess with authentication ServiceAccount: no principal and no key.
// The request is recorded first, with its contract, so deletion finds a role whose answer was
// lost; then the contract's account is made to trust the token issuer, the role is put with
// the grants of spec.bucket or spec.buckets, and the Secret is written with the role's ARN and
// the endpoints. Both puts are idempotent and made each pass, which repairs a role changed or
// deleted outside the operator.
func (k accessKind) keyless(ctx context.Context, a *storagev1alpha1.BucketAccess, p *engine.Pass[*storagev1alpha1.BucketAccess],
	t *target, found accessFound) accessOutcome {
	if err := recordRequest(ctx, a, p, t.contract); err != nil {
		return found.end(nil, 0, fmt.Errorf("recording the request for a role: %w", err))
	}
	issuer := k.Issuer
	err := k.Roles.PutOIDCProvider(ctx, a.Status.ContractID, contractclient.OIDCProvider{
		IssuerURL: issuer.URL, Audiences: []string{issuer.Audience}, Thumbprints: issuer.Thumbprints})
	if err != nil {
		return k.roleFailed(found, err)
	}
	grants := make([]contractclient.RoleGrant, 0, len(t.buckets))
	var names []string
	for _, b := range t.buckets {
		grants = append(grants, contractclient.RoleGrant{Bucket: b.bucket.Status.BucketName, Access: string(b.Access), Prefix: string(b.Prefix)})
		names = append(names, b.bucket.Status.BucketName)
	}
	arn, err := k.Roles.PutRole(ctx, a.Status.ContractID, roleName(a), roleSubject(a), grants)
	if err != nil {
		return k.roleFailed(found, err)
	}
	if arn != a.Status.RoleARN {
		k.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "RoleCreated", "Create",
			"Made role %s in the account of contract %s, assumed by the tokens of ServiceAccount %s", arn, a.Status.ContractID, a.Spec.ServiceAccountName)
		a.Status.RoleARN = arn
	}
	conn := credentials.Connection{Endpoint: t.contract.Status.Endpoint, Region: t.contract.Status.Region}
	want := credentials.Secret{
		Name:     a.SecretNameOrDefault(),
		Labels:   map[string]string{storagev1alpha1.ContractLabel: t.contract.Name, storagev1alpha1.BucketAccessLabel: a.Name},
		Rendered: credentials.Role(conn, arn, issuer.Audience),
		What:     "the role for buckets " + strings.Join(names, ", "),
	}
	if _, err := k.secrets().Write(ctx, a, t.secret, want); err != nil {
		return k.secretFailed(found, a, err)
	}
	return found.end(roleIssued{}, engine.ResyncAfter(k.ResyncPeriod), nil)
}

// roleFailed ends a pass on a failed role call: a provider without STS (versitygw) is
// AuthenticationUnsupported, looked at again after the resync period, without an error to back
// off from; other failures go as engine.APIFailure says.
func (k accessKind) roleFailed(found accessFound, err error) accessOutcome {
	if errors.Is(err, contractclient.ErrNotSupported) {
		return found.end(authenticationUnsupported{provider: true, detail: err}, engine.WaitingRetry(k.ResyncPeriod), nil)
	}
	apiErr, after, err := engine.APIFailure(err)
	if apiErr == nil {
		return found.end(nil, 0, err)
	}
	return found.end(accessAPIFailed{apiErr}, after, err)
}

// deleteRole deletes a keyless BucketAccess's role, one whose answer was lost included (its name
// is of the UID): a role outlives nothing. A provider without STS, or a contract gone, has none
// to delete. done says the pass ends with out.
func (k accessKind) deleteRole(ctx context.Context, a *storagev1alpha1.BucketAccess, found accessFound) (accessOutcome, bool) {
	if !a.Status.PrincipalRequested {
		return accessOutcome{}, false
	}
	err := k.Roles.DeleteRole(ctx, a.Status.ContractID, roleName(a))
	switch {
	case err == nil:
		if a.Status.RoleARN != "" {
			k.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "RoleDeleted", "Delete",
				"Deleted role %s: tokens of ServiceAccount %s no longer get credentials", a.Status.RoleARN, a.Spec.ServiceAccountName)
		}
	case errors.Is(err, contractclient.ErrNotSupported), errors.Is(err, contractclient.ErrNotFound):
		// Nothing was ever made there, or the contract is gone with its roles.
	default:
		return k.roleFailed(found, err), true
	}
	a.Status.RoleARN = ""
	return accessOutcome{}, false
}

type (
	// authenticationUnsupported: authentication ServiceAccount cannot be served, because the
	// manager has no token issuer (provider false) or the provider has no STS (detail).
	authenticationUnsupported struct {
		provider bool
		detail   error
	}
	// roleIssued: the Secret holds the role's ARN.
	roleIssued struct{}
)

func (f authenticationUnsupported) ready(a *storagev1alpha1.BucketAccess, _ []keyCheck) *engine.Condition {
	if !f.provider {
		return engine.False(storagev1alpha1.ReasonAuthenticationUnsupported,
			"Authentication ServiceAccount needs the cluster's ServiceAccount token issuer, and the manager has none: "+
				"the platform sets --oidc-issuer-url (with --oidc-thumbprints) on the manager (docs/bucketaccess.md). Nothing was issued.")
	}
	why := "the provider has no STS"
	if apiErr, ok := contractclient.AsError(f.detail); ok {
		why = apiErr.Summary()
	}
	return engine.False(storagev1alpha1.ReasonAuthenticationUnsupported, fmt.Sprintf(
		"The provider cannot serve authentication ServiceAccount for contract %s (%s); nothing was issued. "+
			"Use authentication Key (a new BucketAccess), or a provider with STS such as Ceph RGW.", a.Status.ContractID, strings.TrimSuffix(why, ".")))
}

func (roleIssued) ready(a *storagev1alpha1.BucketAccess, _ []keyCheck) *engine.Condition {
	return engine.True(storagev1alpha1.ReasonAvailable, fmt.Sprintf(
		"Role %s and the endpoints are in Secret %s: tokens of ServiceAccount %s assume it at the provider's STS.",
		a.Status.RoleARN, a.SecretNameOrDefault(), a.Spec.ServiceAccountName))
}
