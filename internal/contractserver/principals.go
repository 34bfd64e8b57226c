package contractserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// Principals follow the pattern of contracts: the principal or key pair is recorded, with its
// secret sealed, before the backend is asked to make it, so a crash in between is finished by a
// replay with the same Idempotency-Key instead of making a second one. Every call holds the
// contract's lock, so a principal is never made while its contract is being cancelled.

// CreatePrincipal records a pending principal with its first key pair, asks the backend for it,
// then marks it active. A replay answers the recorded principal and key pair; the replay of a
// principal deleted since is refused, for the tombstone retention (Limits).
func (s *Server) CreatePrincipal(ctx context.Context, req contractapi.CreatePrincipalRequestObject) (contractapi.CreatePrincipalResponseObject, error) {
	key := req.Params.IdempotencyKey
	if err := validateIdempotencyKey(key); err != nil {
		return nil, err
	}
	pb, rec, unlock, err := inAccount[PrincipalBackend](s, req.Id, lacksPrincipals, s.activeContract)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, dead, err := s.store.principalByIdempotencyKey(rec.ID, key)
	switch {
	case err != nil:
		return nil, fmt.Errorf("looking up the principal of contract %s for Idempotency-Key: %w", rec.ID, err)
	case dead != nil:
		return nil, newProblem(contractapi.ProblemPrincipalDeleted, http.StatusGone,
			"principal %s, made for Idempotency-Key %q, was deleted; a new principal needs a new key", dead.ID, key)
	case p == nil:
		if p, err = s.recordPrincipal(rec.ID, key); err != nil {
			return nil, err
		}
	case p.State == principalActive:
		answer, err := s.withPrincipalKey(pb, rec, p, &p.FirstKey)
		if err != nil {
			return nil, err
		}
		return contractapi.CreatePrincipal200JSONResponse(answer), nil
	}
	// Pending: recorded just now, or by an attempt that did not finish.
	first, err := s.principalKey(rec.ID, p, &p.FirstKey)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := pb.CreatePrincipal(bctx, rec.account(), p.ID, first); err != nil {
		return nil, backendProblem("creating the principal", fmt.Errorf("creating principal %s of contract %s: %w", p.ID, rec.ID, err))
	}
	p, err = s.store.updatePrincipal(rec.ID, p.ID, func(q *storedPrincipal) error {
		q.State = principalActive
		q.key(first.AccessKeyID).State = keyActive
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking principal of contract %s active: %w", req.Id, err)
	}
	s.log.Info("Principal created", "contract", rec.ID, "principal", p.ID, "accessKeyId", first.AccessKeyID)
	return contractapi.CreatePrincipal201JSONResponse(s.toPrincipalWithCredentials(pb, rec, p, first)), nil
}

// recordPrincipal stores a new pending principal of the contract with a first key pair, within
// the contract's budget.
func (s *Server) recordPrincipal(contractID, key string) (*storedPrincipal, error) {
	id := newPrincipalID()
	creds := newCredentials(newPrincipalAccessKeyID())
	created := now()
	first := storedPrincipalKey{
		AccessKeyID:  creds.AccessKeyID,
		State:        keyPending,
		SealedSecret: s.secrets.sealPrincipalKey(contractID, id, creds.AccessKeyID, creds.SecretAccessKey),
		CreatedAt:    created,
	}
	p := &storedPrincipal{ID: id, IdempotencyKey: key, State: principalPending, FirstKey: first, Keys: []storedPrincipalKey{first}, CreatedAt: created}
	if err := s.store.insertPrincipal(contractID, p); err != nil {
		return nil, fmt.Errorf("recording principal of contract %s: %w", contractID, err)
	}
	return p, nil
}

// GetPrincipal returns a principal without secrets.
func (s *Server) GetPrincipal(_ context.Context, req contractapi.GetPrincipalRequestObject) (contractapi.GetPrincipalResponseObject, error) {
	pb, err := s.principalBackend()
	if err != nil {
		return nil, err
	}
	rec, err := s.visible(req.Id)
	if err != nil {
		return nil, err
	}
	p, err := s.store.principal(rec.ID, req.PrincipalId)
	if err != nil {
		return nil, fmt.Errorf("reading principal %q of contract %s: %w", req.PrincipalId, rec.ID, err)
	}
	if p == nil || p.State != principalActive {
		return nil, noPrincipal(rec.ID, req.PrincipalId)
	}
	return contractapi.GetPrincipal200JSONResponse(s.toPrincipal(pb, rec, p)), nil
}

// DeletePrincipal removes the principal with its keys at the backend, then keeps only a
// tombstone; a crash in between is repaired by the next delete. A principal deleted already, or
// one of a cancelled contract, is answered deleted.
func (s *Server) DeletePrincipal(ctx context.Context, req contractapi.DeletePrincipalRequestObject) (contractapi.DeletePrincipalResponseObject, error) {
	pb, rec, unlock, err := inAccount[PrincipalBackend](s, req.Id, lacksPrincipals, s.visible)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, gone, err := s.livePrincipal(rec, req.PrincipalId)
	switch {
	case err != nil:
		return nil, err
	case gone:
		return contractapi.DeletePrincipal204Response{}, nil
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := pb.DeletePrincipal(bctx, rec.account(), p.ID, p.liveKeyIDs()); err != nil {
		return nil, backendProblem("deleting the principal", fmt.Errorf("deleting principal %s of contract %s: %w", p.ID, rec.ID, err))
	}
	if err := s.store.deletePrincipal(rec.ID, p.ID, now()); err != nil {
		return nil, fmt.Errorf("marking principal %s of contract %s deleted: %w", p.ID, rec.ID, err)
	}
	s.log.Info("Principal deleted", "contract", rec.ID, "principal", p.ID)
	return contractapi.DeletePrincipal204Response{}, nil
}

// livePrincipal is the active principal a call that removes something acts on; gone when it
// was deleted (its tombstone says so, or its contract is cancelled), which such a call answers
// as done. A principal the contract never had, or whose creation was never answered, is 404.
func (s *Server) livePrincipal(rec *record, principalID string) (p *storedPrincipal, gone bool, err error) {
	if rec.State == stateCancelled {
		return nil, true, nil
	}
	if p, err = s.store.principal(rec.ID, principalID); err != nil {
		return nil, false, fmt.Errorf("reading principal %q of contract %s: %w", principalID, rec.ID, err)
	}
	switch {
	case p != nil && p.State == principalActive:
		return p, false, nil
	case p != nil:
		// A pending principal's id was never answered; the contract's cancel removes it.
		return nil, false, noPrincipal(rec.ID, principalID)
	}
	dead, err := s.store.deletedPrincipal(rec.ID, principalID)
	if err != nil {
		return nil, false, fmt.Errorf("reading principal %q of contract %s: %w", principalID, rec.ID, err)
	}
	if dead == nil {
		return nil, false, noPrincipal(rec.ID, principalID)
	}
	return nil, true, nil
}

// AddPrincipalKey records a pending key pair, asks the backend for it, then marks it active. A
// replay answers the recorded key pair.
func (s *Server) AddPrincipalKey(ctx context.Context, req contractapi.AddPrincipalKeyRequestObject) (contractapi.AddPrincipalKeyResponseObject, error) {
	key := req.Params.IdempotencyKey
	if err := validateIdempotencyKey(key); err != nil {
		return nil, err
	}
	pb, rec, unlock, err := inAccount[PrincipalBackend](s, req.Id, lacksPrincipals, s.activeContract)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, err := s.store.principal(rec.ID, req.PrincipalId)
	if err != nil {
		return nil, fmt.Errorf("reading principal %q of contract %s: %w", req.PrincipalId, rec.ID, err)
	}
	if p == nil || p.State != principalActive {
		return nil, noPrincipal(rec.ID, req.PrincipalId)
	}
	k := p.keyByIdempotencyKey(key)
	if t := revokedByIdempotencyKey(p.Revoked, key); k == nil && t != nil {
		// Revoked since: answered as the first answer was, with the key pair it made.
		answer, err := s.withPrincipalKey(pb, rec, p, &storedPrincipalKey{AccessKeyID: t.AccessKeyID, SealedSecret: t.SealedSecret})
		if err != nil {
			return nil, err
		}
		return contractapi.AddPrincipalKey200JSONResponse(answer), nil
	}
	switch {
	case k == nil:
		if !within(len(p.Keys), s.limits.Keys) {
			return nil, limitExceeded("principal %s of contract %s has %d keys, the most this server allows; revoke one first", p.ID, rec.ID, len(p.Keys))
		}
		creds := newCredentials(newPrincipalAccessKeyID())
		p, err = s.store.updatePrincipal(rec.ID, p.ID, func(q *storedPrincipal) error {
			q.Keys = append(q.Keys, storedPrincipalKey{
				AccessKeyID:    creds.AccessKeyID,
				IdempotencyKey: key,
				State:          keyPending,
				SealedSecret:   s.secrets.sealPrincipalKey(rec.ID, q.ID, creds.AccessKeyID, creds.SecretAccessKey),
				CreatedAt:      now(),
			})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("recording new key of principal %s of contract %s: %w", req.PrincipalId, req.Id, err)
		}
		k = p.key(creds.AccessKeyID)
	case k.State != keyPending:
		answer, err := s.withPrincipalKey(pb, rec, p, k)
		if err != nil {
			return nil, err
		}
		return contractapi.AddPrincipalKey200JSONResponse(answer), nil
	}
	creds, err := s.principalKey(rec.ID, p, k)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := pb.AddPrincipalKey(bctx, rec.account(), p.ID, creds); err != nil {
		// The key stays pending: the backend may have made it, and a replay or the principal's
		// deletion finishes or removes it.
		return nil, backendProblem("adding a key", fmt.Errorf("adding key to principal %s of contract %s: %w", p.ID, rec.ID, err))
	}
	p, err = s.store.updatePrincipal(rec.ID, p.ID, func(q *storedPrincipal) error {
		q.key(creds.AccessKeyID).State = keyActive
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking key of principal %s of contract %s active: %w", req.PrincipalId, req.Id, err)
	}
	s.log.Info("Principal key added", "contract", rec.ID, "principal", p.ID, "accessKeyId", creds.AccessKeyID)
	return contractapi.AddPrincipalKey201JSONResponse(s.toPrincipalWithCredentials(pb, rec, p, creds)), nil
}

// RemovePrincipalKey revokes a key pair at the backend, then keeps a tombstone of it; never
// the last one. A key already revoked, also by the principal's deletion or the contract's
// cancel, is answered as revoked.
func (s *Server) RemovePrincipalKey(ctx context.Context, req contractapi.RemovePrincipalKeyRequestObject) (contractapi.RemovePrincipalKeyResponseObject, error) {
	pb, rec, unlock, err := inAccount[PrincipalBackend](s, req.Id, lacksPrincipals, s.visible)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, gone, err := s.livePrincipal(rec, req.PrincipalId)
	switch {
	case err != nil:
		return nil, err
	case gone:
		return contractapi.RemovePrincipalKey204Response{}, nil
	}
	k := p.key(req.AccessKeyId)
	switch {
	case k == nil && revokedByID(p.Revoked, req.AccessKeyId) != nil:
		return contractapi.RemovePrincipalKey204Response{}, nil
	case k == nil || k.State == keyPending:
		return nil, newProblem(contractapi.ProblemNotFound, http.StatusNotFound,
			"principal %s of contract %s has no key %q", p.ID, rec.ID, req.AccessKeyId)
	case len(p.activeKeyIDs()) == 1:
		return nil, newProblem(contractapi.ProblemLastKey, http.StatusConflict,
			"key %q is the only key of principal %s; add another first, or delete the principal", req.AccessKeyId, p.ID)
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := pb.RemovePrincipalKey(bctx, rec.account(), p.ID, req.AccessKeyId); err != nil {
		return nil, backendProblem("revoking a key", fmt.Errorf("removing key %q of principal %s of contract %s: %w", req.AccessKeyId, p.ID, rec.ID, err))
	}
	_, err = s.store.updatePrincipal(rec.ID, p.ID, func(q *storedPrincipal) error {
		q.revokeKey(req.AccessKeyId, now())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking key %q of principal %s of contract %s removed: %w", req.AccessKeyId, p.ID, rec.ID, err)
	}
	s.log.Info("Principal key removed", "contract", rec.ID, "principal", p.ID, "accessKeyId", req.AccessKeyId)
	return contractapi.RemovePrincipalKey204Response{}, nil
}

// deletePrincipals removes every principal of a contract that may exist at the backend, for
// its cancel. The caller records them deleted.
func (s *Server) deletePrincipals(ctx context.Context, rec *record) error {
	live, err := s.store.livePrincipals(rec.ID)
	if err != nil {
		return fmt.Errorf("reading the principals of contract %s: %w", rec.ID, err)
	}
	for i := range live {
		p := &live[i]
		pb, err := s.principalBackend()
		if err != nil {
			return err
		}
		if err := pb.DeletePrincipal(ctx, rec.account(), p.ID, p.liveKeyIDs()); err != nil {
			return backendProblem("deleting the contract's principals", fmt.Errorf("deleting principal %s of contract %s: %w", p.ID, rec.ID, err))
		}
	}
	return nil
}

// lacksPrincipals ends the 501 of a backend without principals.
const lacksPrincipals = "has no principals"

// principalBackend is the backend's support for principals, or the 501 a caller gets without it.
func (s *Server) principalBackend() (PrincipalBackend, error) {
	return capability[PrincipalBackend](s, lacksPrincipals)
}

func noPrincipal(contractID, principalID string) *problem {
	return newProblem(contractapi.ProblemNotFound, http.StatusNotFound, "contract %s has no principal %q", contractID, principalID)
}

// principalKey opens the recorded secret of a principal's key pair.
func (s *Server) principalKey(contractID string, p *storedPrincipal, k *storedPrincipalKey) (Credentials, error) {
	secret, err := s.secrets.openPrincipalKey(contractID, p.ID, k.AccessKeyID, k.SealedSecret)
	if err != nil {
		pr := newProblem(contractapi.ProblemInternal, http.StatusInternalServerError,
			"the server cannot decrypt the stored secret key of principal %s: its encryption key has changed", p.ID)
		pr.cause = fmt.Errorf("opening secret key %q of principal %s of contract %s: %w", k.AccessKeyID, p.ID, contractID, err)
		return Credentials{}, pr
	}
	return Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: secret}, nil
}

// withPrincipalKey answers a replay: the principal as it is now with the recorded key pair.
func (s *Server) withPrincipalKey(pb PrincipalBackend, rec *record, p *storedPrincipal, k *storedPrincipalKey) (contractapi.PrincipalWithCredentials, error) {
	creds, err := s.principalKey(rec.ID, p, k)
	if err != nil {
		return contractapi.PrincipalWithCredentials{}, err
	}
	return s.toPrincipalWithCredentials(pb, rec, p, creds), nil
}

func (s *Server) toPrincipal(pb PrincipalBackend, rec *record, p *storedPrincipal) contractapi.Principal {
	ids := p.activeKeyIDs()
	return contractapi.Principal{
		Id:              p.ID,
		PolicyPrincipal: pb.PolicyPrincipal(rec.account(), p.ID, ids),
		AccessKeyIds:    ids,
		CreatedAt:       p.CreatedAt,
	}
}

func (s *Server) toPrincipalWithCredentials(pb PrincipalBackend, rec *record, p *storedPrincipal, creds Credentials) contractapi.PrincipalWithCredentials {
	v := s.toPrincipal(pb, rec, p)
	return contractapi.PrincipalWithCredentials{
		Id:              v.Id,
		PolicyPrincipal: v.PolicyPrincipal,
		AccessKeyIds:    v.AccessKeyIds,
		CreatedAt:       v.CreatedAt,
		Credentials:     contractapi.Credentials{AccessKeyId: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey},
	}
}
