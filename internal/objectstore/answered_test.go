package objectstore

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAnsweredTellsARefusalFromNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<Error><Code>InvalidAccessKeyId</Code><Message></Message></Error>`))
	}))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := "http://" + closed.Addr().String()
	_ = closed.Close()

	for endpoint, want := range map[string]bool{srv.URL: true, nobody: false} {
		st := New(Config{Endpoint: endpoint, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: 1,
			HTTPClient: NewHTTPClient(5*time.Second, 1, nil)})
		_, err := st.BucketNames(context.Background())
		if err == nil {
			t.Fatalf("%s: no error", endpoint)
		}
		if got := Answered(err); got != want {
			t.Errorf("%s: Answered(%v) = %v, want %v", endpoint, err, got, want)
		}
	}
}
