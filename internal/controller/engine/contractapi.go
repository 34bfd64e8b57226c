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
	e, ok := contractclient.AsError(err)
	switch {
	case !ok:
		return nil, 0, err
	case !e.Retryable():
		return e, 0, reconcile.TerminalError(err)
	case e.RetryAfter > 0:
		return e, e.RetryAfter, nil
	}
	return e, 0, err
}
