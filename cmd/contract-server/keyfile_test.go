package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadEncryptionKey(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("key", strings.Repeat("0f", 32)+"\n")
	key, err := readEncryptionKey(good, dataDir)
	if err != nil || !bytes.Equal(key, bytes.Repeat([]byte{0x0f}, 32)) {
		t.Errorf("readEncryptionKey(64 hex characters) = %x, %v", key, err)
	}
	for name, tt := range map[string]struct{ path, want string }{
		"too short":           {write("short", strings.Repeat("0f", 16)), "64 hex characters"},
		"not hex":             {write("raw", strings.Repeat("z", 64)), "64 hex characters"},
		"missing":             {filepath.Join(dir, "none"), "no such file"},
		"inside the data dir": {write("data/key", strings.Repeat("0f", 32)), "inside --data-dir"},
	} {
		if _, err := readEncryptionKey(tt.path, dataDir); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tt.want)
		}
	}
}
