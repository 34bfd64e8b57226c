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
