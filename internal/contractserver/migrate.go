package contractserver

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// legacyRecord is what a schema 1 record holds that schema 2 keeps elsewhere: its principals,
// and revoked keys marked in place (keyRemoved).
type legacyRecord struct {
	Principals []legacyPrincipal `json:"principals"`
}

type legacyPrincipal struct {
	ID             string               `json:"id"`
	IdempotencyKey string               `json:"idempotencyKey"`
	State          string               `json:"state"`
	Keys           []storedPrincipalKey `json:"keys"`
	CreatedAt      time.Time            `json:"createdAt"`
	DeletedAt      *time.Time           `json:"deletedAt"`
}

// migrate moves every contract of schema 1 into schema 2, in the caller's transaction: its
// principals into records of their own, deleted ones and revoked keys into tombstones. Schema 1
// did not say when a key was revoked: its tombstones count as revoked now, so each gets the
// whole retention from the upgrade on. It returns how many contracts it changed.
func migrate(tx *bolt.Tx) (int, error) {
	contracts := tx.Bucket(bucketContracts)
	type change struct {
		rec        *record
		principals []legacyPrincipal
	}
	var changes []change
	err := contracts.ForEach(func(k, v []byte) error {
		var rec record
		var old legacyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decoding contract %q: %w", k, err)
		}
		if err := json.Unmarshal(v, &old); err != nil {
			return fmt.Errorf("decoding contract %q: %w", k, err)
		}
		changes = append(changes, change{&rec, old.Principals})
		return nil
	})
	if err != nil {
		return 0, err
	}
	at := now()
	n := 0
	for _, c := range changes {
		c.rec.Keys, c.rec.Revoked = splitContractKeys(c.rec.Keys, at)
		if len(c.principals) == 0 && len(c.rec.Revoked) == 0 {
			continue
		}
		n++
		for _, lp := range c.principals {
			if err := migratePrincipal(tx, c.rec, lp, at); err != nil {
				return 0, fmt.Errorf("migrating principal %s of contract %s: %w", lp.ID, c.rec.ID, err)
			}
		}
		// Written without the principals: putRecord knows no such field.
		if err := putRecord(tx, c.rec); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// splitContractKeys separates a schema 1 contract's keys in effect or pending from its revoked
// ones (kept for a replay of addKey only: they never had a secret once revoked).
func splitContractKeys(keys []storedKey, at time.Time) (live []storedKey, revoked []keyTombstone) {
	for _, k := range keys {
		if k.State != keyRemoved {
			live = append(live, k)
			continue
		}
		revoked = append(revoked, keyTombstone{AccessKeyID: k.AccessKeyID, IdempotencyKey: k.IdempotencyKey, CreatedAt: k.CreatedAt, RevokedAt: at})
	}
	return live, revoked
}

// migratePrincipal writes one schema 1 principal as schema 2 stores it.
func migratePrincipal(tx *bolt.Tx, rec *record, lp legacyPrincipal, at time.Time) error {
	if err := tx.Bucket(bucketPrincipalIdempotency).Put(principalIdempotencyKey(rec.ID, lp.IdempotencyKey), []byte(lp.ID)); err != nil {
		return err
	}
	p := storedPrincipal{ID: lp.ID, IdempotencyKey: lp.IdempotencyKey, State: lp.State, CreatedAt: lp.CreatedAt}
	if lp.State == principalDeleted {
		deleted := at
		if lp.DeletedAt != nil {
			deleted = *lp.DeletedAt
		}
		return buryPrincipal(tx, rec.ID, &p, deleted)
	}
	if len(lp.Keys) == 0 {
		return fmt.Errorf("a principal in state %q without keys", lp.State)
	}
	p.FirstKey = lp.Keys[0]
	for _, k := range lp.Keys {
		if k.State != keyRemoved {
			p.Keys = append(p.Keys, k)
			continue
		}
		p.Revoked = append(p.Revoked, keyTombstone{AccessKeyID: k.AccessKeyID, IdempotencyKey: k.IdempotencyKey,
			SealedSecret: k.SealedSecret, CreatedAt: k.CreatedAt, RevokedAt: at})
	}
	return writePrincipal(tx, rec.ID, &p)
}
