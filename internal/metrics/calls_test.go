package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/smithy-go/middleware"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// A pass's Calls count its S3 and contract API calls, answered or not, and tell the writes
// apart; calls made under another context are not its own.
func TestCallsCountAPassOwnCallsAndItsWrites(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(server.Close)
	api, store := countedClients(t, server.URL)

	ctx := WithCalls(context.Background())
	_, _ = store.Policy(ctx, "b")
	_ = store.HeadBucket(ctx, "b")
	_ = store.PutPolicy(ctx, "b", "{}")
	_, _ = api.Get(ctx, "c")
	_ = api.Cancel(ctx, "c")
	_, _ = store.Policy(context.Background(), "b") // another pass's

	if got := CallsOf(ctx); got.All() != 5 || got.Writes() != 2 {
		t.Errorf("counted %d calls, %d writes; want 5 calls (3 S3, 2 contract API), 2 writes (PutBucketPolicy, DELETE)", got.All(), got.Writes())
	}
	if got := CallsOf(context.Background()); got.All() != 0 {
		t.Errorf("a context without Calls counted %d", got.All())
	}
}

// countedClients are a contract API client and an S3 store of url, whose calls are counted as
// the manager's are.
func countedClients(t *testing.T, url string) (*contractclient.Client, objectstore.Store) {
	t.Helper()
	gen, err := contractapi.NewClientWithResponses(url, contractapi.WithHTTPClient(&http.Client{Transport: CountContractAPI(nil)}))
	if err != nil {
		t.Fatal(err)
	}
	return contractclient.New(gen), objectstore.New(objectstore.Config{Endpoint: url, Region: "us-east-1", AccessKeyID: "AK",
		SecretAccessKey: "SK", HTTPClient: objectstore.NewHTTPClient(5*time.Second, 4, nil), MaxAttempts: 1,
		APIOptions: []func(*middleware.Stack) error{CountS3}})
}
