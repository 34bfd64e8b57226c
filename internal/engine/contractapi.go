package engine

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// APIFailure is the one reading of a failed contract API call, for every controller that calls
// the API: apiErr is the API's failure when it is one (nil for an error of another origin, an
// API server's say, which is retried with backoff as it is), after and err say how the pass
// ends. A refusal (the API said no: a bad request, an unknown plan, not supported) is terminal,
// looked at again after the resync period; a wait the API asked for (Retry-After) is honoured;
// anything else (unreachable, 5xx, a lost answer) is retried with backoff.
func APIFailure(err error) (apiErr *contractclient.Error, after time.Duration, out error) {
	v := contractclient.Classify(err)
	switch v.Action {
	case contractclient.Terminal:
		return v.Err, 0, reconcile.TerminalError(err)
	case contractclient.Requeue:
		return v.Err, v.After, nil
	}
	return v.Err, 0, err
}
