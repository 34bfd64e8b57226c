package contractserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// BackendTimeout bounds one backend call. Calls run detached from the request's context, so a
// client that hangs up does not leave an account half made. An HTTP server's WriteTimeout
// longer than this cuts off no answer of a single call.
const BackendTimeout = 2 * time.Minute

var _ contractapi.StrictServerInterface = (*Server)(nil)

// CreateContract records the contract with its first key pair, then asks the backend for the
// account, so a crash in between is finished by the next request with the same key instead of
// making a second account.
func (s *Server) CreateContract(ctx context.Context, req contractapi.CreateContractRequestObject) (contractapi.CreateContractResponseObject, error) {
	if err := validateCreate(req); err != nil {
		return nil, err
	}
	key := req.Params.IdempotencyKey
	want := toStoredRequest(*req.Body)

	defer s.locks.Lock("idempotency/" + key)()
	rec, err := s.store.byIdempotencyKey(key)
	switch {
	case err == nil:
		if !sameRequest(rec.Request, want) {
			return nil, newProblem(contractapi.ProblemIdempotencyKeyReuse, http.StatusUnprocessableEntity,
				"Idempotency-Key %q was used for contract %s with a different request", key, rec.ID)
		}
		if rec.State != stateProvisioning {
			c, err := s.withCredentials(rec)
			if err != nil {
				return nil, err
			}
			return contractapi.CreateContract200JSONResponse(c), nil
		}
		// An earlier attempt recorded the contract but did not finish: finish it now.
	case errors.Is(err, errRecordNotFound):
		if rec, err = s.newRecord(key, want); err != nil {
			return nil, err
		}
		if err := s.store.insert(rec); err != nil {
			return nil, fmt.Errorf("recording contract %s: %w", rec.ID, err)
		}
	default:
		return nil, fmt.Errorf("looking up Idempotency-Key: %w", err)
	}

	if rec, err = s.provision(ctx, rec); err != nil {
		return nil, err
	}
	c, err := s.withCredentials(rec)
	if err != nil {
		return nil, err
	}
	s.log.Info("Contract created", "contract", rec.ID, "plan", rec.Request.Plan, "accessKeyId", rec.FirstKey.AccessKeyID)
	return contractapi.CreateContract201JSONResponse(c), nil
}

// validateCreate enforces what openapi/contract.yaml says of a create request that the
// generated code does not check: the lengths, and that plan is present.
func validateCreate(req contractapi.CreateContractRequestObject) error {
	invalid := func(format string, args ...any) error {
		return newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, format, args...)
	}
	if err := validateIdempotencyKey(req.Params.IdempotencyKey); err != nil {
		return err
	}
	if req.Body == nil || req.Body.Plan == "" {
		return invalid("plan is required")
	}
	if d := req.Body.DisplayName; d != nil && utf8.RuneCountInString(*d) > 256 {
		return invalid("displayName must be at most 256 characters")
	}
	return nil
}

// validateIdempotencyKey enforces the length openapi/contract.yaml gives the header.
func validateIdempotencyKey(key string) error {
	// JSON Schema counts characters, not bytes.
	if n := utf8.RuneCountInString(key); n < 1 || n > 128 {
		return newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, "Idempotency-Key must be 1 to 128 characters")
	}
	return nil
}

// newRecord validates the request against the offer and builds the record to store.
func (s *Server) newRecord(key string, req storedRequest) (*record, error) {
	plan, ok := s.plans[req.Plan]
	if !ok {
		return nil, newProblem(contractapi.ProblemUnknownPlan, http.StatusUnprocessableEntity, "plan %q is not offered", req.Plan)
	}
	region := s.backend.Region()
	if req.Region != nil && *req.Region != region {
		return nil, newProblem(contractapi.ProblemUnsupportedRegion, http.StatusUnprocessableEntity,
			"region %q is not served; this provider serves %q", *req.Region, region)
	}
	id := newContractID()
	created := now()
	first := newCredentials(FirstAccessKeyID(id))
	var account string
	if namer, ok := s.backend.(AccountNamer); ok {
		account = namer.AccountName(id)
	}
	return &record{
		ID:             id,
		Account:        account,
		IdempotencyKey: key,
		Request:        req,
		State:          stateProvisioning,
		Endpoint:       s.backend.Endpoint(),
		Region:         region,
		QuotaBytes:     plan.QuotaBytes,
		FirstKey:       storedFirstKey{AccessKeyID: first.AccessKeyID, SealedSecret: s.secrets.seal(id, first.SecretAccessKey)},
		Keys:           []storedKey{{AccessKeyID: first.AccessKeyID, State: keyPending, CreatedAt: created}},
		CreatedAt:      created,
	}, nil
}

