package contractserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Record states. provisioning is internal: the record and its first key exist, the account may
// not yet. The API shows only active and cancelled.
const (
	stateProvisioning = "provisioning"
	stateActive       = "active"
	stateCancelled    = "cancelled"
)

// Key states. A pending key was recorded before the backend was asked to make it; it is never
// shown, and the account's deletion removes it with the rest if the backend did make it.
const (
	keyPending = "pending"
	keyActive  = "active"
)

var (
	bucketContracts   = []byte("contracts")
	bucketIdempotency = []byte("idempotency")
)

var errRecordNotFound = errors.New("record not found")

// record is a contract as stored. It keeps the request it was created from (to recognise an
// idempotent replay) and the first secret, sealed (so a replay can return it again).
type record struct {
	ID             string         `json:"id"`
	IdempotencyKey string         `json:"idempotencyKey"`
	Request        storedRequest  `json:"request"`
	State          string         `json:"state"`
	Endpoint       string         `json:"endpoint"`
	Region         string         `json:"region"`
	QuotaBytes     int64          `json:"quotaBytes,omitempty"`
	FirstKey       storedFirstKey `json:"firstKey"`
	Keys           []storedKey    `json:"keys"`
	CreatedAt      time.Time      `json:"createdAt"`
	CancelledAt    *time.Time     `json:"cancelledAt,omitempty"`
	// Principals are kept in their contract's record, so one transaction cancels a contract
	// together with its principals.
	Principals []storedPrincipal `json:"principals,omitempty"`
	// Topics are the contract's notification topics, kept here for the same reason.
	Topics []storedTopic `json:"topics,omitempty"`
}

// storedRequest is the create request as sent.
type storedRequest struct {
	Plan        string           `json:"plan"`
	Region      *string          `json:"region,omitempty"`
	DisplayName *string          `json:"displayName,omitempty"`
	Requester   *storedRequester `json:"requester,omitempty"`
}

type storedRequester struct {
	Namespace *string `json:"namespace,omitempty"`
	Name      *string `json:"name,omitempty"`
}

// sameRequest reports whether two create requests ask for the same contract: the same plan and
// region. The display name and requester only describe it, and a caller replaying its request
// after a crash may have changed them since.
func sameRequest(a, b storedRequest) bool {
	return a.Plan == b.Plan && ptrEqual(a.Region, b.Region)
}

