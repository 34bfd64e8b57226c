package operator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDomains(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: "apps.example.com", want: []string{"apps.example.com"}},
		{in: " Apps.Example.com., *.shop.example ,, ", want: []string{"apps.example.com", "shop.example"}},
		{in: "apps.example.com,bad_domain", wantErr: `"bad_domain" is not a DNS domain`},
		{in: "*.{namespace}.apps.example.com", want: []string{"{namespace}.apps.example.com"}},
		{in: "{namespace}-apps.example.com", wantErr: `"{namespace}-apps.example.com" is not a DNS domain: {namespace} must be a whole label`},
		{in: "{name}.apps.example.com", wantErr: `"{name}.apps.example.com" is not a DNS domain`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDomains(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDomains(%q) error = %v, want one starting %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseDomains(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
