package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/keyutil"
)

// ensureServiceAccountKey returns the key kube-apiserver signs and checks ServiceAccount tokens
// with, kept at path so tokens stay valid across restarts of a reused state directory. It is the
// API server's own key, never the webhook serving key: the two have different lives, and the
// serving key's form is not the API server's to choose. A key the API server cannot read (an
// older osm-dev, a damaged file) is replaced.
func ensureServiceAccountKey(path string) (replaced bool, err error) {
	if raw, err := os.ReadFile(path); err == nil {
		if readableByAPIServer(raw) == nil {
			return false, nil
		}
		replaced = true
	} else if !os.IsNotExist(err) {
		return false, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return false, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return false, err
	}
	raw := pem.EncodeToMemory(&pem.Block{Type: keyutil.ECPrivateKeyBlockType, Bytes: der})
	if err := readableByAPIServer(raw); err != nil {
		return false, fmt.Errorf("new service-account key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return false, err
	}
	return replaced, os.Rename(tmp, path)
}

// readableByAPIServer parses a key file as kube-apiserver's --service-account-key-file and
// --service-account-signing-key-file do.
func readableByAPIServer(raw []byte) error {
	if _, err := keyutil.ParsePublicKeysPEM(raw); err != nil {
		return err
	}
	_, err := keyutil.ParsePrivateKeyPEM(raw)
	return err
}
