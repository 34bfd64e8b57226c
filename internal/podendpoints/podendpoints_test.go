package podendpoints

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	got, err := Parse(" http://127.0.0.1:17070=http://10.244.0.1:17070 ,, https://s3.example=https://s3.internal/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"http://127.0.0.1:17070": "http://10.244.0.1:17070", "https://s3.example": "https://s3.internal/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	for in, wantErr := range map[string]string{
		"http://127.0.0.1:17070":    `"http://127.0.0.1:17070": want MANAGER=POD`,
		"http://a=ftp://b":          `"http://a=ftp://b": "ftp://b" is not an http(s) endpoint URL`,
		"http://a=http://b/bucket":  `"http://a=http://b/bucket": "http://b/bucket" is not an http(s) endpoint URL`,
		"http://user:pw@a=http://b": `"http://user:pw@a=http://b": "http://user:pw@a" is not an http(s) endpoint URL`,
		"http://a=http://b?x=1":     `is not an http(s) endpoint URL`,
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("Parse(%q) error = %v, want one with %q", in, err, wantErr)
		}
	}
}
