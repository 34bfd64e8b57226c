package objectstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A listing whose answer never came (a reset connection) says nothing about what the key may
// do: it must not count as "listing allowed", or a blip flags a WriteOnly key as able to list.
func TestAListingWithoutAnAnswerIsNotAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close() // the connection drops before any answer
			}
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<Error><Code>NoSuchKey</Code><Message>no</Message></Error>`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`<Error><Code>BadDigest</Code><Message>bad</Message></Error>`))
		}
	}))
	defer srv.Close()
	st := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: 1,
		HTTPClient: NewHTTPClient(5*time.Second, 1, nil)})
	check, err := st.CheckAccess(context.Background(), "b", "")
	if err == nil || check.List {
		t.Fatalf("CheckAccess after a dropped listing = %+v, %v; want an error, and listing not taken as allowed", check, err)
	}
	if !strings.Contains(err.Error(), "checking listing") {
		t.Errorf("error %q does not say the listing could not be checked", err)
	}
}
