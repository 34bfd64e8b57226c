package contractserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// shown, and the account's deletion removes it with the rest if the backend did make it. A key
// that is revoked leaves the live keys for a keyTombstone.
const (
	keyPending = "pending"
	keyActive  = "active"
	// keyRemoved is how records written before tombstones (schema 1) marked a revoked key in
	// place; migrate turns those into tombstones, so no other code sees it.
	keyRemoved = "removed"
)

var (
	bucketContracts   = []byte("contracts")
	bucketIdempotency = []byte("idempotency")
	// bucketMeta holds the layout version of the file (metaSchema).
	bucketMeta = []byte("meta")
	metaSchema = []byte("schema")
)

var errRecordNotFound = errors.New("record not found")

// record is a contract as stored. It keeps the request it was created from (to recognise an
// idempotent replay) and the first secret, sealed (so a replay can return it again). Its
// principals are records of their own (principal_store.go), so changing one rewrites neither
// the contract nor the others.
type record struct {
	ID string `json:"id"`
	// Account is what the backend named the contract's account (AccountNamer); empty for a
	// backend that names none and for contracts recorded before it did. See account.
	Account        string         `json:"account,omitempty"`
	IdempotencyKey string         `json:"idempotencyKey"`
	Request        storedRequest  `json:"request"`
	State          string         `json:"state"`
	Endpoint       string         `json:"endpoint"`
	Region         string         `json:"region"`
	QuotaBytes     int64          `json:"quotaBytes,omitempty"`
	FirstKey       storedFirstKey `json:"firstKey"`
	// Keys are the key pairs that may exist at the backend: active, and pending ones.
	Keys []storedKey `json:"keys"`
	// Revoked are the tombstones of key pairs made by addKey and revoked since, oldest first,
	// bounded by trimRevoked.
	Revoked   []keyTombstone `json:"revoked,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	// CancelledAt is set once the contract is cancelled.
	CancelledAt *time.Time `json:"cancelledAt,omitempty"`
	// Topics are the contract's notification topics, few (Limits.Topics) and without
	// tombstones, so they stay in the record and go with its cancel in one transaction.
	Topics []storedTopic `json:"topics,omitempty"`
	// OIDCProvider is the issuer the account trusts, and Roles the roles its tokens assume
	// (Limits.Roles), kept in the record as topics are.
	OIDCProvider *storedOIDCProvider `json:"oidcProvider,omitempty"`
	Roles        []storedRole        `json:"roles,omitempty"`
}

// account names the contract in every backend call: the name the backend gave its account, or
// the contract id.
func (r *record) account() string {
	if r.Account != "" {
		return r.Account
	}
	return r.ID
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

// keyTombstone is what stays of a revoked key pair, so that a replay of the call that made it
// is answered as before (a contract's key: 410 key-revoked; a principal's: the key pair, with
// its secret) and a replay of its revocation is answered 204. It is kept for the retention
// (Limits.TombstoneRetention) and at most Limits.RevokedKeys of them per contract or principal,
// the newest: a client replays only its latest request (it records an answer before it asks
// for the next key), so a replay behind that many later keys of the same owner is stale.
type keyTombstone struct {
	AccessKeyID    string `json:"accessKeyId"`
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// SealedSecret is kept for a principal's key only.
	SealedSecret []byte    `json:"sealedSecret,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	RevokedAt    time.Time `json:"revokedAt"`
}

// trimRevoked drops the tombstones revoked before cutoff and all but the newest keep (all when
// keep is negative).
func trimRevoked(ts []keyTombstone, cutoff time.Time, keep int) []keyTombstone {
	ts = slices.DeleteFunc(ts, func(t keyTombstone) bool { return t.RevokedAt.Before(cutoff) })
	if keep >= 0 && len(ts) > keep {
		ts = slices.Delete(ts, 0, len(ts)-keep)
	}
	return ts
}

// revokedByIdempotencyKey and revokedByID find a tombstone, or nil.
func revokedByIdempotencyKey(ts []keyTombstone, key string) *keyTombstone {
	if i := slices.IndexFunc(ts, func(t keyTombstone) bool { return t.IdempotencyKey != "" && t.IdempotencyKey == key }); i >= 0 {
		return &ts[i]
	}
	return nil
}

