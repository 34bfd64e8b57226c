package localenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // RGW and IAM name a certificate by its SHA-1 fingerprint
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"time"
)

// OIDCIssuer serves OpenID Connect discovery for a cluster's ServiceAccount signing key, in the
// form Ceph RGW 16.2 takes: it fetches <issuer>/.well-known/openid-configuration and the
// jwks_uri there at every AssumeRoleWithWebIdentity, and accepts only keys that carry an x5c
// certificate, which kube-apiserver's own JWKS never has. So the issuer is this server, on
// 127.0.0.1, and kube-apiserver's --service-account-issuer names it; the key is RSA, as the
// tokens are RS256.
type OIDCIssuer struct {
	// URL is the issuer: what tokens carry as iss, with no trailing slash.
	URL string
	// Thumbprint is the SHA-1 fingerprint of the certificate in the JWKS, 40 upper-case hex
	// digits, as IAM's CreateOpenIDConnectProvider takes it.
	Thumbprint string
	// KeyID is the key's kid, as kube-apiserver computes it (the base64url SHA-256 of the public
	// key's PKIX form), so tokens it signs name this key.
	KeyID string

	srv *http.Server
}

// StartOIDCIssuer serves discovery for key's public half on a free port of 127.0.0.1.
func StartOIDCIssuer(key *rsa.PrivateKey) (*OIDCIssuer, error) {
	if key == nil {
		return nil, errors.New("oidc issuer: no key")
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(pub)
	// A certificate for the key, signed by the key itself: RGW reads the public key from x5c.
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "service-account-signer"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("oidc issuer certificate: %w", err)
	}
	fp := sha1.Sum(cert) //nolint:gosec // a fingerprint, not a signature
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	i := &OIDCIssuer{
		URL:        "http://" + ln.Addr().String(),
		Thumbprint: strings.ToUpper(hex.EncodeToString(fp[:])),
		KeyID:      base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	discovery, _ := json.Marshal(map[string]any{
		"issuer":                                i.URL,
		"jwks_uri":                              i.URL + "/openid/v1/jwks",
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
	})
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "RSA", "alg": "RS256", "use": "sig", "kid": i.KeyID,
		"n":   base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e":   base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		"x5c": []string{base64.StdEncoding.EncodeToString(cert)},
	}}})
	mux := http.NewServeMux()
	serve := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}
	}
	mux.Handle("GET /.well-known/openid-configuration", serve(discovery))
	mux.Handle("GET /openid/v1/jwks", serve(jwks))
	i.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = i.srv.Serve(ln) }()
	return i, nil
}

// Stop stops serving.
func (i *OIDCIssuer) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return i.srv.Shutdown(ctx)
}
