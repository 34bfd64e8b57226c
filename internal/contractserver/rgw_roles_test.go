package contractserver

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// TestRGWRoles exchanges ServiceAccount-shaped tokens for sessions of roles the server made on
// the real RGW 16.2 (radosgw with STS, as localenv starts it), and checks who is refused.
func TestRGWRoles(t *testing.T) {
	ceph := startCephWith(t, localenv.CephOptions{STS: true})
	b, err := NewRGWBackend(RGWConfig{Endpoint: ceph.Endpoint, Region: ceph.Region,
		AdminAccessKey: ceph.AdminAccessKey, AdminSecretKey: ceph.AdminSecretKey})
	if err != nil {
		t.Fatalf("NewRGWBackend: %v", err)
	}
	key, otherKey := rsaKey(t), rsaKey(t)
	iss, err := localenv.StartOIDCIssuer(key)
	if err != nil {
		t.Fatalf("StartOIDCIssuer: %v", err)
	}
	t.Cleanup(func() { _ = iss.Stop() })
	ts := startServer(t, Config{Backend: b, OIDCIssuers: allow(t, iss.URL)})
	ctx := t.Context()
	const aud, subA = "osm-test", "system:serviceaccount:ns-a:sa-a"

	a, other := serverAccount(t, b, ts, "uid-roles-a"), serverAccount(t, b, ts, "uid-roles-b")
	elsewhere := "else-" + a.id
	for _, bucket := range []string{a.bucket, elsewhere} {
		if err := rgwPutObject(ctx, a.s3, bucket, "seed", 4); err != nil {
			t.Fatalf("seeding %s: %v", bucket, err)
		}
	}
	provider := contractapi.OIDCProviderRequest{IssuerUrl: iss.URL, Audiences: []string{aud}, Thumbprints: []string{iss.Thumbprint}}
	reader := contractapi.RoleRequest{Subject: subA, Grants: []contractapi.RoleGrant{{Bucket: a.bucket, Access: contractapi.ReadOnly}}}

	t.Run("an issuer the server does not allow is refused", func(t *testing.T) {
		p := provider
		p.IssuerUrl = "http://127.0.0.1:1"
		resp, err := ts.client.PutOIDCProviderWithResponse(ctx, a.id, p)
		if err != nil {
			t.Fatal(err)
		}
		wantProblem(t, "putOIDCProvider", resp.HTTPResponse, resp.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
	})
	t.Run("a role before the account trusts a provider is refused", func(t *testing.T) {
		resp, err := ts.client.PutRoleWithResponse(ctx, other.id, "reader", reader)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != http.StatusConflict {
			t.Fatalf("putRole without a provider: %s, want 409: %s", resp.Status(), resp.Body)
		}
	})

	var roleARN string
	t.Run("the provider and the role are made once", func(t *testing.T) {
		for i, want := range []int{http.StatusCreated, http.StatusOK} {
			resp, err := ts.client.PutOIDCProviderWithResponse(ctx, a.id, provider)
			if err != nil || resp.StatusCode() != want {
				t.Fatalf("putOIDCProvider %d: %v %s, want %d: %s", i+1, err, resp.Status(), want, resp.Body)
			}
		}
		for i, want := range []int{http.StatusCreated, http.StatusOK} {
			resp, err := ts.client.PutRoleWithResponse(ctx, a.id, "reader", reader)
			if err != nil || resp.StatusCode() != want {
				t.Fatalf("putRole %d: %v %s, want %d: %s", i+1, err, resp.Status(), want, resp.Body)
			}
			role := resp.JSON201
			if role == nil {
				role = resp.JSON200
			}
			roleARN = role.Arn
		}
		if want := "arn:aws:iam::" + a.id + ":role/reader"; roleARN != want {
			t.Errorf("role ARN %q, want %q", roleARN, want)
		}
	})

	t.Run("the subject's token reads its bucket and nothing else", func(t *testing.T) {
		session := exchange(t, ceph.Endpoint, roleARN, mintToken(t, key, iss, subA, aud))
		s3c := sessionS3(ceph, session)
		if _, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(a.bucket), Key: aws.String("seed")}); err != nil {
			t.Errorf("reading its bucket: %v", err)
		}
		for what, err := range map[string]error{
			"writing its bucket":     putErr(ctx, s3c, a.bucket),
			"reading another bucket": getErr(ctx, s3c, elsewhere),
			"listing another bucket": listObjectsErr(ctx, s3c, elsewhere),
		} {
			if code := apiCode(err); code != "AccessDenied" {
				t.Errorf("%s: %v, want AccessDenied", what, err)
			}
		}
		// Named as an anonymous request names a bucket of another tenant (the SDK escapes the
		// colon): RGW 16.2 answers a session NoSuchBucket there, as for a bucket of its own tenant.
		raw := &signedClient{service: "s3", region: ceph.Region, creds: session, http: http.DefaultClient, signer: v4.NewSigner()}
		if _, err := raw.do(ctx, "GetObject", http.MethodGet, ceph.Endpoint+"/"+other.id+":"+other.bucket+"/seed", "", nil); !isCode(err, "AccessDenied") && !isCode(err, "NoSuchBucket") {
			t.Errorf("reading another contract's bucket as <tenant>:<bucket>: %v, want AccessDenied or NoSuchBucket", err)
		}
		// A bucket's name alone is one of the session's own tenant, where the other contract's is not.
		if code := apiCode(getErr(ctx, s3c, other.bucket)); code != "NoSuchBucket" {
			t.Errorf("reading another contract's bucket by its name: %s, want NoSuchBucket", code)
		}
	})

	t.Run("a token of another subject, audience or key is refused", func(t *testing.T) {
		for what, token := range map[string]string{
			"another ServiceAccount": mintToken(t, key, iss, "system:serviceaccount:ns-a:sa-b", aud),
			"another namespace":      mintToken(t, key, iss, "system:serviceaccount:ns-b:sa-a", aud),
			"another audience":       mintToken(t, key, iss, subA, "sts.amazonaws.com"),
			"another signing key":    mintToken(t, otherKey, iss, subA, aud),
		} {
			if err := tryExchange(ceph.Endpoint, roleARN, token); err == nil {
				t.Errorf("%s: exchanged, want refused", what)
			}
		}
	})

	t.Run("the trust's audience condition is checked, not only the provider's audiences", func(t *testing.T) {
		// A role whose trust wants another app_id than the token's aud, which the provider
		// accepts: only the condition can refuse it.
		spec := RoleSpec{Provider: OIDCProviderSpec{IssuerURL: iss.URL, Audiences: []string{"not-" + aud}}, Subject: subA,
			Grants: []RoleGrant{{Bucket: a.bucket, Access: "ReadOnly"}}}
		trust, _, err := rgwRoleDocuments(a.id, spec)
		if err != nil {
			t.Fatal(err)
		}
		err = b.withIAM(ctx, rgwAccountOf(a.contract.Id+"$contract-"+a.contract.Id), func(iam iamCall) error {
			_, err := iam(url.Values{"Action": {"CreateRole"}, "RoleName": {"other-audience"}, "AssumeRolePolicyDocument": {trust}})
			return err
		})
		if err != nil {
			t.Fatalf("CreateRole: %v", err)
		}
		arn := "arn:aws:iam::" + a.id + ":role/other-audience"
		if err := tryExchange(ceph.Endpoint, arn, mintToken(t, key, iss, subA, aud)); err == nil {
			t.Errorf("a token exchanged for a role whose trust names another audience")
		}
		if err := b.DeleteRole(ctx, a.contract.Id+"$contract-"+a.contract.Id, "other-audience"); err != nil {
			t.Fatalf("DeleteRole: %v", err)
		}
	})

	t.Run("a contract's own keys make no role and no provider", func(t *testing.T) {
		iam := newSignedClient("iam", ceph.Region, a.creds.AccessKeyID, a.creds.SecretAccessKey, http.DefaultClient)
		for _, form := range []url.Values{
			{"Action": {"CreateRole"}, "RoleName": {"mine"}, "AssumeRolePolicyDocument": {`{"Version":"2012-10-17","Statement":[]}`}},
			{"Action": {"CreateOpenIDConnectProvider"}, "Url": {"http://127.0.0.1:2"}, "ClientIDList.member.1": {"x"},
				"ThumbprintList.member.1": {strings.Repeat("0", 40)}},
			{"Action": {"DeleteRolePolicy"}, "RoleName": {"reader"}, "PolicyName": {rgwRolePolicyName}},
		} {
			_, err := iam.do(ctx, form.Get("Action"), http.MethodPost, ceph.Endpoint+"/", "application/x-www-form-urlencoded", []byte(form.Encode()))
			if !isCode(err, "AccessDenied") {
				t.Errorf("%s with the contract's keys: %v, want AccessDenied", form.Get("Action"), err)
			}
		}
	})

	t.Run("another subject replaces the trust; deleting the role ends every exchange and session", func(t *testing.T) {
		session := exchange(t, ceph.Endpoint, roleARN, mintToken(t, key, iss, subA, aud))
		moved := reader
		moved.Subject = "system:serviceaccount:ns-a:sa-b"
		if resp, err := ts.client.PutRoleWithResponse(ctx, a.id, "reader", moved); err != nil || resp.StatusCode() != http.StatusOK {
			t.Fatalf("putRole with another subject: %v %s", err, resp.Body)
		}
		if err := tryExchange(ceph.Endpoint, roleARN, mintToken(t, key, iss, subA, aud)); err == nil {
			t.Errorf("the old subject's token exchanged after the trust moved")
		}
		exchange(t, ceph.Endpoint, roleARN, mintToken(t, key, iss, moved.Subject, aud))

		if resp, err := ts.client.DeleteRoleWithResponse(ctx, a.id, "reader"); err != nil || resp.StatusCode() != http.StatusNoContent {
			t.Fatalf("deleteRole: %v %s", err, resp.Body)
		}
		if err := tryExchange(ceph.Endpoint, roleARN, mintToken(t, key, iss, moved.Subject, aud)); err == nil {
			t.Errorf("a token exchanged for a deleted role")
		}
		if err := getErr(ctx, sessionS3(ceph, session), a.bucket); err == nil {
			t.Errorf("a session of the deleted role still reads")
		}
		if resp, err := ts.client.DeleteRoleWithResponse(ctx, a.id, "reader"); err != nil || resp.StatusCode() != http.StatusNoContent {
			t.Fatalf("deleteRole again: %v %s", err, resp.Body)
		}
	})

	t.Run("a cancel takes the tenant's roles and provider with it", func(t *testing.T) {
		if resp, err := ts.client.PutRoleWithResponse(ctx, a.id, "reader", reader); err != nil || resp.StatusCode() != http.StatusCreated {
			t.Fatalf("putRole: %v %s", err, resp.Body)
		}
		force := true
		if resp, err := ts.client.CancelContractWithResponse(ctx, a.id, &contractapi.CancelContractParams{Force: &force}); err != nil || resp.StatusCode() != http.StatusNoContent {
			t.Fatalf("cancel: %v %s", err, resp.Body)
		}
		if err := tryExchange(ceph.Endpoint, roleARN, mintToken(t, key, iss, subA, aud)); err == nil {
			t.Errorf("a token exchanged for a role of a cancelled contract")
		}
		// The tenant's IAM user went with it; a new one says what is left in the tenant.
		err := b.withIAM(ctx, rgwAccount{tenant: a.id}, func(iam iamCall) error {
			if roles, err := iam(url.Values{"Action": {"ListRoles"}}); !isCode(err, "NoSuchEntity") {
				t.Errorf("ListRoles in the cancelled contract's tenant: %v %s, want NoSuchEntity (none)", err, roles)
			}
			if providers, err := iam(url.Values{"Action": {"ListOpenIDConnectProviders"}}); !isCode(err, "NoSuchEntity") {
				t.Errorf("ListOpenIDConnectProviders in the cancelled contract's tenant: %v %s, want NoSuchEntity (none)", err, providers)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("asking the cancelled contract's tenant: %v", err)
		}
	})
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// mintToken signs an RS256 token as kube-apiserver does for a ServiceAccount, an hour long.
func mintToken(t *testing.T, key *rsa.PrivateKey, iss *localenv.OIDCIssuer, sub, aud string) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now()
	in := enc(map[string]any{"alg": "RS256", "kid": iss.KeyID, "typ": "JWT"}) + "." +
		enc(map[string]any{"iss": iss.URL, "sub": sub, "aud": []string{aud}, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// tryExchange asks RGW's STS for a session of role with token, as an SDK does with
// AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE: an unsigned AssumeRoleWithWebIdentity.
func tryExchange(endpoint, role, token string) error {
	_, err := assumeRoleWithWebIdentity(endpoint, role, token)
	return err
}

func exchange(t *testing.T, endpoint, role, token string) aws.Credentials {
	t.Helper()
	c, err := assumeRoleWithWebIdentity(endpoint, role, token)
	if err != nil {
		t.Fatalf("AssumeRoleWithWebIdentity: %v", err)
	}
	return c
}

func assumeRoleWithWebIdentity(endpoint, role, token string) (aws.Credentials, error) {
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"}, "RoleArn": {role},
		"RoleSessionName": {"test"}, "WebIdentityToken": {token}}
	resp, err := http.Post(endpoint+"/", "application/x-www-form-urlencoded", bytes.NewReader([]byte(form.Encode())))
	if err != nil {
		return aws.Credentials{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return aws.Credentials{}, fmt.Errorf("AssumeRoleWithWebIdentity: %s", resp.Status)
	}
	var out struct {
		AccessKeyID     string `xml:"AssumeRoleWithWebIdentityResult>Credentials>AccessKeyId"`
		SecretAccessKey string `xml:"AssumeRoleWithWebIdentityResult>Credentials>SecretAccessKey"`
		SessionToken    string `xml:"AssumeRoleWithWebIdentityResult>Credentials>SessionToken"`
	}
	if err := xml.Unmarshal(data, &out); err != nil || out.SessionToken == "" {
		return aws.Credentials{}, errors.New("AssumeRoleWithWebIdentity answered no credentials")
	}
	return aws.Credentials{AccessKeyID: out.AccessKeyID, SecretAccessKey: out.SecretAccessKey, SessionToken: out.SessionToken}, nil
}

func sessionS3(ceph *localenv.Ceph, c aws.Credentials) *s3.Client {
	return s3.New(s3.Options{BaseEndpoint: aws.String(ceph.Endpoint), Region: ceph.Region, UsePathStyle: true, RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)})
}

func getErr(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("seed")})
	return err
}

func putErr(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("new"), Body: strings.NewReader("x")})
	return err
}

func listObjectsErr(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	return err
}

func apiCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
