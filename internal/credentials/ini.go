package credentials

import (
	"errors"
	"fmt"
	"strings"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// The INI formats (aws-files, rclone, s3cfg) are read by parsers that know no escape: botocore's
// configparser, the AWS SDKs' own readers, rclone's goconfig, s3cmd's regular expressions. A
// value is written as it is, or not at all: one that a parser would read differently could
// start a section or a key of its own (a line break), or lose its end (a comment character), so
// a region or an endpoint could put a key, an endpoint or a profile of someone else's choosing
// into a client's configuration. Every INI value goes through ini, which refuses those.

// ErrUnsafeValue: a value cannot be written in a format asked for without changing what the
// file says. Nothing is written: the Secret keeps what it held.
var ErrUnsafeValue = errors.New("a value cannot be written safely in a format asked for")

// UnsafeValueError is ErrUnsafeValue for one value: the INI file of Secret key File, of format
// Format, cannot hold the value of its key Key, for Why. It never holds the value itself, which
// may be a secret key.
type UnsafeValueError struct {
	Format         storagev1alpha1.SecretFormat
	File, Key, Why string
}

func (e *UnsafeValueError) Error() string {
	return fmt.Sprintf("the %s format (%s) cannot hold the value of %s as it is: it %s", e.Format, e.File, e.Key, e.Why)
}

func (e *UnsafeValueError) Is(target error) bool { return target == ErrUnsafeValue }

// ini is the INI file of Secret key file with one section: name, then "key = value" for each
// pair of kv; a pair whose value is empty is left out, and a value an INI parser would not read
// back as written is refused (UnsafeValueError).
func ini(file, section string, kv ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n", section)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if why := iniUnsafe(kv[i+1]); why != "" {
			return "", &UnsafeValueError{File: file, Key: kv[i], Why: why}
		}
		fmt.Fprintf(&b, "%s = %s\n", kv[i], kv[i+1])
	}
	return b.String(), nil
}

// iniUnsafe says why v cannot be the value of a "key = value" line, "" when it can: only
// printable ASCII, without a comment, quote or escape character, and without the spaces around
// it that parsers trim. '[', ']', '=' and ':' may stay (an IPv6 endpoint holds brackets): the
// value follows its key on the key's own line, and a parser reads a section only at a line's
// start, and the key up to the first delimiter, which is the one after the key.
func iniUnsafe(v string) string {
	for _, r := range v {
		switch {
		case r < 0x20 || r == 0x7f:
			return "holds a line break or another control character, which could start a section or a key of its own"
		case r > 0x7e:
			return "holds a character that is not printable ASCII (some parsers take U+2028 or U+0085 for a line break)"
		case strings.ContainsRune(";#", r):
			return "holds a comment character (; or #), at which some parsers end the value"
		case strings.ContainsRune("\"'`\\", r):
			return "holds a quote or a backslash, which some parsers strip or read as an escape"
		}
	}
	if strings.TrimSpace(v) != v {
		return "begins or ends with a space, which parsers trim"
	}
	return ""
}

// iniKey reads the key pair of an INI file of the Secret (file), from the keys id and secret.
func iniKey(file, id, secret string) func(map[string][]byte) contractclient.Credentials {
	return func(data map[string][]byte) contractclient.Credentials {
		text := string(data[file])
		return contractclient.Credentials{AccessKeyID: iniValue(text, id), SecretAccessKey: iniValue(text, secret)}
	}
}

// iniValue is the value of the first "key = value" line of text, "" when there is none.
func iniValue(text, key string) string {
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
