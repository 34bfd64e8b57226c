package contractserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// tokenRecheck is how often the token file is looked at: a stat a second costs nothing, and a
// rotated token works within a second.
const tokenRecheck = time.Second

// bearerToken is the expected Authorization header. Read from a file, it follows the file, so
// the token can be rotated in place (a Kubernetes Secret volume swaps it under the mount); a
// file that turns unreadable or empty keeps the last good token.
type bearerToken struct {
	path  string // "" for a fixed token
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	want    []byte // "Bearer <token>"
	client  string // the name of the clients holding it, for their rate limiter; never the token
	checked time.Time
	modTime time.Time
	size    int64
	lastErr string
}

func newBearerToken(token, path string, log *slog.Logger) (*bearerToken, error) {
	switch {
	case token != "" && path != "":
		return nil, errors.New("give a bearer token or a token file, not both")
	case token != "":
		return &bearerToken{want: []byte("Bearer " + token), client: clientName(token)}, nil
	case path == "":
		return nil, errors.New("a bearer token or a token file is required")
	}
	t := &bearerToken{path: path, log: log, every: tokenRecheck}
	if err := t.reload(); err != nil {
		return nil, err
	}
	t.checked = time.Now()
	return t, nil
}

// current returns the Authorization header to expect and the name of the clients that send it,
// re-reading the file when it changed.
func (t *bearerToken) current() (want []byte, client string) {
	if t.path == "" {
		return t.want, t.client
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.checked) >= t.every {
		t.checked = time.Now()
		if err := t.reload(); err != nil && err.Error() != t.lastErr {
			t.lastErr = err.Error()
			t.log.Error("Keeping the last bearer token", "error", err)
		}
	}
	return t.want, t.client
}

// clientName names the holders of token without revealing it: a hash, safe in a log.
func clientName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token-" + hex.EncodeToString(sum[:6])
}

// reload reads the file if its size or modification time changed. Its errors never hold the
// token.
func (t *bearerToken) reload() error {
	fi, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("reading token file: %w", err)
	}
	if t.want != nil && fi.ModTime().Equal(t.modTime) && fi.Size() == t.size {
		return nil
	}
	data, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("reading token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return fmt.Errorf("token file %s is empty", t.path)
	}
	if t.want != nil {
		t.log.Info("Bearer token re-read", "file", t.path)
	}
	t.want, t.client, t.modTime, t.size, t.lastErr = []byte("Bearer "+token), clientName(token), fi.ModTime(), fi.Size(), ""
	return nil
}
