package contractserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// AddKey records a pending key with its secret sealed, asks the backend for it, then marks it
// active. A replay with the same Idempotency-Key answers the recorded key pair, finishing it
// first when an earlier attempt did not, so a lost answer never makes a second key pair.
func (s *Server) AddKey(ctx context.Context, req contractapi.AddKeyRequestObject) (contractapi.AddKeyResponseObject, error) {
	key := req.Params.IdempotencyKey
	if err := validateIdempotencyKey(key); err != nil {
		return nil, err
	}
	defer s.locks.Lock("contract/" + req.Id)()
	rec, err := s.activeContract(req.Id)
	if err != nil {
		return nil, err
	}
	k := rec.keyByIdempotencyKey(key)
	switch {
	case k == nil && revokedByIdempotencyKey(rec.Revoked, key) != nil:
		t := revokedByIdempotencyKey(rec.Revoked, key)
		return nil, newProblem(contractapi.ProblemKeyRevoked, http.StatusGone,
			"key %q, made for Idempotency-Key %q, was revoked; a new key pair needs a new key", t.AccessKeyID, key)
	case k == nil:
		if !within(len(rec.Keys), s.limits.Keys) {
			return nil, limitExceeded("contract %s has %d keys, the most this server allows; revoke one first", rec.ID, len(rec.Keys))
		}
		creds := newCredentials(newAccessKeyID())
		rec, err = s.store.update(rec.ID, func(r *record) error {
			r.Keys = append(r.Keys, storedKey{AccessKeyID: creds.AccessKeyID, IdempotencyKey: key, State: keyPending,
				SealedSecret: s.secrets.sealContractKey(r.ID, creds.AccessKeyID, creds.SecretAccessKey), CreatedAt: now()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("recording new key of contract %s: %w", req.Id, err)
		}
		k = rec.key(creds.AccessKeyID)
	case k.State == keyActive:
		creds, err := s.contractKey(rec.ID, k)
		if err != nil {
			return nil, err
		}
		return contractapi.AddKey200JSONResponse{AccessKeyId: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey}, nil
	}
	// Pending: recorded just now, or by an attempt that did not finish.
	creds, err := s.contractKey(rec.ID, k)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := s.backend.AddKey(bctx, rec.account(), creds); err != nil {
		if errors.Is(err, ErrNotSupported) {
			// Nothing was made: forget the pending key. Any other failure may have made it: the
			// key stays pending, for a replay to finish or the account's deletion to remove.
			_, _ = s.store.update(rec.ID, func(r *record) error { r.Keys = withoutKey(r.Keys, creds.AccessKeyID); return nil })
		}
		return nil, backendProblem("adding a key", fmt.Errorf("adding key to contract %s: %w", rec.ID, err))
	}
	_, err = s.store.update(rec.ID, func(r *record) error {
		r.key(creds.AccessKeyID).State = keyActive
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking key of contract %s active: %w", rec.ID, err)
	}
	s.log.Info("Key added", "contract", rec.ID, "accessKeyId", creds.AccessKeyID)
	return contractapi.AddKey201JSONResponse{AccessKeyId: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey}, nil
}

// contractKey opens the secret of a key pair added to a contract.
func (s *Server) contractKey(contractID string, k *storedKey) (Credentials, error) {
	secret, err := s.secrets.openContractKey(contractID, k.AccessKeyID, k.SealedSecret)
	if err != nil {
		return Credentials{}, fmt.Errorf("opening the secret of key %q of contract %s: %w", k.AccessKeyID, contractID, err)
	}
	return Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: secret}, nil
}

// RemoveKey revokes a key at the backend, then forgets it, keeping a tombstone of a key made by
// addKey (bounded like a principal's, see keyTombstone); never the last one.
func (s *Server) RemoveKey(ctx context.Context, req contractapi.RemoveKeyRequestObject) (contractapi.RemoveKeyResponseObject, error) {
	defer s.locks.Lock("contract/" + req.Id)()
	rec, err := s.activeContract(req.Id)
	if err != nil {
		return nil, err
	}
	active := rec.activeKeys()
	if !slices.ContainsFunc(active, func(k storedKey) bool { return k.AccessKeyID == req.AccessKeyId }) {
		return nil, newProblem(contractapi.ProblemNotFound, http.StatusNotFound, "contract %s has no key %q", rec.ID, req.AccessKeyId)
	}
	if len(active) == 1 {
		return nil, newProblem(contractapi.ProblemLastKey, http.StatusConflict,
			"key %q is the only key of contract %s; add another first, or cancel the contract", req.AccessKeyId, rec.ID)
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := s.backend.RemoveKey(bctx, rec.account(), req.AccessKeyId); err != nil {
		return nil, backendProblem("revoking a key", fmt.Errorf("removing key %q of contract %s: %w", req.AccessKeyId, rec.ID, err))
	}
	_, err = s.store.update(rec.ID, func(r *record) error {
		k := *r.key(req.AccessKeyId)
		r.Keys = withoutKey(r.Keys, req.AccessKeyId)
		if k.IdempotencyKey != "" {
			// Kept without its secret, so a replay of the addKey that made it is told it was revoked.
			r.Revoked = append(r.Revoked, keyTombstone{AccessKeyID: k.AccessKeyID, IdempotencyKey: k.IdempotencyKey, CreatedAt: k.CreatedAt, RevokedAt: now()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("forgetting key %q of contract %s: %w", req.AccessKeyId, rec.ID, err)
	}
	s.log.Info("Key removed", "contract", rec.ID, "accessKeyId", req.AccessKeyId)
	return contractapi.RemoveKey204Response{}, nil
}

// activeContract returns a visible contract whose keys may change.
func (s *Server) activeContract(id string) (*record, error) {
	rec, err := s.visible(id)
	if err != nil {
		return nil, err
	}
	if rec.State == stateCancelled {
		return nil, newProblem(contractapi.ProblemContractCancelled, http.StatusConflict, "contract %s is cancelled", id)
	}
	return rec, nil
}

func withoutKey(keys []storedKey, accessKeyID string) []storedKey {
	return slices.DeleteFunc(keys, func(k storedKey) bool { return k.AccessKeyID == accessKeyID })
}
