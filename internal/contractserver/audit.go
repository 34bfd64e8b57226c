package contractserver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// ContractSummary is one contract record, without its keys.
type ContractSummary struct {
	ID, IdempotencyKey, State string
}

// Contracts lists every contract the server has recorded, for audits: the fault suite checks
// against it that no resource was ever sold two contracts and that none was left behind.
func (s *Server) Contracts() ([]ContractSummary, error) {
	var out []ContractSummary
	err := s.store.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketContracts).ForEach(func(k, v []byte) error {
			var rec struct{ ID, IdempotencyKey, State string }
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decoding contract %s: %w", k, err)
			}
			out = append(out, ContractSummary(rec))
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
