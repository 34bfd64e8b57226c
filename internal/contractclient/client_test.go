package contractclient_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// What the API says about a contract's policy forms and keys reaches the caller as the
// package's own types, so no caller depends on the generated code.
func TestGetTurnsTheAPIsContractIntoDomainTypes(t *testing.T) {
	tests := []struct {
		name string
		body string
		want contractclient.Contract
	}{
		{name: "a provider that says nothing: the AWS forms, rotation left to addKey",
			body: `{"id":"c1","state":"active","endpoint":"https://s3.test","region":"r","plan":"p","createdAt":"2025-01-01T00:00:00Z",
				"accessKeys":[{"accessKeyId":"AK1","createdAt":"2025-01-01T00:00:00Z"}]}`,
			want: contractclient.Contract{ID: "c1", State: "active", Endpoint: "https://s3.test", Region: "r", Plan: "p", AccessKeyIDs: []string{"AK1"}}},
		{name: "a provider with its own policy forms whose accounts rotate keys",
			body: `{"id":"c1","state":"active","endpoint":"https://s3.test","region":"r","plan":"p","createdAt":"2025-01-01T00:00:00Z","accessKeys":[],
				"bucketPolicy":{"resourcePrefix":"arn:aws:s3:::","ownerPrincipal":{"AWS":"AK1"},"ownerNeedsAllow":true},
				"keyRotation":{"supported":true}}`,
			want: contractclient.Contract{ID: "c1", State: "active", Endpoint: "https://s3.test", Region: "r", Plan: "p", AccessKeyIDs: []string{},
				PolicyForm: &contractclient.PolicyForm{ResourcePrefix: "arn:aws:s3:::", OwnerPrincipal: map[string]string{"AWS": "AK1"}, OwnerNeedsAllow: true}}},
		{name: "a provider whose accounts hold one key pair, and says why",
			body: `{"id":"c1","state":"active","endpoint":"https://s3.test","region":"r","plan":"p","createdAt":"2025-01-01T00:00:00Z","accessKeys":[],
				"keyRotation":{"supported":false,"detail":"versitygw accounts hold one key pair"}}`,
			want: contractclient.Contract{ID: "c1", State: "active", Endpoint: "https://s3.test", Region: "r", Plan: "p", AccessKeyIDs: []string{},
				OneKeyOnly: true, OneKeyOnlyReason: "versitygw accounts hold one key pair"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cannedAPI(t, http.StatusOK, "application/json", tt.body)
			got, err := c.Get(t.Context(), "c1")
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
			single, why := got.SingleKey()
			if single != tt.want.OneKeyOnly || why != tt.want.OneKeyOnlyReason {
				t.Errorf("SingleKey() = %v, %q; want %v, %q", single, why, tt.want.OneKeyOnly, tt.want.OneKeyOnlyReason)
			}
		})
	}
}

// cannedAPI is a client for a server on 127.0.0.1 that answers every request with status and
// body.
func cannedAPI(t *testing.T, status int, contentType, body string) *contractclient.Client {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(hs.Close)
	gen, err := contractapi.NewClientWithResponses(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	return contractclient.New(gen)
}
