package contractserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// AddKey records a pending key, asks the backend for it, then marks it active. The secret is
// returned once and not stored.
func (s *Server) AddKey(ctx context.Context, req contractapi.AddKeyRequestObject) (contractapi.AddKeyResponseObject, error) {
	defer s.locks.Lock("contract/" + req.Id)()
	rec, err := s.activeContract(req.Id)
	if err != nil {
		return nil, err
	}
	creds := newCredentials(newAccessKeyID())
	_, err = s.store.update(rec.ID, func(r *record) error {
		r.Keys = append(r.Keys, storedKey{AccessKeyID: creds.AccessKeyID, State: keyPending, CreatedAt: now()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recording new key of contract %s: %w", rec.ID, err)
	}

	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), backendTimeout)
	defer cancel()
	if err := s.backend.AddKey(bctx, rec.ID, creds); err != nil {
		if errors.Is(err, ErrNotSupported) {
			// Nothing was made: forget the pending key. Any other failure may have made it, and
			// the account's deletion removes it then.
			_, _ = s.store.update(rec.ID, func(r *record) error { r.Keys = withoutKey(r.Keys, creds.AccessKeyID); return nil })
		}
		return nil, backendProblem("adding a key", fmt.Errorf("adding key to contract %s: %w", rec.ID, err))
	}
	_, err = s.store.update(rec.ID, func(r *record) error {
		for i := range r.Keys {
			if r.Keys[i].AccessKeyID == creds.AccessKeyID {
				r.Keys[i].State = keyActive
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking key of contract %s active: %w", rec.ID, err)
	}
	s.log.Info("Key added", "contract", rec.ID, "accessKeyId", creds.AccessKeyID)
	return contractapi.AddKey201JSONResponse{AccessKeyId: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey}, nil
}

// RemoveKey revokes a key at the backend, then forgets it; never the last one.
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
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), backendTimeout)
	defer cancel()
	if err := s.backend.RemoveKey(bctx, rec.ID, req.AccessKeyId); err != nil {
		return nil, backendProblem("revoking a key", fmt.Errorf("removing key %q of contract %s: %w", req.AccessKeyId, rec.ID, err))
	}
	_, err = s.store.update(rec.ID, func(r *record) error { r.Keys = withoutKey(r.Keys, req.AccessKeyId); return nil })
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
