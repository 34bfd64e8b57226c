package contractserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// ContractSummary is one contract record, without secrets.
type ContractSummary struct {
	ID, IdempotencyKey, State string
	// AccessKeyIDs are the keys in effect.
	AccessKeyIDs []string
}

// BackendKey is a key pair the S3 server holds for a contract's account or a principal, without
// its secret.
type BackendKey struct {
	AccessKeyID string
	// Owner says whose it is, as the backend names it.
	Owner string
}

// KeyLister is implemented by a backend that can list every key pair it holds for contracts
// and principals, for audits: the fault suite checks against it that each is one the server
// records in effect.
type KeyLister interface {
	Keys(ctx context.Context) ([]BackendKey, error)
}

// Contracts lists every contract the server has recorded, for audits: the fault suite checks
// against it that no resource was ever sold two contracts and that none was left behind.
func (s *Server) Contracts() ([]ContractSummary, error) {
	var out []ContractSummary
	err := s.store.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketContracts).ForEach(func(k, v []byte) error {
			var rec record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decoding contract %s: %w", k, err)
			}
			c := ContractSummary{ID: rec.ID, IdempotencyKey: rec.IdempotencyKey, State: rec.State, AccessKeyIDs: []string{}}
			for _, key := range rec.activeKeys() {
				c.AccessKeyIDs = append(c.AccessKeyIDs, key.AccessKeyID)
			}
			out = append(out, c)
			return nil
		})
	})
	return out, err
}

// PrincipalSummary is one principal record, without secrets.
type PrincipalSummary struct {
	ContractID, ID, IdempotencyKey, State string
	// AccessKeyIDs are the keys in effect.
	AccessKeyIDs []string
}

// Principals lists every principal the server has recorded, deleted ones included for as long
// as their tombstones are kept (Limits.TombstoneRetention), for audits: that no idempotency key
// was given two principals, and that none outlived what it was for. Sorted by contract and id.
func (s *Server) Principals() ([]PrincipalSummary, error) {
	var out []PrincipalSummary
	err := s.store.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketPrincipals).ForEach(func(k, v []byte) error {
			var p storedPrincipal
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("decoding principal %s: %w", k, err)
			}
			contract, _, _ := strings.Cut(string(k), "/")
			out = append(out, PrincipalSummary{ContractID: contract, ID: p.ID, IdempotencyKey: p.IdempotencyKey,
				State: p.State, AccessKeyIDs: p.activeKeyIDs()})
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketDeletedPrincipals).ForEach(func(k, v []byte) error {
			var t principalTombstone
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decoding principal tombstone %q: %w", k, err)
			}
			contract, _, _ := strings.Cut(string(k), "/")
			out = append(out, PrincipalSummary{ContractID: contract, ID: t.ID, IdempotencyKey: t.IdempotencyKey,
				State: principalDeleted, AccessKeyIDs: []string{}})
			return nil
		})
	})
	slices.SortFunc(out, func(a, b PrincipalSummary) int {
		return cmp.Or(strings.Compare(a.ContractID, b.ContractID), strings.Compare(a.ID, b.ID))
	})
	return out, err
}
