package operator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	storagecontroller "github.com/object-storage-manager/object-storage-manager/internal/controller/storage"
)

func TestTokenIssuer(t *testing.T) {
	const tp = "0123456789ABCDEF0123456789abcdef01234567"
	tests := []struct {
		name    string
		opts    Options
		want    storagecontroller.TokenIssuer
		wantErr string
	}{
		{name: "none: keyless BucketAccesses are refused", opts: Options{}},
		{name: "issuer with the default audience", opts: Options{OIDCIssuerURL: "https://oidc.example.com/cluster/", OIDCThumbprints: []string{tp}},
			want: storagecontroller.TokenIssuer{URL: "https://oidc.example.com/cluster", Audience: DefaultTokenAudience, Thumbprints: []string{tp}}},
		{name: "issuer with an audience", opts: Options{OIDCIssuerURL: "http://127.0.0.1:8443", OIDCAudience: "rgw", OIDCThumbprints: []string{tp}},
			want: storagecontroller.TokenIssuer{URL: "http://127.0.0.1:8443", Audience: "rgw", Thumbprints: []string{tp}}},
		{name: "thumbprints without an issuer", opts: Options{OIDCThumbprints: []string{tp}}, wantErr: "--oidc-thumbprints is set without --oidc-issuer-url"},
		{name: "no thumbprint", opts: Options{OIDCIssuerURL: "https://oidc.example.com"}, wantErr: "needs 1 to 5 SHA-1 fingerprints"},
		{name: "a thumbprint that is none", opts: Options{OIDCIssuerURL: "https://oidc.example.com", OIDCThumbprints: []string{"abc"}},
			wantErr: `"abc" is not a SHA-1 fingerprint`},
		{name: "not a URL", opts: Options{OIDCIssuerURL: "oidc.example.com", OIDCThumbprints: []string{tp}}, wantErr: "is not an issuer URL"},
		{name: "a query", opts: Options{OIDCIssuerURL: "https://oidc.example.com/?x=1", OIDCThumbprints: []string{tp}}, wantErr: "is not an issuer URL"},
		{name: "an audience with a space", opts: Options{OIDCIssuerURL: "https://oidc.example.com", OIDCAudience: "a b", OIDCThumbprints: []string{tp}},
			wantErr: "an audience is 1 to 255 printable ASCII characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TokenIssuer(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
