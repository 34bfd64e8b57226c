package objectstore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// A tenant's endpoint answers what it likes. What the Store takes from it is an answer the call
// returns, of a bounded size, from the host it asked; anything else is an error that is never
// retried and never kept.
func TestAStoreTakesOnlyAnswersTheCallReturns(t *testing.T) {
	var elsewhere atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write([]byte(`{"Statement":[{"Effect":"Allow","Sid":"internal-service-secret"}]}`))
	}))
	defer internal.Close()
	var calls atomic.Int32
	tenant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		switch r.URL.Path {
		case "/json":
			_, _ = w.Write([]byte(`{"Code":"Success","AccessKeyId":"ASIAEXAMPLE","SecretAccessKey":"metadata"}`))
		case "/huge":
			_, _ = w.Write([]byte(`{"Statement":[{"Effect":"Allow","Sid":"` + strings.Repeat("x", 200<<10) + `"}]}`))
		case "/redirect":
			http.Redirect(w, r, internal.URL+"/policy?policy", http.StatusFound)
		default: // ListBuckets: a 200 with nothing in it
		}
	}))
	defer tenant.Close()
	store := func() Store {
		return New(Config{Endpoint: tenant.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s",
			HTTPClient: NewHTTPClient(5*time.Second, 1, nil)})
	}
	ctx := context.Background()

	for _, c := range []struct {
		bucket string
		want   error
	}{
		{"json", ErrNotAnAnswer},
		{"huge", egress.ErrAnswerTooLarge},
		{"redirect", egress.ErrRedirect},
	} {
		calls.Store(0)
		policy, err := store().Policy(ctx, c.bucket)
		if !errors.Is(err, c.want) || policy != "" {
			t.Errorf("Policy(%s) = %q, %v; want nothing and %v", c.bucket, policy, err, c.want)
		}
		if IsTransient(err) {
			t.Errorf("Policy(%s): %v is taken as transient: it would be retried", c.bucket, err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("Policy(%s) asked %d times: the SDK retried what no retry changes", c.bucket, n)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed to another host %d times", n)
	}
	if names, err := store().BucketNames(ctx); !errors.Is(err, ErrNotAnAnswer) {
		t.Errorf("BucketNames over an empty 200 = %v, %v; want ErrNotAnAnswer", names, err)
	}
}

// An endpoint that accepts a connection and never answers holds a call for the client's
// timeout per attempt, and the call fails as a transient error, retried by the workqueue.
func TestATarPitFailsTheCallWithinItsTimeout(t *testing.T) {
	release := make(chan struct{})
	pit := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer pit.Close()
	defer close(release)
	st := New(Config{Endpoint: pit.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: 2,
		HTTPClient: NewHTTPClient(100*time.Millisecond, 1, nil)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := st.Policy(ctx, "b")
	if err == nil || !IsTransient(err) || ctx.Err() != nil {
		t.Errorf("Policy on a tar pit = %v (context %v); want a transient error before the test's own deadline", err, ctx.Err())
	}
}
