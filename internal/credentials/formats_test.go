package credentials

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	cosiapi "sigs.k8s.io/container-object-storage-interface-api/apis"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

var (
	allFormats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatAWSFiles, storagev1alpha1.FormatCOSI,
		storagev1alpha1.FormatOBC, storagev1alpha1.FormatRclone, storagev1alpha1.FormatS3cfg}
	conn = Connection{Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", Bucket: "photos-7h2k", Prefix: "web/"}
)

// The default is today's Secret: the AWS_* variables and the bucket, nothing else.
func TestRenderDefaultsToEnv(t *testing.T) {
	key := &contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "SK1"}
	got := render(t, nil, conn, key)
	want := map[string]string{"AWS_ACCESS_KEY_ID": "AK1", "AWS_SECRET_ACCESS_KEY": "SK1", "AWS_ENDPOINT_URL": "http://127.0.0.1:7070",
		"AWS_REGION": "us-east-1", "BUCKET_NAME": "photos-7h2k", "BUCKET_PREFIX": "web/"}
	if diff := cmp.Diff(want, strings_(got.Data)); diff != "" {
		t.Errorf("Render(nil) data (-want +got):\n%s", diff)
	}
	if got.ConfigMap != nil {
		t.Errorf("a ConfigMap without the obc format: %v", got.ConfigMap)
	}
	for _, k := range []string{"credentials", "rclone.conf", ".s3cfg", "BucketInfo", "BUCKET_HOST"} {
		if !slices.Contains(got.Remove, k) {
			t.Errorf("Remove %v lacks %s, which only a format not asked for writes", got.Remove, k)
		}
	}
	if noPrefix := render(t, nil, Connection{Endpoint: conn.Endpoint}, key); !slices.Contains(noPrefix.Remove, "BUCKET_PREFIX") {
		t.Errorf("without a prefix BUCKET_PREFIX is not removed: %v", noPrefix.Remove)
	}
}

// Every format holds the key pair it was rendered with, and KeyOf finds it in each alone; a
// rotation rewrites every one of them in the one rendering, leaving the old key nowhere.
func TestEveryFormatHoldsTheKeyAndRotationRewritesThemAll(t *testing.T) {
	old := &contractclient.Credentials{AccessKeyID: "AKOLD", SecretAccessKey: "SKOLD"}
	rotated := &contractclient.Credentials{AccessKeyID: "AKNEW", SecretAccessKey: "SKNEW"}
	before, after := render(t, allFormats, conn, old), render(t, allFormats, conn, rotated)
	for _, name := range allFormats {
		alone := map[string][]byte{}
		for _, k := range formats[name].keys {
			if v, ok := after.Data[k]; ok {
				alone[k] = v
			}
		}
		if got := keyIn(alone); got != *rotated {
			t.Errorf("format %s alone holds key %+v, want %+v", name, got, *rotated)
		}
	}
	for k, v := range after.Data {
		if strings.Contains(string(v), "AKOLD") || strings.Contains(string(v), "SKOLD") {
			t.Errorf("after the rotation %s still holds the old key: %s", k, v)
		}
		if string(before.Data[k]) == string(v) && strings.Contains(string(before.Data[k]), "AKOLD") {
			t.Errorf("%s was not rewritten", k)
		}
	}
	if len(after.Remove) != 0 {
		t.Errorf("every format asked for, yet Remove = %v", after.Remove)
	}
}

// The obc format's ConfigMap holds the connection as Rook's claims do, and never a key.
func TestOBCConfigMapHoldsNoKey(t *testing.T) {
	got := render(t, []storagev1alpha1.SecretFormat{storagev1alpha1.FormatOBC}, conn, &contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "SK1"})
	want := map[string]string{"BUCKET_HOST": "127.0.0.1", "BUCKET_PORT": "7070", "BUCKET_NAME": "photos-7h2k", "BUCKET_REGION": "us-east-1", "BUCKET_SUBREGION": ""}
	if diff := cmp.Diff(want, got.ConfigMap); diff != "" {
		t.Errorf("ConfigMap (-want +got):\n%s", diff)
	}
	for _, v := range got.ConfigMap {
		if strings.Contains(v, "AK1") || strings.Contains(v, "SK1") {
			t.Errorf("a key in the ConfigMap: %v", got.ConfigMap)
		}
	}
	if string(got.Data["AWS_ACCESS_KEY_ID"]) != "AK1" || string(got.Data["BUCKET_HOST"]) != "127.0.0.1" {
		t.Errorf("obc Secret data = %v", strings_(got.Data))
	}
	https := obcConfigMap(Connection{Endpoint: "https://s3.example.com"})
	if https["BUCKET_HOST"] != "s3.example.com" || https["BUCKET_PORT"] != "443" {
		t.Errorf("https endpoint without a port: %v", https)
	}
}

