package contractserver

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log destination the server's goroutines and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The token file is followed: a rotated token works and the old one stops; an empty or missing
// file keeps the last good token and says so in the log, without the token.
func TestTokenFileRotation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first-token\n")
	var logs syncBuffer
	ts := startServer(t, Config{Backend: &fakeBackend{}, TokenFile: file, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ts.srv.token.every = 0 // look at the file on every request
	status := func(token string) int {
		t.Helper()
		resp, err := newClient(t, ts.http.URL, token).GetContractWithResponse(t.Context(), "none")
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode()
	}
	wantStatuses := func(step string, want map[string]int) {
		t.Helper()
		for token, code := range want {
			if got := status(token); got != code {
				t.Errorf("%s: token %q answered %d, want %d", step, token, got, code)
			}
		}
	}
	const ok, refused = http.StatusNotFound, http.StatusUnauthorized

	wantStatuses("first token", map[string]int{"first-token": ok, "second-token": refused})
	write("second-token\n")
	wantStatuses("rotated", map[string]int{"first-token": refused, "second-token": ok})
	write("  \n")
	wantStatuses("emptied", map[string]int{"second-token": ok, "": refused})
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	wantStatuses("removed", map[string]int{"second-token": ok})
	write("third-token")
	wantStatuses("written again", map[string]int{"second-token": refused, "third-token": ok})

	log := logs.String()
	if !strings.Contains(log, "is empty") || !strings.Contains(log, "no such file") {
		t.Errorf("log does not report the empty and the missing file:\n%s", log)
	}
	for _, token := range []string{"first-token", "second-token", "third-token"} {
		if strings.Contains(log, token) {
			t.Errorf("log holds the token %q:\n%s", token, log)
		}
	}
}

// Without the once-a-second pause, every request would stat the file.
func TestTokenFileIsLookedAtOnceASecond(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("first-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := newBearerToken("", file, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("second-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := tok.current(); string(got) != "Bearer first-token" {
		t.Errorf("right after a change: %q, want the first token until the second is up", got)
	}
	tok.checked = tok.checked.Add(-tokenRecheck)
	if got, _ := tok.current(); string(got) != "Bearer second-token" {
		t.Errorf("a second later: %q, want the second token", got)
	}
}

func TestNewNeedsOneToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	for name, cfg := range map[string]Config{
		"neither":      {},
		"both":         {Token: "t", TokenFile: file},
		"missing file": {TokenFile: file},
	} {
		cfg.DataDir, cfg.Backend, cfg.EncryptionKey = t.TempDir(), &fakeBackend{}, testEncryptionKey
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if err := os.WriteFile(file, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{TokenFile: file, DataDir: t.TempDir(), EncryptionKey: testEncryptionKey, Backend: &fakeBackend{}}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("New with an empty token file: %v, want an error saying it is empty", err)
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
