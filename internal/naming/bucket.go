// Package naming holds the naming rules of the systems the operator talks to, as pure functions
// that the admission webhooks and the controllers share.
package naming

import (
	"fmt"
	"regexp"
	"strings"
)

// Bucket name limits from the S3 naming rules for general purpose buckets
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
const (
	MinBucketNameLength = 3
	MaxBucketNameLength = 63
)

// Prefixes and suffixes that S3 reserves for its own features (punycode, access point aliases,
// Object Lambda aliases, documentation examples).
var (
	reservedBucketPrefixes = []string{"xn--", "sthree-", "amzn-s3-demo-"}
	reservedBucketSuffixes = []string{"-s3alias", "--ol-s3"}
)

// ipv4Like matches names "formatted as an IP address" in S3's words. S3 rejects the shape, not
// only valid addresses, so 999.1.1.1 is refused as well.
var ipv4Like = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,3}){3}$`)

// ValidateBucketName checks name against the S3 naming rules for general purpose buckets and
// returns one reason for each rule it breaks, in a fixed order, or nil when it follows them all.
// Each reason completes the sentence "the bucket name ...".
func ValidateBucketName(name string) []string {
	var reasons []string
	if n := len(name); n < MinBucketNameLength || n > MaxBucketNameLength {
		reasons = append(reasons, fmt.Sprintf("must be %d to %d characters long (is %d)",
			MinBucketNameLength, MaxBucketNameLength, n))
	}
	if bad := disallowedChars(name); bad != "" {
		reasons = append(reasons, "must contain only lowercase letters, digits, dots (.) and hyphens (-), not "+bad)
	}
	if name != "" && (!isLowerAlnum(name[0]) || !isLowerAlnum(name[len(name)-1])) {
		reasons = append(reasons, "must start and end with a lowercase letter or digit")
	}
	if strings.Contains(name, "..") {
		reasons = append(reasons, "must not contain two adjacent dots (..)")
	}
	if ipv4Like.MatchString(name) {
		reasons = append(reasons, "must not be formatted as an IP address")
	}
	for _, p := range reservedBucketPrefixes {
		if strings.HasPrefix(name, p) {
			reasons = append(reasons, fmt.Sprintf("must not start with %q (reserved by S3)", p))
		}
	}
	for _, s := range reservedBucketSuffixes {
		if strings.HasSuffix(name, s) {
			reasons = append(reasons, fmt.Sprintf("must not end with %q (reserved by S3)", s))
		}
	}
	return reasons
}

// disallowedChars lists, quoted and in order of first appearance, each distinct character of name
// that a bucket name may not contain; "" when there is none.
func disallowedChars(name string) string {
	var found []string
	seen := map[rune]bool{}
	for _, r := range name {
		if r < 0x80 && (isLowerAlnum(byte(r)) || r == '.' || r == '-') {
			continue
		}
		if !seen[r] {
			seen[r] = true
			found = append(found, fmt.Sprintf("%q", r))
		}
	}
	return strings.Join(found, ", ")
}

func isLowerAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
}
