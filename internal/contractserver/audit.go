package contractserver

import (
	"encoding/json"
	"fmt"

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

// Principals lists every principal the server has recorded, deleted ones included, for audits:
// that no idempotency key was given two principals, and that none outlived what it was for.
func (s *Server) Principals() ([]PrincipalSummary, error) {
	var out []PrincipalSummary
	err := s.store.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketContracts).ForEach(func(k, v []byte) error {
			var rec struct {
				ID         string
				Principals []storedPrincipal
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decoding contract %s: %w", k, err)
			}
			for _, p := range rec.Principals {
				out = append(out, PrincipalSummary{ContractID: rec.ID, ID: p.ID, IdempotencyKey: p.IdempotencyKey,
					State: p.State, AccessKeyIDs: p.activeKeyIDs()})
			}
			return nil
		})
	})
	return out, err
}