// provision makes the account of a recorded contract and marks the contract active.
func (s *Server) provision(ctx context.Context, rec *record) (*record, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	first, err := s.firstKey(rec)
	if err != nil {
		return nil, err
	}
	plan := Plan{Name: rec.Request.Plan, QuotaBytes: rec.QuotaBytes}
	if err := s.backend.CreateAccount(ctx, rec.account(), first, plan); err != nil {
		return nil, backendProblem("creating the account", fmt.Errorf("creating account for contract %s: %w", rec.ID, err))
	}
	rec, err = s.store.update(rec.ID, func(r *record) error {
		r.State = stateActive
		for i := range r.Keys {
			if r.Keys[i].AccessKeyID == r.FirstKey.AccessKeyID {
				r.Keys[i].State = keyActive
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking contract active: %w", err)
	}
	return rec, nil
}

// GetContract returns a contract without secrets.
func (s *Server) GetContract(_ context.Context, req contractapi.GetContractRequestObject) (contractapi.GetContractResponseObject, error) {
	rec, err := s.visible(req.Id)
	if err != nil {
		return nil, err
	}
	return contractapi.GetContract200JSONResponse(s.toContract(rec)), nil
}

// CancelContract deletes the account, then records the cancellation; a crash in between is
// repaired by the next cancel, because deleting a deleted account succeeds.
func (s *Server) CancelContract(ctx context.Context, req contractapi.CancelContractRequestObject) (contractapi.CancelContractResponseObject, error) {
	defer s.locks.Lock("contract/" + req.Id)()
	rec, err := s.visible(req.Id)
	if err != nil {
		return nil, err
	}
	if rec.State == stateCancelled {
		return contractapi.CancelContract204Response{}, nil
	}
	force := req.Params.Force != nil && *req.Params.Force
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := s.backend.DeleteAccount(bctx, rec.account(), force); err != nil {
		return nil, backendProblem("deleting the account", fmt.Errorf("deleting account of contract %s: %w", rec.ID, err))
	}
	// After the account, so a refused cancel leaves the principals working; a crash in between
	// is repaired by the next cancel.
	if err := s.deletePrincipals(bctx, rec); err != nil {
		return nil, err
	}
	if err := s.deleteTopics(bctx, rec); err != nil {
		return nil, err
	}
	if err := s.deleteRoles(bctx, rec); err != nil {
		return nil, err
	}
	// One transaction, so no principal outlives its contract in the records. The tombstones of
	// revoked keys go too: a cancelled contract makes no keys, so nothing replays into them.
	cancelled := now()
	err = s.store.cancel(rec.ID, cancelled, func(r *record) {
		r.State, r.CancelledAt, r.Topics, r.Revoked = stateCancelled, &cancelled, nil, nil
		r.OIDCProvider, r.Roles = nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking contract cancelled: %w", err)
	}
	s.log.Info("Contract cancelled", "contract", rec.ID, "force", force)
	return contractapi.CancelContract204Response{}, nil
}

// visible returns a contract the API shows: one whose creation was answered. A provisioning
// record's id was never returned, so it does not exist for callers yet.
func (s *Server) visible(id string) (*record, error) {
	rec, err := s.store.get(id)
	if errors.Is(err, errRecordNotFound) || (err == nil && rec.State == stateProvisioning) {
		return nil, newProblem(contractapi.ProblemNotFound, http.StatusNotFound, "no contract %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading contract %q: %w", id, err)
	}
	return rec, nil
}

func toStoredRequest(body contractapi.ContractRequest) storedRequest {
	req := storedRequest{Plan: body.Plan, Region: body.Region, DisplayName: body.DisplayName}
	if body.Requester != nil {
		req.Requester = &storedRequester{Namespace: body.Requester.Namespace, Name: body.Requester.Name}
	}
	return req
}

func (s *Server) toContract(rec *record) contractapi.Contract {
	c := contractapi.Contract{
		Id:          rec.ID,
		State:       contractapi.ContractState(rec.State),
		Endpoint:    rec.Endpoint,
		Region:      rec.Region,
		Plan:        rec.Request.Plan,
		DisplayName: rec.Request.DisplayName,
		CreatedAt:   rec.CreatedAt,
		CancelledAt: rec.CancelledAt,
		AccessKeys:  []contractapi.AccessKey{},
	}
	if rec.QuotaBytes > 0 {
		q := rec.QuotaBytes
		c.QuotaBytes = &q
	}
	if r := rec.Request.Requester; r != nil {
		c.Requester = &contractapi.Requester{Namespace: r.Namespace, Name: r.Name}
	}
	if rec.State == stateActive {
		for _, k := range rec.activeKeys() {
			c.AccessKeys = append(c.AccessKeys, contractapi.AccessKey{AccessKeyId: k.AccessKeyID, CreatedAt: k.CreatedAt})
		}
	}
	if forms, ok := s.backend.(PolicyForms); ok {
		form := forms.BucketPolicyForm(rec.account(), rec.FirstKey.AccessKeyID)
		c.BucketPolicy = &form
	}
	if s.website != "" {
		endpoint := s.website
		if forms, ok := s.backend.(WebsiteForms); ok {
			endpoint = forms.WebsiteEndpoint(rec.account(), endpoint)
		}
		c.Website = &contractapi.WebsiteHosting{Endpoint: endpoint}
	}
	if keys, ok := s.backend.(KeySupport); ok {
		supported, detail := keys.SupportsKeys()
		c.KeyRotation = &contractapi.KeyRotationSupport{Supported: supported}
		if detail != "" {
			c.KeyRotation.Detail = &detail
		}
	}
	return c
}

// firstKey opens the recorded first key pair of a contract. A secret that does not open means
// the server runs with another encryption key than the one that sealed it: say so, since
// repeating the request cannot help.
func (s *Server) firstKey(rec *record) (Credentials, error) {
	secret, err := s.secrets.open(rec.ID, rec.FirstKey.SealedSecret)
	if err != nil {
		p := newProblem(contractapi.ProblemInternal, http.StatusInternalServerError,
			"the server cannot decrypt the stored secret key of contract %s: its encryption key has changed", rec.ID)
		p.cause = fmt.Errorf("opening the first secret key of contract %s: %w", rec.ID, err)
		return Credentials{}, p
	}
	return Credentials{AccessKeyID: rec.FirstKey.AccessKeyID, SecretAccessKey: secret}, nil
}

func (s *Server) withCredentials(rec *record) (contractapi.ContractWithCredentials, error) {
	first, err := s.firstKey(rec)
	if err != nil {
		return contractapi.ContractWithCredentials{}, err
	}
	c := s.toContract(rec)
	return contractapi.ContractWithCredentials{
		Id:           c.Id,
		State:        c.State,
		Endpoint:     c.Endpoint,
		Region:       c.Region,
		Plan:         c.Plan,
		QuotaBytes:   c.QuotaBytes,
		DisplayName:  c.DisplayName,
		Requester:    c.Requester,
		CreatedAt:    c.CreatedAt,
		CancelledAt:  c.CancelledAt,
		AccessKeys:   c.AccessKeys,
		BucketPolicy: c.BucketPolicy,
		KeyRotation:  c.KeyRotation,
		Website:      c.Website,
		Credentials: contractapi.Credentials{
			AccessKeyId:     first.AccessKeyID,
			SecretAccessKey: first.SecretAccessKey,
		},
	}, nil
}