func revokedByID(ts []keyTombstone, accessKeyID string) *keyTombstone {
	if i := slices.IndexFunc(ts, func(t keyTombstone) bool { return t.AccessKeyID == accessKeyID }); i >= 0 {
		return &ts[i]
	}
	return nil
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
// key to id; principals in records of their own (principal_store.go). Every write is one bbolt
// transaction, fsynced before it returns.
type store struct {
	db *bolt.DB
	// lim bounds the tombstones; now is the clock that ages them (tests move it).
	lim Limits
	now func() time.Time
	// afterWrite is Config.AfterStoreWrite.
	afterWrite func(op, id string)
}

// write runs fn in one write transaction and, once it has committed, tells afterWrite what was
// written: op and the contract or principal id.
func (s *store) write(op, id string, fn func(tx *bolt.Tx) error) error {
	if err := s.db.Update(fn); err != nil {
		return err
	}
	if s.afterWrite != nil {
		s.afterWrite(op, id)
	}
	return nil
}

// schemaVersion is the layout openStore leaves a file in: 2 keeps principals out of the
// contract record and revoked keys as bounded tombstones; 1 (no meta bucket) is the layout
// before, which migrate converts.
const schemaVersion = "2"

// opened says what openStore did to records written by an older server.
type opened struct {
	// sealed counts contracts whose first secret was stored in the clear, migrated those
	// whose principals were kept in the contract's record.
	sealed, migrated int
}

// openStore opens the records in dir, first sealing the secrets of records written before
// encryption, then moving records of the older layout into the current one.
func openStore(dir string, box *secretBox, lim Limits) (*store, opened, error) {
	var did opened
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, did, fmt.Errorf("creating data dir %q: %w", dir, err)
	}
	path := filepath.Join(dir, "contracts.db")
	var err error
	if did.sealed, err = sealPlainSecrets(path, box); err != nil {
		return nil, did, err
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, did, err
	}
	st := &store{db: db, lim: lim, now: time.Now}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketContracts, bucketIdempotency, bucketMeta, bucketPrincipals, bucketDeletedPrincipals, bucketPrincipalIdempotency} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if string(tx.Bucket(bucketMeta).Get(metaSchema)) != schemaVersion {
			if did.migrated, err = migrate(tx); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(metaSchema, []byte(schemaVersion)); err != nil {
			return err
		}
		_, err = st.compact(tx)
		return err
	})
	if err != nil {
		_ = db.Close()
		return nil, did, fmt.Errorf("initialising %q: %w", path, err)
	}
	return st, did, nil
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

// copySealed copies every bucket of src into dst, sealing the plaintext secrets on the way. A
// record is changed in its firstKey alone, so fields of a layout this server no longer reads
// (migrate's) are copied as they were.
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
			var rec map[string]json.RawMessage
			var head struct {
				ID       string         `json:"id"`
				FirstKey storedFirstKey `json:"firstKey"`
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decoding contract %q: %w", k, err)
			}
			if err := json.Unmarshal(v, &head); err != nil {
				return fmt.Errorf("decoding contract %q: %w", k, err)
			}
			if fk := &head.FirstKey; fk.PlainSecret != "" {
				fk.SealedSecret, fk.PlainSecret = box.seal(head.ID, fk.PlainSecret), ""
				if rec["firstKey"], err = json.Marshal(fk); err != nil {
					return err
				}
			}
			data, err := json.Marshal(rec)
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

// viewed returns what read reads in a read-only transaction of s.
func viewed[T any](s *store, read func(tx *bolt.Tx) (T, error)) (T, error) {
	var v T
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = read(tx)
		return err
	})
	return v, err
}

// get returns the contract with this id, or errRecordNotFound.
func (s *store) get(id string) (*record, error) {
	return viewed(s, func(tx *bolt.Tx) (*record, error) { return getRecord(tx, id) })
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
	return s.write("insert contract", rec.ID, func(tx *bolt.Tx) error {
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

// update applies fn to the stored contract and writes the result back, atomically, its
// tombstones trimmed.
func (s *store) update(id string, fn func(*record) error) (*record, error) {
	var rec *record
	err := s.write("update contract", id, func(tx *bolt.Tx) error {
		var err error
		if rec, err = getRecord(tx, id); err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
		rec.Revoked = s.trim(rec.Revoked)
		return putRecord(tx, rec)
	})
	return rec, err
}

// trim drops the tombstones of revoked keys the limits no longer keep.
func (s *store) trim(ts []keyTombstone) []keyTombstone {
	return trimRevoked(ts, s.cutoff(), s.lim.RevokedKeys)
}

// cutoff is when a tombstone must have been made to be kept still; the zero time keeps all.
func (s *store) cutoff() time.Time {
	if s.lim.TombstoneRetention < 0 {
		return time.Time{}
	}
	return s.now().Add(-s.lim.TombstoneRetention)
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
