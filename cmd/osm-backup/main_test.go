package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// A backup copies the link's objects under --from into the snapshot, a restore copies them back
// from it, byte for byte, large objects in parts; what is outside --from stays where it is.
func TestBackupThenRestoreBringsBackTheSameBytes(t *testing.T) {
	gw, err := localenv.StartVersityGW(t.Context(), localenv.VersityGWOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(func() { _ = gw.Stop() })
	s3c := localenv.NewS3Client(gw.Endpoint, gw.Region, gw.RootAccessKey, gw.RootSecretKey)
	ctx := t.Context()
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("photos")}); err != nil {
		t.Fatal(err)
	}
	partSize = 5 << 20
	big := make([]byte, 2*partSize+123)
	_, _ = rand.Read(big)
	originals := map[string][]byte{"originals/cat.txt": []byte("a cat\n"), "originals/empty": {}, "originals/big.bin": big}
	for key, body := range originals {
		put(t, s3c, key, body)
	}
	put(t, s3c, "thumbnails/cat.png", []byte("not backed up"))

	env := map[string]string{
		"PHOTOS_BUCKET": "photos", "PHOTOS_ENDPOINT": gw.Endpoint, "PHOTOS_REGION": gw.Region,
		"PHOTOS_ACCESS_KEY_ID": gw.RootAccessKey, "PHOTOS_SECRET_ACCESS_KEY": gw.RootSecretKey,
		"BACKUP_BUCKET": "photos", "AWS_ENDPOINT_URL": gw.Endpoint, "AWS_REGION": gw.Region,
		"AWS_ACCESS_KEY_ID": gw.RootAccessKey, "AWS_SECRET_ACCESS_KEY": gw.RootSecretKey,
		"BACKUP_SNAPSHOT_PREFIX": "photos/web-backup-1/",
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"backup", "--from", "originals/"}, getenv(env), environ(env), &out); err != nil {
		t.Fatalf("backup: %v (%s)", err, out.String())
	}
	if want := "backup: 3 objects"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("backup printed %q, want it to start with %q", out.String(), want)
	}
	for key, body := range originals {
		if got := get(t, s3c, "photos/web-backup-1/"+key); !bytes.Equal(got, body) {
			t.Errorf("snapshot of %s: %d bytes, want %d", key, len(got), len(body))
		}
		if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("photos"), Key: aws.String(key)}); err != nil {
			t.Fatal(err)
		}
	}

	env["RESTORE_PREFIX"] = "photos/web-backup-1/"
	out.Reset()
	if err := run(ctx, []string{"restore", "--link", "PHOTOS", "--from", "originals/"}, getenv(env), environ(env), &out); err != nil {
		t.Fatalf("restore: %v (%s)", err, out.String())
	}
	for key, body := range originals {
		if got := get(t, s3c, key); !bytes.Equal(got, body) {
			t.Errorf("restored %s: %d bytes, want %d", key, len(got), len(body))
		}
	}
}

func TestARunOutsideAnApplicationSaysWhatIsMissing(t *testing.T) {
	env := map[string]string{"PHOTOS_BUCKET": "photos", "PHOTOS_ENDPOINT": "http://127.0.0.1:1", "BACKUP_BUCKET": "photos", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"}
	err := run(t.Context(), []string{"backup"}, getenv(env), environ(env), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "BACKUP_SNAPSHOT_PREFIX is not set") {
		t.Errorf("backup without a snapshot prefix: %v", err)
	}
	env["OTHER_BUCKET"], env["OTHER_ENDPOINT"] = "other", "http://127.0.0.1:1"
	err = run(t.Context(), []string{"restore"}, getenv(env), environ(env), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "2 linked Buckets in the environment (OTHER_, PHOTOS_): name one with --link") {
		t.Errorf("restore with two links and no --link: %v", err)
	}
}

func getenv(env map[string]string) func(string) string {
	return func(name string) string { return env[name] }
}

func environ(env map[string]string) []string {
	var kv []string
	for k, v := range env {
		kv = append(kv, k+"="+v)
	}
	return kv
}

func put(t *testing.T, c *s3.Client, key string, body []byte) {
	t.Helper()
	if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("photos"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c *s3.Client, key string) []byte {
	t.Helper()
	out, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
