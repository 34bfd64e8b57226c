package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
)

// readEncryptionKey reads the key that seals stored secrets: 32 random bytes written as 64 hex
// characters (openssl rand -hex 32), surrounding whitespace ignored. Hex, because it survives
// copying through a terminal, a Secret manifest or an editor unchanged.
func readEncryptionKey(path, dataDir string) ([]byte, error) {
	if inside(dataDir, path) {
		return nil, fmt.Errorf("--encryption-key-file %s is inside --data-dir %s: keep it elsewhere, or a copy of the data directory carries its own key", path, dataDir)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the encryption key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != contractserver.EncryptionKeySize {
		return nil, fmt.Errorf("encryption key file %s must hold %d hex characters (make one with: openssl rand -hex %d)",
			path, 2*contractserver.EncryptionKeySize, contractserver.EncryptionKeySize)
	}
	return key, nil
}

// inside reports whether path is dir or lies under it.
func inside(dir, path string) bool {
	absDir, err1 := filepath.Abs(dir)
	absPath, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(absDir, absPath)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
