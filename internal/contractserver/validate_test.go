package contractserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// The limits of openapi/contract.yaml, at and past each bound; a refusal names the field.
func TestCreateEnforcesSpecLimits(t *testing.T) {
	backend := &fakeBackend{}
	ts := startServer(t, Config{Backend: backend})
	tests := []struct {
		name      string
		key       string
		body      string
		wantField string // "" for a request that must succeed
	}{
		{name: "display name of 256 characters, 512 bytes", key: "k1", body: `{"plan":"standard","displayName":"` + strings.Repeat("é", 256) + `"}`},
		{name: "display name of 257 characters", key: "k2", body: `{"plan":"standard","displayName":"` + strings.Repeat("x", 257) + `"}`, wantField: "displayName"},
		{name: "Idempotency-Key of 128 characters, 256 bytes", key: strings.Repeat("é", 128), body: `{"plan":"standard"}`},
		{name: "Idempotency-Key of 129 characters", key: strings.Repeat("k", 129), body: `{"plan":"standard"}`, wantField: "Idempotency-Key"},
		{name: "no Idempotency-Key", body: `{"plan":"standard"}`, wantField: "Idempotency-Key"},
		{name: "empty plan", key: "k3", body: `{"plan":""}`, wantField: "plan"},
		{name: "plan not a string", key: "k4", body: `{"plan":7}`, wantField: "plan"},
		{name: "not JSON", key: "k5", body: `plan=standard`, wantField: "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.http.URL+"/v1/contracts", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Content-Type", "application/json")
			if tt.key != "" {
				req.Header.Set("Idempotency-Key", tt.key)
			}
			httpResp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := contractapi.ParseCreateContractResponse(httpResp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantField == "" {
				if resp.JSON201 == nil {
					t.Fatalf("%s %s, want 201", resp.Status(), resp.Body)
				}
				return
			}
			wantProblem(t, tt.name, resp.HTTPResponse, resp.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
			if p := resp.ApplicationproblemJSON400; p != nil && (p.Detail == nil || !strings.Contains(*p.Detail, tt.wantField)) {
				t.Errorf("detail %q does not name %s", *p.Detail, tt.wantField)
			}
		})
	}
	if n := backend.callCount(); n != 2 {
		t.Errorf("backend called %d times, want 2: once for each valid request", n)
	}
}
