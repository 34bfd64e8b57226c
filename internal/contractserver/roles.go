package contractserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// Roles give keyless access: a workload exchanges a token of the OpenID Connect issuer its
// contract's account trusts for a session of a role (AssumeRoleWithWebIdentity at the
// contract's endpoint). They follow the pattern of topics: the provider and each role are
// recorded, pending, before the backend is asked, so a crash in between leaves a record that a
// repeated PUT finishes and a DELETE (or the contract's cancel) removes. Every call holds the
// contract's lock.
//
// What a tenant can choose is narrow: a role's name, the ServiceAccount subject, and grants in
// the account's own buckets. The issuer (where the provider fetches signing keys from) must be
// one the server allows (--allowed-oidc-issuers), and the trust and the policy are written by
// the server, never taken from the caller.

// RoleBackend is implemented by a backend with STS: roles a web-identity token assumes. A
// backend without it answers the calls 501 not-supported. Every method is idempotent.
type RoleBackend interface {
	// PutOIDCProvider makes the account trust p's issuer for p's audiences, replacing a
	// provider of the same issuer with other audiences, and returns its ARN.
	PutOIDCProvider(ctx context.Context, contractID string, p OIDCProviderSpec) (arn string, err error)
	// DeleteOIDCProvider removes the account's provider of issuerURL; one gone is no error.
	DeleteOIDCProvider(ctx context.Context, contractID, issuerURL string) error
	// PutRole makes role name (or changes it) to trust only r's subject with a token of r's
	// provider, and to do only what r's grants allow; it returns the role's ARN.
	PutRole(ctx context.Context, contractID, name string, r RoleSpec) (arn string, err error)
	// DeleteRole removes the role with its policy; one gone is no error.
	DeleteRole(ctx context.Context, contractID, name string) error
}

// OIDCProviderSpec is the issuer an account trusts.
type OIDCProviderSpec struct {
	IssuerURL   string
	Audiences   []string
	Thumbprints []string
}

// RoleSpec is who may assume a role (a token of Provider with sub Subject) and what it may do.
type RoleSpec struct {
	Provider OIDCProviderSpec
	Subject  string
	Grants   []RoleGrant
}

// RoleGrant is a role's access to one bucket of the account, under Prefix.
type RoleGrant struct {
	Bucket, Access, Prefix string
}

// storedOIDCProvider is the account's provider as stored in its contract's record.
type storedOIDCProvider struct {
	IssuerURL   string   `json:"issuerUrl"`
	Audiences   []string `json:"audiences"`
	Thumbprints []string `json:"thumbprints"`
	ARN         string   `json:"arn,omitempty"`
	State       string   `json:"state"`
	// Replaced is the issuer of a provider this one replaces, deleted at the backend once this
	// one is made.
	Replaced string `json:"replaced,omitempty"`
}

// storedRole is a role as stored in its contract's record.
type storedRole struct {
	Name      string      `json:"name"`
	Subject   string      `json:"subject"`
	Grants    []RoleGrant `json:"grants"`
	Issuer    string      `json:"issuer"`
	ARN       string      `json:"arn,omitempty"`
	State     string      `json:"state"`
	CreatedAt time.Time   `json:"createdAt"`
}

// role returns the role of this name, or nil.
func (r *record) role(name string) *storedRole {
	return named(r.Roles, name, func(x storedRole) string { return x.Name })
}

func (p *storedOIDCProvider) spec() OIDCProviderSpec {
	return OIDCProviderSpec{IssuerURL: p.IssuerURL, Audiences: p.Audiences, Thumbprints: p.Thumbprints}
}

// OIDCIssuersFlag is the contract server's flag that sets Config.OIDCIssuers.
const OIDCIssuersFlag = "allowed-oidc-issuers"

// lacksRoles ends the 501 of a backend without STS.
const lacksRoles = "has no STS: it cannot exchange a ServiceAccount token for credentials, so every access needs a key"

