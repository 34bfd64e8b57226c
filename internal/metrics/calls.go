package metrics

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
)

// Calls counts the provider calls (S3 and contract API) made under one context: what one pass
// cost, which the resync budget books for its next check.
type Calls struct{ all, writes atomic.Int64 }

type callsKey struct{}

// WithCalls returns ctx with a new Calls that CountS3 and CountContractAPI add to.
func WithCalls(ctx context.Context) context.Context {
	return context.WithValue(ctx, callsKey{}, &Calls{})
}

// CallsOf is the Calls of ctx; nil (which counts nothing) when it has none.
func CallsOf(ctx context.Context) *Calls {
	c, _ := ctx.Value(callsKey{}).(*Calls)
	return c
}

// All is how many calls were made.
func (c *Calls) All() int {
	if c == nil {
		return 0
	}
	return int(c.all.Load())
}

// Writes is how many of them could change something.
func (c *Calls) Writes() int {
	if c == nil {
		return 0
	}
	return int(c.writes.Load())
}

func (c *Calls) add(write bool) {
	if c == nil {
		return
	}
	c.all.Add(1)
	if write {
		c.writes.Add(1)
	}
}

// s3Write reports whether an S3 operation may change something: all but reads (Get, Head,
// List).
func s3Write(op string) bool {
	return !strings.HasPrefix(op, "Get") && !strings.HasPrefix(op, "Head") && !strings.HasPrefix(op, "List")
}

func httpWrite(method string) bool { return method != http.MethodGet && method != http.MethodHead }
