package contractserver

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// lowerBase32 spells ids with lower-case letters and digits only, so they are safe in URLs,
// in S3 user names and in Kubernetes status fields.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newContractID returns 16 random characters (80 bits).
func newContractID() string {
	return lowerBase32.EncodeToString(randomBytes(10))
}

// FirstAccessKeyID is the access key id of a contract's first key pair: "OSMC" and the contract
// id in capitals, 20 characters like an AWS key. The server names the first key after the
// contract so that a backend whose accounts are keys (versitygw) finds the account of a contract
// from the contract id alone.
func FirstAccessKeyID(contractID string) string {
	return "OSMC" + strings.ToUpper(contractID)
}

// newCredentials returns a key pair with the given access key id and a 40-character secret
// (160 bits) from crypto/rand.
func newCredentials(accessKeyID string) Credentials {
	return Credentials{AccessKeyID: accessKeyID, SecretAccessKey: hex.EncodeToString(randomBytes(20))}
}

// newAccessKeyID returns the id of an additional key pair: "OSMK" and 16 random characters.
func newAccessKeyID() string {
	return "OSMK" + strings.ToUpper(lowerBase32.EncodeToString(randomBytes(10)))
}

// newPrincipalID returns 16 random characters (80 bits), like a contract id.
func newPrincipalID() string {
	return lowerBase32.EncodeToString(randomBytes(10))
}

// newPrincipalAccessKeyID returns the id of a principal's key pair: "OSMP" and 16 random
// characters, so a gateway's user list tells principals from contracts.
func newPrincipalAccessKeyID() string {
	return "OSMP" + strings.ToUpper(lowerBase32.EncodeToString(randomBytes(10)))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	// crypto/rand.Read never fails on Linux (Go 1.24+ panics internally instead of returning).
	_, _ = rand.Read(b)
	return b
}
