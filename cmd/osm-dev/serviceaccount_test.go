package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

func TestServiceAccountKeyIsKeptAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apiserver", "service-account.key")
	if replaced, err := ensureServiceAccountKey(path); err != nil || replaced {
		t.Fatalf("first ensureServiceAccountKey() = %v, %v; want a new key", replaced, err)
	}
	first, _ := os.ReadFile(path)
	if err := readableByAPIServer(first); err != nil {
		t.Fatalf("kube-apiserver cannot read the new key: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode = %v, want 0600", fi.Mode().Perm())
	}
	if replaced, err := ensureServiceAccountKey(path); err != nil || replaced {
		t.Fatalf("second ensureServiceAccountKey() = %v, %v; want the key kept", replaced, err)
	}
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Error("a good key was replaced, which would invalidate every token issued")
	}
}

// TestServiceAccountKeyInPKCS8IsReplaced is the key an older osm-dev handed the API server (the
// webhook key in PKCS#8), which made kube-apiserver exit on every start.
func TestServiceAccountKeyInPKCS8IsReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service-account.key")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	old := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := readableByAPIServer(old); err == nil {
		t.Fatal("a PKCS#8 EC key reads as good; the test no longer shows the failure it guards")
	}
	if replaced, err := ensureServiceAccountKey(path); err != nil || !replaced {
		t.Fatalf("ensureServiceAccountKey() = %v, %v; want the unreadable key replaced", replaced, err)
	}
	raw, _ := os.ReadFile(path)
	if err := readableByAPIServer(raw); err != nil {
		t.Errorf("replacement key: %v", err)
	}
}
