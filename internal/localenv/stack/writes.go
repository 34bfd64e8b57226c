package stack

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
)

// S3Writes keeps the S3 requests that changed something, for Options.S3Middleware: those that
// may write (anything but GET and HEAD) and that the server carried out (2xx). A refused one
// changed nothing: the key check's upload is sent with a Content-MD5 its body cannot match, to
// be refused once access is checked. Tests that count what the operator writes use it; their
// own requests go to S3Server.Direct, past it.
type S3Writes struct {
	mu     sync.Mutex
	writes []string
}

// Middleware is for Options.S3Middleware.
func (c *S3Writes) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if rec.status < 300 {
			c.mu.Lock()
			c.writes = append(c.writes, fmt.Sprintf("%s %s: %d", r.Method, r.URL.RequestURI(), rec.status))
			c.mu.Unlock()
		}
	})
}

// Reset forgets the writes seen so far.
func (c *S3Writes) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = nil
}

// Seen is the writes since the last Reset, as "METHOD /path?query: status".
func (c *S3Writes) Seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.writes)
}
