package contractclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

func TestClassifyTellsAReconcilerWhatToDo(t *testing.T) {
	lost := &contractclient.Error{Op: "reading contract c1", Cause: errors.New("connection reset by peer")}
	busy := contractclient.NewError("reading contract c1", http.StatusServiceUnavailable).WithRetryAfter(5 * time.Second)
	failing := contractclient.NewError("reading contract c1", http.StatusInternalServerError)
	wrongURL := contractclient.NewError("reading contract c1", http.StatusNotFound)
	refused := contractclient.NewError("creating the contract", http.StatusUnprocessableEntity)
	unsupported := contractclient.NewRefusal("adding a key to contract c1", contractclient.ErrNotSupported, "versitygw accounts hold one key pair")
	tests := []struct {
		name string
		err  error
		want contractclient.Verdict
	}{
		{"not the contract API's error: backoff", context.DeadlineExceeded,
			contractclient.Verdict{Action: contractclient.Backoff}},
		{"a lost answer: backoff", lost,
			contractclient.Verdict{Action: contractclient.Backoff, Err: lost}},
		{"a failing API: backoff", failing,
			contractclient.Verdict{Action: contractclient.Backoff, Err: failing}},
		{"a 404 that is not the API's word (a wrong URL): backoff", wrongURL,
			contractclient.Verdict{Action: contractclient.Backoff, Err: wrongURL}},
		{"a busy API that says when to come back: requeue after that", busy,
			contractclient.Verdict{Action: contractclient.Requeue, After: 5 * time.Second, Err: busy}},
		{"a wrapped one too", fmt.Errorf("learning the contract: %w", busy),
			contractclient.Verdict{Action: contractclient.Requeue, After: 5 * time.Second, Err: busy}},
		{"a refusal: terminal", refused,
			contractclient.Verdict{Action: contractclient.Terminal, Err: refused}},
		{"what the provider cannot do: terminal, although a 5xx", unsupported,
			contractclient.Verdict{Action: contractclient.Terminal, Err: unsupported}},
	}
	for _, tt := range tests {
		got := contractclient.Classify(tt.err)
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b *contractclient.Error) bool { return a == b })); diff != "" {
			t.Errorf("%s: Classify (-want +got):\n%s", tt.name, diff)
		}
	}
}
