package contractclient

import "time"

// Action is what a reconciler does after a failed call of the contract API.
type Action int

const (
	// Backoff: retry with the workqueue's backoff; the reconciler returns the error.
	Backoff Action = iota
	// Requeue: retry after Verdict.After, the wait the API asked for (429, 503 with
	// Retry-After); the reconciler returns ctrl.Result{RequeueAfter: v.After} and no error.
	Requeue
	// Terminal: the API refused, and the same request gets the same answer until the spec
	// changes; the reconciler returns reconcile.TerminalError(err) and a resync looks again.
	Terminal
)

// Verdict is Classify's answer.
type Verdict struct {
	// Action is what to do next.
	Action Action
	// After is the wait for Requeue; 0 otherwise.
	After time.Duration
	// Err is the call's *Error, for a condition message (Op, Summary, Detail); nil when the
	// failure is not the contract API's (a cancelled context, a bug), whose Action is Backoff.
	Err *Error
}

// Classify says what a reconciler does after a contract API call failed with err, so that
// every reconciler decides it the same way:
//
//	v := contractclient.Classify(err)
//	switch v.Action {
//	case contractclient.Terminal:
//		return ctrl.Result{}, reconcile.TerminalError(err)
//	case contractclient.Requeue:
//		return ctrl.Result{RequeueAfter: v.After}, nil
//	}
//	return ctrl.Result{}, err
//
// A caller that treats some refusals as news rather than failure (ErrNotFound after a cancel,
// ErrLastKey) checks them with errors.Is first. Classify(nil) is Backoff with no Err; do not
// call it without an error.
func Classify(err error) Verdict {
	e, ok := AsError(err)
	switch {
	case !ok:
		return Verdict{Action: Backoff}
	case !e.Retryable():
		return Verdict{Action: Terminal, Err: e}
	case e.RetryAfter() > 0:
		return Verdict{Action: Requeue, After: e.RetryAfter(), Err: e}
	}
	return Verdict{Action: Backoff, Err: e}
}
