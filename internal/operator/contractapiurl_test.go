package operator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The operator sends its bearer token on every call and receives secret keys: it refuses plain
// http to another machine unless told so in so many words, and the refusal names the flag.
func TestNewContractAPIClientRefusesPlainHTTPToAnotherMachine(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url           string
		allowInsecure bool
		wantErr       string // "" for none
	}{
		{url: "https://contracts.example.com"},
		{url: "https://10.0.0.7:8090/api"},
		{url: "http://127.0.0.1:8090"},
		{url: "http://127.1.2.3:8090"},
		{url: "http://[::1]:8090"},
		{url: "http://localhost:8090"},
		{url: "http://contracts.example.com", wantErr: "--contract-api-allow-insecure-http"},
		{url: "http://contract-server.osm-system.svc:8090", wantErr: "is plain http to contract-server.osm-system.svc, which is not this machine"},
		{url: "http://10.0.0.7:8090", wantErr: "Use https, or set --contract-api-allow-insecure-http"},
		{url: "http://localhost.example.com", wantErr: "--contract-api-allow-insecure-http"},
		{url: "http://contracts.example.com", allowInsecure: true},
		{url: "http://10.0.0.7:8090", allowInsecure: true},
		{url: "", wantErr: "the contract API URL is not set (--contract-api-url)"},
		{url: "contracts.example.com:8090", wantErr: "--contract-api-url"},
		{url: "ftp://contracts.example.com", wantErr: "is not an https:// or http:// URL with a host"},
		{url: "https:///v1", wantErr: "is not an https:// or http:// URL with a host"},
	}
	for _, tt := range tests {
		_, err := NewContractAPIClient(Options{ContractAPIURL: tt.url, ContractAPITokenFile: tokenFile,
			ContractAPITimeout: time.Second, ContractAPIAllowInsecureHTTP: tt.allowInsecure})
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%q (allow insecure %v): %v, want it accepted", tt.url, tt.allowInsecure, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%q (allow insecure %v): %v, want an error saying %q", tt.url, tt.allowInsecure, err, tt.wantErr)
		}
	}
}
