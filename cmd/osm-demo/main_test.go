package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/linkclient"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// The demo serves its link's keys at / and each object at its key, with S3's answers as HTTP's.
func TestTheDemoServesItsLinkedBucket(t *testing.T) {
	gw, err := localenv.StartVersityGW(t.Context(), localenv.VersityGWOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(func() { _ = gw.Stop() })
	s3c := localenv.NewS3Client(gw.Endpoint, gw.Region, gw.RootAccessKey, gw.RootSecretKey)
	if _, err := s3c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("photos")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s3c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("photos"), Key: aws.String("originals/cat.txt"),
		Body: bytes.NewReader([]byte("a cat\n")), ContentType: aws.String("text/plain")}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PHOTOS_BUCKET": "photos", "PHOTOS_ENDPOINT": gw.Endpoint, "PHOTOS_REGION": gw.Region,
		"PHOTOS_ACCESS_KEY_ID": gw.RootAccessKey, "PHOTOS_SECRET_ACCESS_KEY": gw.RootSecretKey}
	b, err := linkclient.Link(t.Context(), func(k string) string { return env[k] }, "PHOTOS_")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler(b))
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/", "originals/cat.txt\n", http.StatusOK},
		{"/originals/cat.txt", "a cat\n", http.StatusOK},
		{"/healthz", "ok\n", http.StatusOK},
		{"/originals/dog.txt", "reading originals/dog.txt: NoSuchKey\n", http.StatusNotFound},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || string(body) != c.body {
			t.Errorf("GET %s: %d %q, want %d %q", c.path, resp.StatusCode, body, c.status, c.body)
		}
	}

	env["PHOTOS_SECRET_ACCESS_KEY"] = "not-the-key"
	wrong, err := linkclient.Link(t.Context(), func(k string) string { return env[k] }, "PHOTOS_")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	handler(wrong).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/originals/cat.txt", nil))
	if rec.Code != http.StatusForbidden {
		t.Errorf("with a wrong key: %d %q, want 403", rec.Code, rec.Body.String())
	}
}
