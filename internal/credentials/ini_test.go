package credentials

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

var iniFormats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatAWSFiles, storagev1alpha1.FormatRclone, storagev1alpha1.FormatS3cfg}

// A value that could break out of its line (a region from spec.credentials or a provider, an
// endpoint, a key) is refused by every INI format, before anything is written: the rendering
// fails as a whole, and its error names the file and the key, never the value (it may be a
// secret key). The formats that hold any value (env, cosi, obc) still render it.
func TestINIFormatsRefuseAValueThatCouldBreakOut(t *testing.T) {
	key := contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "SK1"}
	for _, tc := range []struct {
		name string
		conn Connection
		key  contractclient.Credentials
	}{
		{"a region with a line break and a section", Connection{Endpoint: conn.Endpoint, Region: "us-east-1\n[default]\naws_access_key_id = AKEVIL"}, key},
		{"a region with a carriage return", Connection{Endpoint: conn.Endpoint, Region: "us-east-1\rregion = evil"}, key},
		{"a region with a NUL", Connection{Endpoint: conn.Endpoint, Region: "us-east-1\x00"}, key},
		{"a region with a Unicode line separator", Connection{Endpoint: conn.Endpoint, Region: "us-east-1\u2028[evil]"}, key},
		{"a region with a next-line control", Connection{Endpoint: conn.Endpoint, Region: "us-east-1\u0085[evil]"}, key},
		{"a region with a comment", Connection{Endpoint: conn.Endpoint, Region: "us-east-1 ; cut here"}, key},
		{"an endpoint with a comment", Connection{Endpoint: "http://s3;x.example.com", Region: "us-east-1"}, key},
		{"a region in quotes", Connection{Endpoint: conn.Endpoint, Region: `"us-east-1"`}, key},
		{"a region with a trailing space", Connection{Endpoint: conn.Endpoint, Region: "us-east-1 "}, key},
		{"an endpoint with a line break", Connection{Endpoint: "http://127.0.0.1:7070\nendpoint_url = http://evil", Region: "us-east-1"}, key},
		{"a secret key with a line break", conn, contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "SK1\n[evil]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range iniFormats {
				got, err := Render([]storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, f}, tc.conn, &tc.key)
				var unsafe *UnsafeValueError
				if !errors.Is(err, ErrUnsafeValue) || !errors.As(err, &unsafe) {
					t.Errorf("format %s: error %v, want an UnsafeValueError", f, err)
					continue
				}
				if unsafe.Format != f || !slices.Contains(formats[f].keys, unsafe.File) {
					t.Errorf("format %s: the error names format %s, file %s", f, unsafe.Format, unsafe.File)
				}
				if got.Data != nil || got.Remove != nil || got.ConfigMap != nil {
					t.Errorf("format %s: a refused rendering still has data %v, removes %v", f, slices.Sorted(maps.Keys(got.Data)), got.Remove)
				}
				for _, v := range []string{tc.conn.Region, tc.conn.Endpoint, tc.key.SecretAccessKey} {
					if strings.Contains(err.Error(), v) {
						t.Errorf("format %s: the error %q holds the value %q", f, err, v)
					}
				}
			}
			if _, err := Render([]storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatCOSI, storagev1alpha1.FormatOBC}, tc.conn, &tc.key); err != nil {
				t.Errorf("the formats that hold any value refused it: %v", err)
			}
		})
	}
}

// What the INI formats accept reads back, with a strict reader, as exactly the sections and
// keys they write, each with its value as it was: brackets, '=' and ':' inside a value (an
// IPv6 endpoint, an odd region) start nothing.
func TestINIValuesReadBackAsTheirOwnKeyOnly(t *testing.T) {
	c := Connection{Endpoint: "http://[fd00::1]:9000", Region: "[evil] = x:y"}
	key := &contractclient.Credentials{AccessKeyID: "AK[1]=2", SecretAccessKey: "a/b+c=d"}
	got := render(t, iniFormats, c, key)
	want := map[string]map[string]map[string]string{
		AWSCredentialsFile: {"default": {"aws_access_key_id": key.AccessKeyID, "aws_secret_access_key": key.SecretAccessKey}},
		AWSConfigFile:      {"default": {"region": c.Region, "endpoint_url": c.Endpoint, "s3": "", "addressing_style": "path"}},
		RcloneConfigFile: {RcloneRemote: {"type": "s3", "provider": "Other", "access_key_id": key.AccessKeyID,
			"secret_access_key": key.SecretAccessKey, "endpoint": c.Endpoint, "region": c.Region, "force_path_style": "true", "no_check_bucket": "true"}},
		S3cfgFile: {"default": {"access_key": key.AccessKeyID, "secret_key": key.SecretAccessKey, "host_base": "[fd00::1]:9000",
			"host_bucket": "[fd00::1]:9000", "use_https": "False", "bucket_location": c.Region, "signature_v2": "False"}},
	}
	for file, sections := range want {
		if diff := cmp.Diff(sections, readINI(t, string(got.Data[file]))); diff != "" {
			t.Errorf("%s reads back (-want +got):\n%s", file, diff)
		}
	}
	if back := keyIn(got.Data); back != *key {
		t.Errorf("the key reads back as %+v, want %+v", back, *key)
	}
}

// readINI reads text as a strict INI parser does: a line starting with '[' is a section, any
// other is "key = value" split at the first '=' (an indented one is a sub-key, as in the AWS
// config's "s3 =" block); each key is set once.
func readINI(t *testing.T, text string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	section := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "["):
			section = strings.TrimSuffix(strings.TrimPrefix(trimmed, "["), "]")
			if out[section] != nil {
				t.Errorf("section %q twice in:\n%s", section, text)
			}
			out[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(trimmed, "=")
			if !ok || section == "" {
				t.Errorf("line %q is no key of a section in:\n%s", line, text)
				continue
			}
			k = strings.TrimSpace(k)
			if _, dup := out[section][k]; dup {
				t.Errorf("key %q twice in:\n%s", k, text)
			}
			out[section][k] = strings.TrimSpace(v)
		}
	}
	return out
}
