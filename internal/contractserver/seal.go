package contractserver

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
)

// EncryptionKeySize is the size of Config.EncryptionKey: AES-256.
const EncryptionKeySize = 32

// errWrongEncryptionKey is what opening a secret sealed under another key gives.
var errWrongEncryptionKey = errors.New("the stored secret does not open with this encryption key: " +
	"is it the key the records were written with?")

// secretBox seals the first secret key of a contract with AES-256-GCM under a key kept outside
// the database, so a copy of the database alone yields no usable secret. The contract id is the
// associated data: a sealed secret copied onto another record does not open.
type secretBox struct {
	aead cipher.AEAD
}

func newSecretBox(key []byte) (*secretBox, error) {
	if len(key) != EncryptionKeySize {
		return nil, fmt.Errorf("the encryption key must be %d bytes, not %d", EncryptionKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &secretBox{aead: aead}, nil
}

// seal returns a random nonce followed by the ciphertext. A random 96-bit nonce is safe for far
// more secrets than a server will ever seal under one key.
func (b *secretBox) seal(contractID, secret string) []byte {
	nonce := randomBytes(b.aead.NonceSize())
	return b.aead.Seal(nonce, nonce, []byte(secret), associatedData(contractID))
}

func (b *secretBox) open(contractID string, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("the stored secret is truncated")
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], associatedData(contractID))
	if err != nil {
		return "", errWrongEncryptionKey
	}
	return string(plain), nil
}

// associatedData names what a ciphertext is, so it opens only as the first secret of this contract.
func associatedData(contractID string) []byte {
	return []byte("osm contract-server first secret key of contract " + contractID)
}