// Without a key (a Secret emptied by hand), a format asked for keeps what it holds: only the
// next key rewrites it.
func TestRenderWithoutKeyKeepsWhatHoldsOne(t *testing.T) {
	got := render(t, []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatRclone}, conn, nil)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "rclone.conf"} {
		if _, ok := got.Data[k]; ok || slices.Contains(got.Remove, k) {
			t.Errorf("%s is written or removed without a key: data %v, remove %v", k, slices.Sorted(maps.Keys(got.Data)), got.Remove)
		}
	}
	if !slices.Contains(got.Remove, ".s3cfg") {
		t.Errorf("a format not asked for stays: remove %v", got.Remove)
	}
}

// The BucketInfo document reads back through COSI's own type as the sidecar wrote it.
func TestBucketInfoReadsBackThroughCOSIsType(t *testing.T) {
	got := render(t, []storagev1alpha1.SecretFormat{storagev1alpha1.FormatCOSI}, conn, &contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "SK1"})
	var info cosiapi.BucketInfo
	if err := json.Unmarshal(got.Data["BucketInfo"], &info); err != nil {
		t.Fatal(err)
	}
	s := info.Spec
	if info.Kind != "BucketInfo" || s.BucketName != "photos-7h2k" || s.AuthenticationType != "Key" || s.S3 == nil ||
		s.S3.Endpoint != conn.Endpoint || s.S3.Region != "us-east-1" || s.S3.AccessKeyID != "AK1" || s.S3.AccessSecretKey != "SK1" ||
		len(s.Protocols) != 1 || s.Protocols[0] != "S3" {
		t.Errorf("BucketInfo = %+v (S3 %+v)", info, s.S3)
	}
	for k, want := range map[string]string{"COSI_PROTOCOL": "S3", "COSI_S3_BUCKET_ID": "photos-7h2k", "COSI_S3_ENDPOINT": conn.Endpoint,
		"COSI_S3_REGION": "us-east-1", "COSI_S3_ADDRESSING_STYLE": "path", "COSI_S3_ACCESS_KEY_ID": "AK1", "COSI_S3_ACCESS_SECRET_KEY": "SK1"} {
		if string(got.Data[k]) != want {
			t.Errorf("%s = %q, want %q", k, got.Data[k], want)
		}
	}
}

// render is Render of values every format holds.
func render(t *testing.T, asked []storagev1alpha1.SecretFormat, c Connection, key *contractclient.Credentials) Rendered {
	t.Helper()
	got, err := Render(asked, c, key)
	if err != nil {
		t.Fatalf("Render(%v): %v", asked, err)
	}
	return got
}

func strings_(data map[string][]byte) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}

// A key of several buckets: env names each bucket by its Bucket's name, rclone gets an alias
// remote for each, and the variables of a bucket no longer listed are taken out.
func TestRenderSeveralBuckets(t *testing.T) {
	key := &contractclient.Credentials{AccessKeyID: "AK1", SecretAccessKey: "SK1"}
	several := Connection{Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", Buckets: []BucketConnection{
		{Name: "photos", Bucket: "ns-photos"}, {Name: "user-uploads", Bucket: "ns-uploads"}, {Name: "backups", Bucket: "ns-backups", Prefix: "db/"}}}
	got := render(t, []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatRclone}, several, key)
	data := strings_(got.Data)
	delete(data, "rclone.conf")
	want := map[string]string{"AWS_ACCESS_KEY_ID": "AK1", "AWS_SECRET_ACCESS_KEY": "SK1", "AWS_ENDPOINT_URL": "http://127.0.0.1:7070",
		"AWS_REGION": "us-east-1", "BUCKET_NAME_PHOTOS": "ns-photos", "BUCKET_NAME_USER_UPLOADS": "ns-uploads",
		"BUCKET_NAME_BACKUPS": "ns-backups", "BUCKET_PREFIX_BACKUPS": "db/"}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	for _, k := range []string{"BUCKET_NAME", "BUCKET_PREFIX"} {
		if !slices.Contains(got.Remove, k) {
			t.Errorf("Remove %v lacks %s, which only a key of one bucket has", got.Remove, k)
		}
	}
	if diff := cmp.Diff([]string{"BUCKET_NAME_", "BUCKET_PREFIX_"}, got.RemovePrefixed); diff != "" {
		t.Errorf("RemovePrefixed (-want +got):\n%s", diff)
	}
	for _, remote := range []string{"[osm-photos]\ntype = alias\nremote = osm:ns-photos/\n", "[osm-backups]\ntype = alias\nremote = osm:ns-backups/db/\n"} {
		if !strings.Contains(string(got.Data["rclone.conf"]), remote) {
			t.Errorf("rclone.conf lacks\n%s\nin\n%s", remote, got.Data["rclone.conf"])
		}
	}
	if one := render(t, nil, conn, key); one.RemovePrefixed != nil {
		t.Errorf("a key of one bucket removes keys by prefix: %v; a Secret's other keys are left as they are", one.RemovePrefixed)
	}
}
