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

// secretBox seals the first secret key of a contract, and the secret keys of its principals, with
// AES-256-GCM under a key kept outside the database, so a copy of the database alone yields no
// usable secret. What the secret belongs to is the associated data: a sealed secret copied onto
// another record does not open.
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
	return b.sealFor(associatedData(contractID), secret)
}

func (b *secretBox) open(contractID string, sealed []byte) (string, error) {
	return b.openFor(associatedData(contractID), sealed)
}

// sealPrincipalKey seals the secret of a principal's key pair, bound to that key of that
// principal of that contract.
func (b *secretBox) sealPrincipalKey(contractID, principalID, accessKeyID, secret string) []byte {
	return b.sealFor(principalKeyData(contractID, principalID, accessKeyID), secret)
}

func (b *secretBox) openPrincipalKey(contractID, principalID, accessKeyID string, sealed []byte) (string, error) {
	return b.openFor(principalKeyData(contractID, principalID, accessKeyID), sealed)
}

// sealContractKey seals the secret of a key pair added to a contract, bound to that key of that
// contract.
func (b *secretBox) sealContractKey(contractID, accessKeyID, secret string) []byte {
	return b.sealFor(contractKeyData(contractID, accessKeyID), secret)
}

func (b *secretBox) openContractKey(contractID, accessKeyID string, sealed []byte) (string, error) {
	return b.openFor(contractKeyData(contractID, accessKeyID), sealed)
}

func (b *secretBox) sealFor(ad []byte, secret string) []byte {
	nonce := randomBytes(b.aead.NonceSize())
	return b.aead.Seal(nonce, nonce, []byte(secret), ad)
}

func (b *secretBox) openFor(ad, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("the stored secret is truncated")
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], ad)
	if err != nil {
		return "", errWrongEncryptionKey
	}
	return string(plain), nil
}

// associatedData names what a ciphertext is, so it opens only as the first secret of this contract.
func associatedData(contractID string) []byte {
	return []byte("osm contract-server first secret key of contract " + contractID)
}

// principalKeyData names the secret of one key pair of a principal: a sealed secret copied onto
// another key, principal or contract does not open.
func principalKeyData(contractID, principalID, accessKeyID string) []byte {
	return []byte("osm contract-server secret key " + accessKeyID + " of principal " + principalID + " of contract " + contractID)
}

// contractKeyData names the secret of a key pair added to a contract: a sealed secret copied
// onto another key or contract does not open.
func contractKeyData(contractID, accessKeyID string) []byte {
	return []byte("osm contract-server secret key " + accessKeyID + " of contract " + contractID)
}
