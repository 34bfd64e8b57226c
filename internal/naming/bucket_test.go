package naming

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateBucketName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "simple", in: "team-a-backups"},
		{name: "dots and digits", in: "logs.2024.example"},
		{name: "shortest", in: "abc"},
		{name: "longest", in: strings.Repeat("a", 63)},
		{name: "looks like an IP with a letter", in: "192.168.5.a"},
		{name: "reserved word inside", in: "my-xn--bucket"},
		{name: "empty", in: "", want: []string{
			"must be 3 to 63 characters long (is 0)",
		}},
		{name: "too short", in: "ab", want: []string{
			"must be 3 to 63 characters long (is 2)",
		}},
		{name: "too long", in: strings.Repeat("a", 64), want: []string{
			"must be 3 to 63 characters long (is 64)",
		}},
		{name: "uppercase and underscore", in: "Bad_Name", want: []string{
			"must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'B', '_', 'N'",
			"must start and end with a lowercase letter or digit",
		}},
		{name: "each bad character once", in: "a b c", want: []string{
			"must contain only lowercase letters, digits, dots (.) and hyphens (-), not ' '",
		}},
		{name: "non-ASCII", in: "bücket", want: []string{
			"must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'ü'",
		}},
		{name: "starts with a hyphen", in: "-bucket", want: []string{
			"must start and end with a lowercase letter or digit",
		}},
		{name: "ends with a dot", in: "bucket.", want: []string{
			"must start and end with a lowercase letter or digit",
		}},
		{name: "adjacent dots", in: "my..bucket", want: []string{
			"must not contain two adjacent dots (..)",
		}},
		{name: "IP address", in: "192.168.5.4", want: []string{
			"must not be formatted as an IP address",
		}},
		{name: "IP shape out of range", in: "999.1.1.1", want: []string{
			"must not be formatted as an IP address",
		}},
		{name: "punycode prefix", in: "xn--bucket", want: []string{
			`must not start with "xn--" (reserved by S3)`,
		}},
		{name: "sthree prefix", in: "sthree-bucket", want: []string{
			`must not start with "sthree-" (reserved by S3)`,
		}},
		{name: "demo prefix", in: "amzn-s3-demo-bucket", want: []string{
			`must not start with "amzn-s3-demo-" (reserved by S3)`,
		}},
		{name: "access point alias suffix", in: "bucket-s3alias", want: []string{
			`must not end with "-s3alias" (reserved by S3)`,
		}},
		{name: "object lambda suffix", in: "bucket--ol-s3", want: []string{
			`must not end with "--ol-s3" (reserved by S3)`,
		}},
		{name: "several rules at once", in: "xn--A..b-", want: []string{
			"must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'A'",
			"must start and end with a lowercase letter or digit",
			"must not contain two adjacent dots (..)",
			`must not start with "xn--" (reserved by S3)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateBucketName(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateBucketName(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
