package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// Principal operations, for Fail and Calls.
const (
	OpCreatePrincipal    Op = "CreatePrincipal"
	OpGetPrincipal       Op = "GetPrincipal"
	OpDeletePrincipal    Op = "DeletePrincipal"
	OpAddPrincipalKey    Op = "AddPrincipalKey"
	OpRemovePrincipalKey Op = "RemovePrincipalKey"
)

var _ contractclient.Principals = (*API)(nil)

// principal is a principal as the fake keeps it: the reference server's rules (one per
// idempotency key, a deleted one never made again for its key, key pairs replayed by key).
type principal struct {
	contract, id string
	keys         []string                              // in effect, oldest first
	issued       map[string]contractclient.Credentials // idempotency key -> key pair
	first        contractclient.Credentials
	deleted      bool
}

// view is the principal as the API answers it. byKey names each of its keys in the Principal
// element, as versitygw's backend does (each key is a user of its own), rather than the
// principal, as Ceph RGW's does.
func (p *principal) view(byKey bool) contractclient.Principal {
	named := any("arn:aws:iam:::user/" + p.contract + "-" + p.id)
	if byKey {
		named = slices.Clone(p.keys)
	}
	return contractclient.Principal{ID: p.id, AccessKeyIDs: slices.Clone(p.keys), PolicyPrincipal: map[string]any{"AWS": named}}
}

// Principal returns a copy of a principal, and whether it exists and is not deleted.
func (a *API) Principal(contractID, id string) (contractclient.Principal, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.principals[contractID+"/"+id]
	if !ok || p.deleted {
		return contractclient.Principal{}, false
	}
	return p.view(a.PrincipalsByKey), true
}

// CreatePrincipal implements contractclient.Principals.
func (a *API) CreatePrincipal(_ context.Context, contractID, key string) (contractclient.Principal, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpCreatePrincipal)
	if failing && !f.AfterActing {
		return contractclient.Principal{}, false, f.Err
	}
	if c, ok := a.contracts[contractID]; !ok || c.Cancelled() {
		return contractclient.Principal{}, false, contractclient.NewRefusal("creating a principal in contract "+contractID, contractclient.ErrNotFound, "no contract "+contractID)
	}
	if a.principals == nil {
		a.principals, a.principalByKey = map[string]*principal{}, map[string]string{}
	}
	id, replay := a.principalByKey[contractID+"/"+key]
	if !replay {
		id = fmt.Sprintf("p%d", len(a.principals)+1)
		creds := contractclient.Credentials{AccessKeyID: "AK" + id + "a", SecretAccessKey: "SK" + id + "a"}
		a.principalByKey[contractID+"/"+key] = id
		a.principals[contractID+"/"+id] = &principal{contract: contractID, id: id, keys: []string{creds.AccessKeyID},
			issued: map[string]contractclient.Credentials{}, first: creds}
	}
	p := a.principals[contractID+"/"+id]
	if failing {
		return contractclient.Principal{}, false, f.Err
	}
	if p.deleted {
		return contractclient.Principal{}, false, contractclient.NewRefusal("creating a principal in contract "+contractID, contractclient.ErrPrincipalDeleted, "principal "+id+" was deleted")
	}
	out := p.view(a.PrincipalsByKey)
	out.Credentials = &p.first
	return out, !replay, nil
}

// GetPrincipal implements contractclient.Principals.
func (a *API) GetPrincipal(_ context.Context, contractID, id string) (contractclient.Principal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, failing := a.next(OpGetPrincipal); failing {
		return contractclient.Principal{}, f.Err
	}
	p, ok := a.principals[contractID+"/"+id]
	if !ok || p.deleted {
		return contractclient.Principal{}, contractclient.NewRefusal("reading principal "+id+" of contract "+contractID, contractclient.ErrNotFound, "no principal "+id)
	}
	return p.view(a.PrincipalsByKey), nil
}

// DeletePrincipal implements contractclient.Principals.
func (a *API) DeletePrincipal(_ context.Context, contractID, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpDeletePrincipal)
	if failing && !f.AfterActing {
		return f.Err
	}
	if p, ok := a.principals[contractID+"/"+id]; ok {
		p.deleted, p.keys = true, nil
	}
	if failing {
		return f.Err
	}
	return nil
}

// AddPrincipalKey implements contractclient.Principals.
func (a *API) AddPrincipalKey(_ context.Context, contractID, id, key string) (contractclient.Principal, contractclient.Credentials, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpAddPrincipalKey)
	if failing && !f.AfterActing {
		return contractclient.Principal{}, contractclient.Credentials{}, f.Err
	}
	p, ok := a.principals[contractID+"/"+id]
	if !ok || p.deleted {
		return contractclient.Principal{}, contractclient.Credentials{}, contractclient.NewRefusal("adding a key to principal "+id+" of contract "+contractID, contractclient.ErrNotFound, "no principal "+id)
	}
	creds, replay := p.issued[key]
	if !replay {
		n := len(p.issued) + 2
		creds = contractclient.Credentials{AccessKeyID: fmt.Sprintf("AK%s%d", id, n), SecretAccessKey: fmt.Sprintf("SK%s%d", id, n)}
		p.issued[key] = creds
		p.keys = append(p.keys, creds.AccessKeyID)
	}
	if failing {
		return contractclient.Principal{}, contractclient.Credentials{}, f.Err
	}
	return p.view(a.PrincipalsByKey), creds, nil
}

// RemovePrincipalKey implements contractclient.Principals.
func (a *API) RemovePrincipalKey(_ context.Context, contractID, id, accessKeyID string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpRemovePrincipalKey)
	if failing && !f.AfterActing {
		return f.Err
	}
	p, ok := a.principals[contractID+"/"+id]
	switch {
	case !ok || p.deleted || !slices.Contains(p.keys, accessKeyID):
		// Already gone: not an error, as the interface promises.
	case len(p.keys) == 1:
		return contractclient.NewRefusal("revoking key "+accessKeyID+" of principal "+id+" of contract "+contractID, contractclient.ErrLastKey, "key "+accessKeyID+" is the only key of principal "+id)
	default:
		p.keys = slices.DeleteFunc(p.keys, func(k string) bool { return k == accessKeyID })
	}
	if failing {
		return f.Err
	}
	return nil
}

// PrincipalKeyWorks reports whether a key pair opens a principal of the contract: the principal
// is not deleted, the key is in effect, and the secret is the one issued with it.
func (a *API) PrincipalKeyWorks(contractID string, creds contractclient.Credentials) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.principals {
		if p.contract != contractID || p.deleted || !slices.Contains(p.keys, creds.AccessKeyID) {
			continue
		}
		if p.first == creds || slices.Contains(slices.Collect(maps.Values(p.issued)), creds) {
			return true
		}
	}
	return false
}
