package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ClientConfig says how an HTTP client of the manager reaches what is outside the cluster.
type ClientConfig struct {
	// Allow, when set, is where the client may connect (Dialer); nil lets it connect anywhere,
	// for the servers the platform itself names (the contract API, the endpoints the provider
	// reports for the accounts it sells).
	Allow *Allowlist
	// Timeout bounds one request, its answer read included.
	Timeout time.Duration
	// IdleConnsPerHost is how many idle connections are kept per host (at least 2).
	IdleConnsPerHost int
	// MaxAnswer is the most read of an answer's body, unless the request's context says
	// otherwise (WithAnswerLimit).
	MaxAnswer int64
	// Wrap, when set, wraps the transport (to count requests), inside the answer limit.
	Wrap func(http.RoundTripper) http.RoundTripper
}

// NewClient returns an HTTP client that follows no redirect to another host, reads at most
// MaxAnswer bytes of an answer, gives up on a request after Timeout, and, with Allow, connects
// only where it allows.
func NewClient(cfg ClientConfig) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = max(cfg.IdleConnsPerHost, 2)
	transport.MaxIdleConns = max(transport.MaxIdleConns, transport.MaxIdleConnsPerHost)
	if cfg.Allow != nil {
		proxy, proxies := proxyFor(cfg.Allow)
		// The default transport's dialer settings, behind the check.
		dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		d := &Dialer{Allow: *cfg.Allow, proxies: proxies, Dial: dialer.DialContext}
		transport.Proxy, transport.DialContext = proxy, d.DialContext
	}
	var rt http.RoundTripper = transport
	if cfg.Wrap != nil {
		rt = cfg.Wrap(rt)
	}
	return &http.Client{
		Timeout:       cfg.Timeout,
		Transport:     LimitAnswers(rt, cfg.MaxAnswer),
		CheckRedirect: CheckRedirect,
	}
}

// maxRedirects is how many redirects to the same host a request may follow: S3 servers
// redirect only to another region's host, so more than a few is a loop.
const maxRedirects = 3

// ErrRedirect says an answer redirected to another host, or too many times.
var ErrRedirect = errors.New("redirected")

// RedirectError is a redirect not followed.
type RedirectError struct{ From, To string }

func (e *RedirectError) Error() string {
	if e.To == "" {
		return fmt.Sprintf("%s redirected more than %d times", e.From, maxRedirects)
	}
	return fmt.Sprintf("%s redirected to another host, %s, which is not followed", e.From, e.To)
}

func (e *RedirectError) Unwrap() error { return ErrRedirect }

// RetryableError tells the AWS SDK's retryer that trying again changes nothing.
func (e *RedirectError) RetryableError() bool { return false }

// CheckRedirect is an http.Client's redirect policy: follow only to the scheme and host the
// request was sent to, a few times. A redirect elsewhere would take the request, and whatever
// the answer holds, somewhere the platform never allowed.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		return &RedirectError{From: first.Host, To: req.URL.Host}
	}
	if len(via) >= maxRedirects {
		return &RedirectError{From: first.Host}
	}
	return nil
}

// ErrAnswerTooLarge says an answer was longer than its limit.
var ErrAnswerTooLarge = errors.New("answer too large")

// TooLargeError is an answer cut off at its limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer is longer than the %d bytes read of it", e.Limit)
}

func (e *TooLargeError) Unwrap() error { return ErrAnswerTooLarge }

// RetryableError tells the AWS SDK's retryer that trying again changes nothing.
func (e *TooLargeError) RetryableError() bool { return false }

type answerLimitKey struct{}

// WithAnswerLimit sets the most read of the answer to the requests made with ctx.
func WithAnswerLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, answerLimitKey{}, n)
}

// LimitAnswers wraps rt so that an answer's body is read up to a limit, the request context's
// (WithAnswerLimit) or def, and fails past it; 0 def is no limit. An answer that says it is
// longer fails at once, unread.
func LimitAnswers(rt http.RoundTripper, def int64) http.RoundTripper {
	return limitedTransport{rt: rt, def: def}
}

type limitedTransport struct {
	rt  http.RoundTripper
	def int64
}

func (l limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	limit := l.def
	if n, ok := req.Context().Value(answerLimitKey{}).(int64); ok {
		limit = n
	}
	if err != nil || limit <= 0 {
		return resp, err
	}
	if resp.ContentLength > limit {
		_ = resp.Body.Close()
		return nil, &TooLargeError{Limit: limit}
	}
	resp.Body = &limitedBody{rc: resp.Body, left: limit, limit: limit}
	return resp, nil
}

// limitedBody reads up to limit bytes, then fails, as http.MaxBytesReader does for requests.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
	err   error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Read one byte more than allowed, to tell an answer of exactly the limit from a longer one.
	if int64(len(p))-1 > b.left {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		b.err = err
		return n, err
	}
	n, b.left = int(b.left), 0
	b.err = &TooLargeError{Limit: b.limit}
	return n, b.err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// Refused reports whether err is one of this package's refusals: a destination not allowed, a
// redirect not followed, an answer too large. None changes by trying again.
func Refused(err error) bool {
	return errors.Is(err, ErrNotAllowed) || errors.Is(err, ErrRedirect) || errors.Is(err, ErrAnswerTooLarge)
}

// Reason is the message of the refusal err holds, without the request around it (a method and
// a URL with a bucket and a query), and whether it holds one.
func Reason(err error) (string, bool) {
	var notAllowed *NotAllowedError
	var redirect *RedirectError
	var tooLarge *TooLargeError
	switch {
	case errors.As(err, &notAllowed):
		return notAllowed.Error(), true
	case errors.As(err, &redirect):
		return redirect.Error(), true
	case errors.As(err, &tooLarge):
		return tooLarge.Error(), true
	}
	return "", false
}
