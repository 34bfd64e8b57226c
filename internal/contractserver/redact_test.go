package contractserver

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestRedactKeepsSecretKeysOutOfErrors(t *testing.T) {
	noAnswer := &url.Error{
		Op:  "Put",
		URL: "http://127.0.0.1:7480/admin/user?uid=contract-x&access-key=AK&secret-key=S3CR3T",
		Err: errors.New("context deadline exceeded"),
	}
	undecodable := errors.New(`failed to unmarshal radosgw http response: {"keys":[{"secret_key":"S3CR3T"}]}`)
	for _, err := range []error{noAnswer, undecodable} {
		got := redact(err).Error()
		if strings.Contains(got, "S3CR3T") {
			t.Errorf("redact(%T) = %q, still holds the secret key", err, got)
		}
	}
	if got, want := redact(noAnswer).Error(), `Put http://127.0.0.1:7480/admin/user: context deadline exceeded`; got != want {
		t.Errorf("redact(url.Error) = %q, want %q", got, want)
	}
}
