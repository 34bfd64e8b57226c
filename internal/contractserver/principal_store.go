package contractserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// Principals are stored apart from their contract, one bbolt value each, so that a rotation
// rewrites one principal and the work of a call does not grow with the contract's history:
//
//   - bucketPrincipals: "<contract>/<principal>" -> the principal, pending or active, with its
//     keys in effect and the tombstones of its revoked keys (bounded like a contract's);
//   - bucketDeletedPrincipals: "<contract>/<deleted at>/<principal>" -> its tombstone, ordered
//     by deletion (8 bytes, big-endian seconds), so the expired ones of a contract are the
//     first of its keys and the count of the rest is a walk over keys alone;
//   - bucketPrincipalIdempotency: "<contract>/<Idempotency-Key>" -> the principal's id.
//
// A contract id never holds '/', so "<contract>/" is the prefix of exactly its entries. One
// transaction still changes a contract and all its principals together (a cancel).
var (
	bucketPrincipals           = []byte("principals")
	bucketDeletedPrincipals    = []byte("deletedPrincipals")
	bucketPrincipalIdempotency = []byte("principalIdempotency")
)

// Principal states. A pending principal was recorded before the backend was asked to make it;
// it is shown to no one, and finished by a replay of its creation. A deleted one leaves a
// principalTombstone.
const (
	principalPending = "pending"
	principalActive  = "active"
	principalDeleted = "deleted"
)