var (
	roleName    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	roleSubject = regexp.MustCompile(`^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
	bucketName  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	audience    = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)
	thumbprint  = regexp.MustCompile(`^[0-9A-Fa-f]{40}$`)
)

func invalid(format string, args ...any) *problem {
	return newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, format, args...)
}

// validateOIDCProvider checks what the generated server does not: the issuer's form, the
// audiences and thumbprints. Whether the issuer is allowed is checked after the 501.
func validateOIDCProvider(body *contractapi.OIDCProviderRequest) error {
	if body == nil {
		return invalid("the request needs a body with issuerUrl, audiences and thumbprints")
	}
	u, err := url.Parse(body.IssuerUrl)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || len(body.IssuerUrl) > 2048 {
		return invalid("issuerUrl must be an http:// or https:// URL of at most 2048 characters, without user, query or fragment")
	}
	if len(body.Audiences) < 1 || len(body.Audiences) > 5 || slices.ContainsFunc(body.Audiences, func(a string) bool { return !audience.MatchString(a) }) {
		return invalid("audiences are 1 to 5 strings of 1 to 255 printable ASCII characters without spaces")
	}
	if len(body.Thumbprints) < 1 || len(body.Thumbprints) > 5 || slices.ContainsFunc(body.Thumbprints, func(t string) bool { return !thumbprint.MatchString(t) }) {
		return invalid("thumbprints are 1 to 5 SHA-1 fingerprints of 40 hex digits")
	}
	return nil
}

// validateRole checks the name, the subject and each grant.
func validateRole(name string, body *contractapi.RoleRequest) ([]RoleGrant, error) {
	if !roleName.MatchString(name) {
		return nil, invalid("a role's name is 1 to 64 letters, digits, '-' and '_'")
	}
	if body == nil {
		return nil, invalid("the request needs a body with subject and grants")
	}
	if len(body.Subject) > 512 || !roleSubject.MatchString(body.Subject) {
		return nil, invalid("subject must be a ServiceAccount's, system:serviceaccount:<namespace>:<name>")
	}
	if len(body.Grants) < 1 || len(body.Grants) > 16 {
		return nil, invalid("grants are 1 to 16 buckets")
	}
	grants := make([]RoleGrant, 0, len(body.Grants))
	for i, g := range body.Grants {
		prefix := ""
		if g.Prefix != nil {
			prefix = *g.Prefix
		}
		switch {
		case !bucketName.MatchString(g.Bucket):
			return nil, invalid("grants[%d].bucket is not a bucket name", i)
		case !g.Access.Valid():
			return nil, invalid("grants[%d].access must be ReadOnly, ReadWrite or WriteOnly", i)
		case len(prefix) > 512 || slices.ContainsFunc([]rune(prefix), func(r rune) bool { return r < 0x20 || r == 0x7f || r == '*' || r == '?' }):
			return nil, invalid("grants[%d].prefix is at most 512 characters, without control characters or wildcards", i)
		}
		grants = append(grants, RoleGrant{Bucket: g.Bucket, Access: string(g.Access), Prefix: prefix})
	}
	return grants, nil
}

// PutOIDCProvider records the account's provider (pending), asks the backend for it, deletes
// the provider of an issuer it replaces, then records its ARN.
func (s *Server) PutOIDCProvider(ctx context.Context, req contractapi.PutOIDCProviderRequestObject) (contractapi.PutOIDCProviderResponseObject, error) {
	if err := validateOIDCProvider(req.Body); err != nil {
		return nil, err
	}
	rb, rec, unlock, err := inAccount[RoleBackend](s, req.Id, lacksRoles, s.activeContract)
	if err != nil {
		return nil, err
	}
	defer unlock()
	issuer := req.Body.IssuerUrl
	if err := s.oidcIssuers.CheckURL(issuer); err != nil {
		if na := (*egress.NotAllowedError)(nil); errors.As(err, &na) && na.Why != "" {
			return nil, invalid("issuerUrl %v", err)
		}
		return nil, invalid("issuerUrl %s is not an issuer this provider trusts: its contract server's --%s does not list it", issuer, OIDCIssuersFlag)
	}
	want := storedOIDCProvider{IssuerURL: issuer, Audiences: req.Body.Audiences, Thumbprints: req.Body.Thumbprints, State: topicPending}
	old := rec.OIDCProvider
	if old != nil && old.State == topicActive && old.IssuerURL == issuer && slices.Equal(old.Audiences, want.Audiences) && slices.Equal(old.Thumbprints, want.Thumbprints) {
		return contractapi.PutOIDCProvider200JSONResponse(toOIDCProvider(old)), nil
	}
	if old != nil && old.IssuerURL != issuer {
		want.Replaced = old.IssuerURL
	} else if old != nil {
		want.Replaced = old.Replaced
	}
	if rec, err = s.store.update(rec.ID, func(r *record) error { r.OIDCProvider = &want; return nil }); err != nil {
		return nil, fmt.Errorf("recording the OIDC provider of contract %s: %w", req.Id, err)
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	arn, err := rb.PutOIDCProvider(bctx, rec.account(), want.spec())
	if err != nil {
		return nil, backendProblem("making the OIDC provider", fmt.Errorf("making the OIDC provider of contract %s: %w", rec.ID, err))
	}
	if want.Replaced != "" {
		if err := rb.DeleteOIDCProvider(bctx, rec.account(), want.Replaced); err != nil {
			return nil, backendProblem("deleting the OIDC provider replaced", fmt.Errorf("deleting the OIDC provider replaced in contract %s: %w", rec.ID, err))
		}
	}
	rec, err = s.store.update(rec.ID, func(r *record) error {
		r.OIDCProvider.ARN, r.OIDCProvider.State, r.OIDCProvider.Replaced = arn, topicActive, ""
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking the OIDC provider of contract %s active: %w", req.Id, err)
	}
	s.log.Info("OIDC provider made", "contract", rec.ID, "issuer", issuer)
	if old != nil {
		return contractapi.PutOIDCProvider200JSONResponse(toOIDCProvider(rec.OIDCProvider)), nil
	}
	return contractapi.PutOIDCProvider201JSONResponse(toOIDCProvider(rec.OIDCProvider)), nil
}

// PutRole records the role (pending), asks the backend for it with the trust of the account's
// provider, then records its ARN. A role already as asked is answered without the backend.
func (s *Server) PutRole(ctx context.Context, req contractapi.PutRoleRequestObject) (contractapi.PutRoleResponseObject, error) {
	grants, err := validateRole(req.RoleName, req.Body)
	if err != nil {
		return nil, err
	}
	rb, rec, unlock, err := inAccount[RoleBackend](s, req.Id, lacksRoles, s.activeContract)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p := rec.OIDCProvider
	if p == nil || p.State != topicActive {
		return nil, newProblem(contractapi.ProblemInvalidRequest, http.StatusConflict,
			"contract %s trusts no OpenID Connect provider yet: put its oidc-provider first", rec.ID)
	}
	existing := rec.role(req.RoleName)
	if existing != nil && existing.State == topicActive && existing.Subject == req.Body.Subject &&
		existing.Issuer == p.IssuerURL && slices.Equal(existing.Grants, grants) {
		return contractapi.PutRole200JSONResponse(toRole(existing)), nil
	}
	if existing == nil && !within(len(rec.Roles), s.limits.Roles) {
		return nil, limitExceeded("contract %s has %d roles, the most this server allows; delete one first", rec.ID, len(rec.Roles))
	}
	rec, err = s.putNamed(ctx, rec.ID, "role", req.RoleName,
		func(r *record) {
			if x := r.role(req.RoleName); x != nil {
				x.Subject, x.Grants, x.Issuer, x.State = req.Body.Subject, grants, p.IssuerURL, topicPending
				return
			}
			r.Roles = append(r.Roles, storedRole{Name: req.RoleName, Subject: req.Body.Subject, Grants: grants,
				Issuer: p.IssuerURL, State: topicPending, CreatedAt: now()})
		},
		func(bctx context.Context, account string) (string, error) {
			return rb.PutRole(bctx, account, req.RoleName, RoleSpec{Provider: p.spec(), Subject: req.Body.Subject, Grants: grants})
		},
		func(r *record, arn string) {
			x := r.role(req.RoleName)
			x.ARN, x.State = arn, topicActive
		})
	if err != nil {
		return nil, err
	}
	s.log.Info("Role made", "contract", rec.ID, "role", req.RoleName, "subject", req.Body.Subject)
	if existing != nil {
		return contractapi.PutRole200JSONResponse(toRole(rec.role(req.RoleName))), nil
	}
	return contractapi.PutRole201JSONResponse(toRole(rec.role(req.RoleName))), nil
}

// DeleteRole removes the role at the backend, then its record; a crash in between is repaired
// by the next delete. A role the contract does not have is deleted already.
func (s *Server) DeleteRole(ctx context.Context, req contractapi.DeleteRoleRequestObject) (contractapi.DeleteRoleResponseObject, error) {
	rb, rec, unlock, err := inAccount[RoleBackend](s, req.Id, lacksRoles, s.visible)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if rec.role(req.RoleName) == nil {
		return contractapi.DeleteRole204Response{}, nil
	}
	err = s.deleteNamed(ctx, rec, "role", req.RoleName,
		func(bctx context.Context) error { return rb.DeleteRole(bctx, rec.account(), req.RoleName) },
		func(r *record) {
			r.Roles = slices.DeleteFunc(r.Roles, func(x storedRole) bool { return x.Name == req.RoleName })
		})
	if err != nil {
		return nil, err
	}
	return contractapi.DeleteRole204Response{}, nil
}

// deleteRoles removes every role of a contract and its OIDC provider at the backend, for its
// cancel. The caller forgets them.
func (s *Server) deleteRoles(ctx context.Context, rec *record) error {
	if len(rec.Roles) == 0 && rec.OIDCProvider == nil {
		return nil // also on a backend without STS
	}
	rb, err := capability[RoleBackend](s, lacksRoles)
	if err != nil {
		return err
	}
	for _, r := range rec.Roles {
		if err := rb.DeleteRole(ctx, rec.account(), r.Name); err != nil {
			return backendProblem("deleting the contract's roles", fmt.Errorf("deleting role %s of contract %s: %w", r.Name, rec.ID, err))
		}
	}
	if p := rec.OIDCProvider; p != nil {
		for _, issuer := range []string{p.Replaced, p.IssuerURL} {
			if issuer == "" {
				continue
			}
			if err := rb.DeleteOIDCProvider(ctx, rec.account(), issuer); err != nil {
				return backendProblem("deleting the contract's OIDC provider", fmt.Errorf("deleting the OIDC provider of contract %s: %w", rec.ID, err))
			}
		}
	}
	return nil
}

func toOIDCProvider(p *storedOIDCProvider) contractapi.OIDCProvider {
	return contractapi.OIDCProvider{Arn: p.ARN, IssuerUrl: p.IssuerURL, Audiences: p.Audiences}
}

func toRole(r *storedRole) contractapi.Role {
	return contractapi.Role{Name: r.Name, Arn: r.ARN, Subject: r.Subject}
}