// ptrEqual compares optional fields as they were on the wire: absent differs from empty.
func ptrEqual(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// storedFirstKey is the first key pair as stored: the secret sealed by a secretBox. The JSON
// names are the ones records have always used.
type storedFirstKey struct {
	AccessKeyID  string `json:"AccessKeyID"`
	SealedSecret []byte `json:"sealedSecret,omitempty"`
	// PlainSecret is the secret as records written before encryption held it; openStore seals
	// it, so no other code sees it set.
	PlainSecret string `json:"SecretAccessKey,omitempty"`
}

// storedKey is a key pair of a contract. The first key's secret is in FirstKey; a key added
// later keeps the addKey request's idempotency key and its secret, sealed, until it is revoked,
// so a replay answers as the first answer did.
type storedKey struct {
	AccessKeyID string `json:"accessKeyId"`
	// IdempotencyKey is the addKey request's; empty for the first key.
	IdempotencyKey string    `json:"idempotencyKey,omitempty"`
	State          string    `json:"state"`
	SealedSecret   []byte    `json:"sealedSecret,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Principal states. A pending principal was recorded before the backend was asked to make it;
// it is shown to no one, and finished by a replay of its creation. A deleted one stays as a
// tombstone without keys, so its idempotency key never makes a second principal.
const (
	principalPending = "pending"
	principalActive  = "active"
	principalDeleted = "deleted"
)

// keyRemoved marks a principal's key pair that was revoked. It stays, with its sealed secret,
// so a replay of the call that made it answers as the first answer did. A contract's key pair
// made by addKey stays too, without its secret, so a replay is told it was revoked rather than
// given a second key pair.
const keyRemoved = "removed"

// storedPrincipal is a principal as stored. Its first key is Keys[0].
type storedPrincipal struct {
	ID             string               `json:"id"`
	IdempotencyKey string               `json:"idempotencyKey"`
	State          string               `json:"state"`
	Keys           []storedPrincipalKey `json:"keys,omitempty"`
	CreatedAt      time.Time            `json:"createdAt"`
	DeletedAt      *time.Time           `json:"deletedAt,omitempty"`
}

// storedPrincipalKey is a key pair of a principal, its secret sealed by a secretBox.
type storedPrincipalKey struct {
	AccessKeyID string `json:"accessKeyId"`
	// IdempotencyKey is the addPrincipalKey request's; empty for the first key.
	IdempotencyKey string    `json:"idempotencyKey,omitempty"`
	State          string    `json:"state"`
	SealedSecret   []byte    `json:"sealedSecret"`
	CreatedAt      time.Time `json:"createdAt"`
}

// principal returns the principal with this id, or nil.
func (r *record) principal(id string) *storedPrincipal {
	for i := range r.Principals {
		if r.Principals[i].ID == id {
			return &r.Principals[i]
		}
	}
	return nil
}

// principalByIdempotencyKey returns the principal created with this key, or nil.
func (r *record) principalByIdempotencyKey(key string) *storedPrincipal {
	for i := range r.Principals {
		if r.Principals[i].IdempotencyKey == key {
			return &r.Principals[i]
		}
	}
	return nil
}

// key returns the key pair with this access key id, or nil.
func (p *storedPrincipal) key(accessKeyID string) *storedPrincipalKey {
	for i := range p.Keys {
		if p.Keys[i].AccessKeyID == accessKeyID {
			return &p.Keys[i]
		}
	}
	return nil
}

// keyByIdempotencyKey returns the key pair added with this key, or nil.
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
	var ids []string
	for _, k := range p.Keys {
		if k.State != keyRemoved {
			ids = append(ids, k.AccessKeyID)
		}
	}
	return ids
}

// markDeleted turns the principal into a tombstone: no keys, no secrets.
func (p *storedPrincipal) markDeleted(at time.Time) {
	p.State, p.DeletedAt, p.Keys = principalDeleted, &at, nil
}

// keyByIdempotencyKey returns the key pair added with this key, or nil.
func (r *record) keyByIdempotencyKey(key string) *storedKey {
	for i := range r.Keys {
		if k := &r.Keys[i]; k.IdempotencyKey != "" && k.IdempotencyKey == key {
			return k
		}
	}
	return nil
}

// key returns the key pair with this access key id, or nil.
func (r *record) key(accessKeyID string) *storedKey {
	for i := range r.Keys {
		if r.Keys[i].AccessKeyID == accessKeyID {
			return &r.Keys[i]
		}
	}
	return nil
}

func (r *record) activeKeys() []storedKey {
	var keys []storedKey
	for _, k := range r.Keys {
		if k.State == keyActive {
			keys = append(keys, k)
		}
	}
	return keys
}

// store keeps contract records in a bbolt file: contracts by id, and an index from idempotency
// key to id. Every write is one bbolt transaction, fsynced before it returns.
type store struct {
	db *bolt.DB
}

// openStore opens the records in dir, first sealing the secrets of records written before
// encryption; it returns how many it sealed.
func openStore(dir string, box *secretBox) (*store, int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("creating data dir %q: %w", dir, err)
	}
	path := filepath.Join(dir, "contracts.db")
	sealed, err := sealPlainSecrets(path, box)
	if err != nil {
		return nil, 0, err
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, 0, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketContracts, bucketIdempotency} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, 0, fmt.Errorf("initialising %q: %w", path, err)
	}
	return &store{db: db}, sealed, nil
}

func openBolt(path string) (*bolt.DB, error) {
	// The timeout turns a second server on the same directory into an error instead of a hang.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening %q: %w", path, err)
	}
	return db, nil
}

// sealPlainSecrets rewrites the file at path when records written before encryption hold their
// secret in the clear: into a new file with every secret sealed, renamed over the old one.
// Sealing in place would leave the plaintext in the old pages bbolt frees but does not erase;
// and a crash leaves either file whole, the old one to be sealed again at the next start.
func sealPlainSecrets(path string, box *secretBox) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	src, err := openBolt(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = src.Close() }()
	tmp := path + ".sealing"
	_ = os.Remove(tmp) // left by a crash during an earlier attempt
	sealed := 0
	err = src.View(func(stx *bolt.Tx) error {
		contracts := stx.Bucket(bucketContracts)
		if contracts == nil {
			return nil
		}
		err := contracts.ForEach(func(_, v []byte) error {
			var rec record
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			if rec.FirstKey.PlainSecret != "" {
				sealed++
			}
			return nil
		})
		if err != nil || sealed == 0 {
			return err
		}
		dst, err := bolt.Open(tmp, 0o600, nil)
		if err != nil {
			return err
		}
		// The source transaction stays open until dst commits: Put keeps references to its pages.
		err = dst.Update(func(dtx *bolt.Tx) error { return copySealed(stx, dtx, box) })
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		_ = os.Remove(tmp)
		return 0, fmt.Errorf("encrypting the secret keys in %q: %w", path, err)
	}
	if sealed == 0 {
		return 0, nil
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	return sealed, syncDir(filepath.Dir(path))
}

// copySealed copies every bucket of src into dst, sealing the plaintext secrets on the way.
func copySealed(src, dst *bolt.Tx, box *secretBox) error {
	return src.ForEach(func(name []byte, b *bolt.Bucket) error {
		out, err := dst.CreateBucket(name)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return fmt.Errorf("unexpected nested bucket %q in %q", k, name)
			}
			if string(name) != string(bucketContracts) {
				return out.Put(k, v)
			}
			var rec record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decoding contract %q: %w", k, err)
			}
			if fk := &rec.FirstKey; fk.PlainSecret != "" {
				fk.SealedSecret, fk.PlainSecret = box.seal(rec.ID, fk.PlainSecret), ""
			}
			data, err := json.Marshal(&rec)
			if err != nil {
				return err
			}
			return out.Put(k, data)
		})
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

func (s *store) close() error { return s.db.Close() }

// get returns the contract with this id, or errRecordNotFound.
func (s *store) get(id string) (*record, error) {
	var rec *record
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		rec, err = getRecord(tx, id)
		return err
	})
	return rec, err
}

// byIdempotencyKey returns the contract created with this key, or errRecordNotFound.
func (s *store) byIdempotencyKey(key string) (*record, error) {
	var rec *record
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketIdempotency).Get([]byte(key))
		if id == nil {
			return errRecordNotFound
		}
		var err error
		rec, err = getRecord(tx, string(id))
		return err
	})
	return rec, err
}

// insert stores a new contract and its idempotency key in one transaction.
func (s *store) insert(rec *record) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		idx := tx.Bucket(bucketIdempotency)
		if idx.Get([]byte(rec.IdempotencyKey)) != nil {
			return fmt.Errorf("idempotency key already indexed")
		}
		if err := idx.Put([]byte(rec.IdempotencyKey), []byte(rec.ID)); err != nil {
			return err
		}
		return putRecord(tx, rec)
	})
}

// update applies fn to the stored contract and writes the result back, atomically.
func (s *store) update(id string, fn func(*record) error) (*record, error) {
	var rec *record
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		if rec, err = getRecord(tx, id); err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
		return putRecord(tx, rec)
	})
	return rec, err
}

func getRecord(tx *bolt.Tx, id string) (*record, error) {
	data := tx.Bucket(bucketContracts).Get([]byte(id))
	if data == nil {
		return nil, errRecordNotFound
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("decoding contract %q: %w", id, err)
	}
	return &rec, nil
}

func putRecord(tx *bolt.Tx, rec *record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding contract %q: %w", rec.ID, err)
	}
	return tx.Bucket(bucketContracts).Put([]byte(rec.ID), data)
}