// storedPrincipal is a principal as stored.
type storedPrincipal struct {
	ID             string `json:"id"`
	IdempotencyKey string `json:"idempotencyKey"`
	State          string `json:"state"`
	// FirstKey is the key pair it was made with, kept while it lives, revoked or not: a replay
	// of its creation answers it.
	FirstKey storedPrincipalKey `json:"firstKey"`
	// Keys are the key pairs that may exist at the backend: active, and pending ones.
	Keys []storedPrincipalKey `json:"keys,omitempty"`
	// Revoked are the tombstones of its revoked keys, oldest first, bounded by store.trim.
	Revoked   []keyTombstone `json:"revoked,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
}

// storedPrincipalKey is a key pair of a principal, its secret sealed by a secretBox: stored as
// a contract's key pair is, the idempotency key being the addPrincipalKey request's.
type storedPrincipalKey = storedKey

// principalTombstone is what stays of a deleted principal for the retention, without keys: a
// replay of its creation is answered 410 principal-deleted instead of making a second one, and
// a replay of its deletion 204.
type principalTombstone struct {
	ID             string    `json:"id"`
	IdempotencyKey string    `json:"idempotencyKey"`
	CreatedAt      time.Time `json:"createdAt"`
	DeletedAt      time.Time `json:"deletedAt"`
}

// key returns the key pair in effect or pending with this access key id, or nil.
func (p *storedPrincipal) key(accessKeyID string) *storedPrincipalKey {
	for i := range p.Keys {
		if p.Keys[i].AccessKeyID == accessKeyID {
			return &p.Keys[i]
		}
	}
	return nil
}

// keyByIdempotencyKey returns the key pair in effect or pending added with this key, or nil.
func (p *storedPrincipal) keyByIdempotencyKey(key string) *storedPrincipalKey {
	for i := range p.Keys {
		if k := &p.Keys[i]; k.IdempotencyKey != "" && k.IdempotencyKey == key {
			return k
		}
	}
	return nil
}

// activeKeyIDs are the access key ids in effect, oldest first.
func (p *storedPrincipal) activeKeyIDs() []string {
	ids := []string{}
	for _, k := range p.Keys {
		if k.State == keyActive {
			ids = append(ids, k.AccessKeyID)
		}
	}
	return ids
}

// liveKeyIDs are the access key ids that may exist at the backend: active, and pending ones
// the backend may have made before an answer was lost.
func (p *storedPrincipal) liveKeyIDs() []string {
	ids := make([]string, 0, len(p.Keys))
	for _, k := range p.Keys {
		ids = append(ids, k.AccessKeyID)
	}
	return ids
}

// revokeKey moves a key pair from the live keys to the tombstones.
func (p *storedPrincipal) revokeKey(accessKeyID string, at time.Time) {
	for i, k := range p.Keys {
		if k.AccessKeyID == accessKeyID {
			p.Revoked = append(p.Revoked, keyTombstone{AccessKeyID: k.AccessKeyID, IdempotencyKey: k.IdempotencyKey,
				SealedSecret: k.SealedSecret, CreatedAt: k.CreatedAt, RevokedAt: at})
			p.Keys = append(p.Keys[:i], p.Keys[i+1:]...)
			return
		}
	}
}

// tombstone is what stays of p once deleted at at.
func (p *storedPrincipal) tombstone(at time.Time) principalTombstone {
	return principalTombstone{ID: p.ID, IdempotencyKey: p.IdempotencyKey, CreatedAt: p.CreatedAt, DeletedAt: at}
}

func contractPrefix(contractID string) []byte { return []byte(contractID + "/") }

func principalKey(contractID, principalID string) []byte {
	return []byte(contractID + "/" + principalID)
}

func principalIdempotencyKey(contractID, key string) []byte {
	return []byte(contractID + "/" + key)
}

// deletedKey orders a contract's tombstones by deletion, to the second.
func deletedKey(contractID string, at time.Time, principalID string) []byte {
	k := contractPrefix(contractID)
	k = binary.BigEndian.AppendUint64(k, uint64(max(at.Unix(), 0)))
	return append(append(k, '/'), principalID...)
}

// deletedAt reads the time back from a deletedKey with prefix.
func deletedAt(prefix, k []byte) time.Time {
	if len(k) < len(prefix)+8 {
		return time.Time{}
	}
	return time.Unix(int64(binary.BigEndian.Uint64(k[len(prefix):])), 0)
}

// principal returns the contract's live principal with this id, or nil.
func (s *store) principal(contractID, principalID string) (*storedPrincipal, error) {
	return viewed(s, func(tx *bolt.Tx) (*storedPrincipal, error) { return readPrincipal(tx, contractID, principalID) })
}

// deletedPrincipal returns the tombstone of the contract's principal with this id, or nil.
func (s *store) deletedPrincipal(contractID, principalID string) (*principalTombstone, error) {
	return viewed(s, func(tx *bolt.Tx) (*principalTombstone, error) { return findTombstone(tx, contractID, principalID) })
}

// principalByIdempotencyKey returns the principal the contract made for key: live, or its
// tombstone, or neither.
func (s *store) principalByIdempotencyKey(contractID, key string) (*storedPrincipal, *principalTombstone, error) {
	var (
		p    *storedPrincipal
		dead *principalTombstone
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketPrincipalIdempotency).Get(principalIdempotencyKey(contractID, key))
		if id == nil {
			return nil
		}
		var err error
		if p, err = readPrincipal(tx, contractID, string(id)); p != nil || err != nil {
			return err
		}
		dead, err = findTombstone(tx, contractID, string(id))
		return err
	})
	return p, dead, err
}

// livePrincipals returns every principal of the contract that may exist at the backend.
func (s *store) livePrincipals(contractID string) ([]storedPrincipal, error) {
	return viewed(s, func(tx *bolt.Tx) ([]storedPrincipal, error) { return principalsOf(tx, contractID) })
}

// principalsOf reads, in tx, every principal of the contract that may exist at the backend.
func principalsOf(tx *bolt.Tx, contractID string) ([]storedPrincipal, error) {
	var out []storedPrincipal
	prefix := contractPrefix(contractID)
	c := tx.Bucket(bucketPrincipals).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var p storedPrincipal
		if err := json.Unmarshal(v, &p); err != nil {
			return nil, fmt.Errorf("decoding principal %q: %w", k, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// insertPrincipal records a new principal of the contract and its idempotency key, within the
// contract's budget: at most lim.Principals live ones (422 limit-exceeded: nothing frees a
// place but a deletion), and at most as many deleted within the retention (429 with the wait
// until the oldest tombstone expires), so that creating and deleting principals in a loop
// neither grows the records nor forgets a tombstone before its time.
func (s *store) insertPrincipal(contractID string, p *storedPrincipal) error {
	return s.write("insert principal", p.ID, func(tx *bolt.Tx) error {
		if _, err := compactContract(tx, contractID, s.cutoff()); err != nil {
			return err
		}
		if n := s.lim.Principals; n >= 0 {
			if live := countPrefix(tx.Bucket(bucketPrincipals), contractPrefix(contractID)); live >= n {
				return limitExceeded("contract %s has %d principals, the most this server allows; delete one first", contractID, live)
			}
			if dead, oldest := tombstones(tx, contractID); dead >= n {
				pr := newProblem(contractapi.ProblemRateLimited, http.StatusTooManyRequests,
					"contract %s deleted %d principals in the last %s, the most this server remembers; a new one can be made once the oldest is forgotten",
					contractID, dead, s.lim.TombstoneRetention)
				pr.RetryAfter = max(1, int(oldest.Add(s.lim.TombstoneRetention).Sub(s.now()).Seconds())+1)
				return pr
			}
		}
		idx := tx.Bucket(bucketPrincipalIdempotency)
		if idx.Get(principalIdempotencyKey(contractID, p.IdempotencyKey)) != nil {
			return fmt.Errorf("idempotency key already indexed")
		}
		if err := idx.Put(principalIdempotencyKey(contractID, p.IdempotencyKey), []byte(p.ID)); err != nil {
			return err
		}
		return writePrincipal(tx, contractID, p)
	})
}

// updatePrincipal applies fn to the contract's live principal and writes it back, atomically,
// its tombstones trimmed.
func (s *store) updatePrincipal(contractID, principalID string, fn func(*storedPrincipal) error) (*storedPrincipal, error) {
	var p *storedPrincipal
	err := s.write("update principal", principalID, func(tx *bolt.Tx) error {
		var err error
		if p, err = readPrincipal(tx, contractID, principalID); err != nil {
			return err
		}
		if p == nil {
			return errRecordNotFound
		}
		if err := fn(p); err != nil {
			return err
		}
		p.Revoked = s.trim(p.Revoked)
		return writePrincipal(tx, contractID, p)
	})
	return p, err
}

// deletePrincipal turns the contract's live principal into a tombstone: no keys, no secrets.
func (s *store) deletePrincipal(contractID, principalID string, at time.Time) error {
	return s.write("delete principal", principalID, func(tx *bolt.Tx) error {
		p, err := readPrincipal(tx, contractID, principalID)
		if err != nil || p == nil {
			return err
		}
		return buryPrincipal(tx, contractID, p, at)
	})
}

// cancel applies fn to the contract and turns every principal it has into a tombstone, in one
// transaction.
func (s *store) cancel(contractID string, at time.Time, fn func(*record)) error {
	return s.write("cancel contract", contractID, func(tx *bolt.Tx) error {
		rec, err := getRecord(tx, contractID)
		if err != nil {
			return err
		}
		fn(rec)
		if err := putRecord(tx, rec); err != nil {
			return err
		}
		live, err := principalsOf(tx, contractID)
		if err != nil {
			return err
		}
		for i := range live {
			if err := buryPrincipal(tx, contractID, &live[i], at); err != nil {
				return err
			}
		}
		return nil
	})
}

// compact forgets every principal tombstone older than the retention, with its idempotency
// key; it returns how many.
func (s *store) compact(tx *bolt.Tx) (int, error) {
	cutoff := s.cutoff()
	if cutoff.IsZero() {
		return 0, nil
	}
	var contracts []string
	err := tx.Bucket(bucketContracts).ForEach(func(k, _ []byte) error {
		contracts = append(contracts, string(k))
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range contracts {
		m, err := compactContract(tx, id, cutoff)
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// compactContract forgets the contract's principal tombstones deleted before cutoff (none when
// cutoff is zero): they are the first of its keys.
func compactContract(tx *bolt.Tx, contractID string, cutoff time.Time) (int, error) {
	if cutoff.IsZero() {
		return 0, nil
	}
	prefix := contractPrefix(contractID)
	b := tx.Bucket(bucketDeletedPrincipals)
	var expired [][]byte
	var keys []string
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && deletedAt(prefix, k).Before(cutoff); k, v = c.Next() {
		var t principalTombstone
		if err := json.Unmarshal(v, &t); err != nil {
			return 0, fmt.Errorf("decoding principal tombstone %q: %w", k, err)
		}
		expired = append(expired, bytes.Clone(k))
		keys = append(keys, t.IdempotencyKey)
	}
	idx := tx.Bucket(bucketPrincipalIdempotency)
	for i, k := range expired {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
		if err := idx.Delete(principalIdempotencyKey(contractID, keys[i])); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}

// buryPrincipal replaces a live principal with its tombstone.
func buryPrincipal(tx *bolt.Tx, contractID string, p *storedPrincipal, at time.Time) error {
	t := p.tombstone(at)
	data, err := json.Marshal(&t)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketDeletedPrincipals).Put(deletedKey(contractID, at, p.ID), data); err != nil {
		return err
	}
	return tx.Bucket(bucketPrincipals).Delete(principalKey(contractID, p.ID))
}

// tombstones counts the contract's principal tombstones and says when the oldest was deleted.
func tombstones(tx *bolt.Tx, contractID string) (n int, oldest time.Time) {
	prefix := contractPrefix(contractID)
	c := tx.Bucket(bucketDeletedPrincipals).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if n == 0 {
			oldest = deletedAt(prefix, k)
		}
		n++
	}
	return n, oldest
}

// findTombstone returns the tombstone of the contract's principal with this id, or nil: a walk
// over the contract's tombstone keys, at most as many as its budget.
func findTombstone(tx *bolt.Tx, contractID, principalID string) (*principalTombstone, error) {
	prefix := contractPrefix(contractID)
	suffix := []byte("/" + principalID)
	c := tx.Bucket(bucketDeletedPrincipals).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8+len(suffix) || !bytes.HasSuffix(k, suffix) {
			continue
		}
		var t principalTombstone
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, fmt.Errorf("decoding principal tombstone %q: %w", k, err)
		}
		return &t, nil
	}
	return nil, nil
}

func countPrefix(b *bolt.Bucket, prefix []byte) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}

func readPrincipal(tx *bolt.Tx, contractID, principalID string) (*storedPrincipal, error) {
	data := tx.Bucket(bucketPrincipals).Get(principalKey(contractID, principalID))
	if data == nil {
		return nil, nil
	}
	var p storedPrincipal
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decoding principal %s of contract %s: %w", principalID, contractID, err)
	}
	return &p, nil
}

func writePrincipal(tx *bolt.Tx, contractID string, p *storedPrincipal) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding principal %s of contract %s: %w", p.ID, contractID, err)
	}
	return tx.Bucket(bucketPrincipals).Put(principalKey(contractID, p.ID), data)
}
