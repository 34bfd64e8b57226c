// Package fake is an in-memory contract API for unit tests of the reconcilers: it keeps
// contracts as the reference server does (one per idempotency key, the first key pair replayed)
// and can fail a call before it acts, or act and then lose the answer, which real servers do
// not do on demand.
package fake

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// Op names a call, for Fail and Calls.
type Op string

const (
	OpBuy       Op = "Buy"
	OpGet       Op = "Get"
	OpCancel    Op = "Cancel"
	OpAddKey    Op = "AddKey"
	OpRemoveKey Op = "RemoveKey"
)

// Failure is what the next call of an operation does instead of answering.
type Failure struct {
	// Err is returned.
	Err error
	// AfterActing: the call does its work first, so only the answer is lost.
	AfterActing bool
}

// API is a contractclient.API in memory. The zero value is ready to use.
type API struct {
	mu        sync.Mutex
	byKey     map[string]string // idempotency key -> contract id
	contracts map[string]*contractclient.Contract
	buckets   map[string]int // contract id -> buckets the account owns
	failures  map[Op][]Failure
	calls     map[Op]int
	// principals by "<contract>/<principal id>", and their ids by "<contract>/<idempotency key>".
	principals     map[string]*principal
	principalByKey map[string]string
	// roles by "<contract>/<name>", and the issuer each contract's account trusts.
	roles     map[string]Role
	providers map[string]contractclient.OIDCProvider
	// keys issued by AddKey, by "<contract>/<idempotency key>".
	keys map[string]contractclient.Credentials
	// Endpoint and Region are what bought contracts report.
	Endpoint, Region string
	// SingleKey makes AddKey answer ErrNotSupported, as a provider whose accounts hold one key
	// pair (versitygw) does.
	SingleKey bool
	// NoSTS makes every role call answer ErrNotSupported, as versitygw does.
	NoSTS bool
	// PrincipalsByKey makes a principal's Principal element name its keys, as versitygw's
	// does, so that it changes with every key added or revoked.
	PrincipalsByKey bool
}

var _ contractclient.API = (*API)(nil)

// Fail queues failures for the next calls of op, in order.
func (a *API) Fail(op Op, f ...Failure) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failures == nil {
		a.failures = map[Op][]Failure{}
	}
	a.failures[op] = append(a.failures[op], f...)
}

// Calls reports how often op was called.
func (a *API) Calls(op Op) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[op]
}

// Bought reports how many contracts were bought in all.
func (a *API) Bought() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.contracts)
}

// Contract returns a copy of the contract with id, and whether it exists.
func (a *API) Contract(id string) (contractclient.Contract, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.contracts[id]
	if !ok {
		return contractclient.Contract{}, false
	}
	return copyOf(c), true
}

// SetBuckets says how many buckets a contract's account owns outside the operator's view.
func (a *API) SetBuckets(id string, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.buckets == nil {
		a.buckets = map[string]int{}
	}
	a.buckets[id] = n
}

// next takes the queued failure for op, counting the call.
func (a *API) next(op Op) (Failure, bool) {
	if a.calls == nil {
		a.calls = map[Op]int{}
	}
	a.calls[op]++
	q := a.failures[op]
	if len(q) == 0 {
		return Failure{}, false
	}
	a.failures[op] = q[1:]
	return q[0], true
}

// Buy implements contractclient.API.
func (a *API) Buy(_ context.Context, key string, req contractclient.Request) (contractclient.Contract, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpBuy)
	if failing && !f.AfterActing {
		return contractclient.Contract{}, false, f.Err
	}
	if a.byKey == nil {
		a.byKey, a.contracts = map[string]string{}, map[string]*contractclient.Contract{}
	}
	id, replay := a.byKey[key]
	if !replay {
		id = fmt.Sprintf("c%d", len(a.contracts)+1)
		a.byKey[key] = id
		a.contracts[id] = &contractclient.Contract{ID: id, State: "active", Endpoint: a.Endpoint,
			Region: a.Region, Plan: req.Plan, AccessKeyIDs: []string{"AK" + id}, OneKeyOnly: a.SingleKey, OneKeyOnlyReason: a.singleKeyReason(),
			Credentials: &contractclient.Credentials{AccessKeyID: "AK" + id, SecretAccessKey: "SK" + id}}
	}
	if failing {
		return contractclient.Contract{}, false, f.Err
	}
	return copyOf(a.contracts[id]), !replay, nil
}

// Get implements contractclient.API.
func (a *API) Get(_ context.Context, id string) (contractclient.Contract, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, failing := a.next(OpGet); failing {
		return contractclient.Contract{}, f.Err
	}
	c, ok := a.contracts[id]
	if !ok {
		return contractclient.Contract{}, contractclient.NewRefusal("reading contract "+id, contractclient.ErrNotFound, "no contract "+id)
	}
	out := copyOf(c)
	out.Credentials = nil
	return out, nil
}

// Cancel implements contractclient.API.
func (a *API) Cancel(_ context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpCancel)
	if failing && !f.AfterActing {
		return f.Err
	}
	c, ok := a.contracts[id]
	switch {
	case !ok:
		return contractclient.NewRefusal("cancelling contract "+id, contractclient.ErrNotFound, "no contract "+id)
	case a.buckets[id] > 0:
		return contractclient.NewRefusal("cancelling contract "+id, contractclient.ErrHasBuckets, "the contract's account still owns buckets")
	}
	c.State, c.AccessKeyIDs = "cancelled", nil
	if failing {
		return f.Err
	}
	return nil
}

// AddKey implements contractclient.API, with the reference server's rules: one key pair per
// idempotency key, a revoked one never issued again for its key.
func (a *API) AddKey(_ context.Context, id, key string) (contractclient.Credentials, error) {
	op := "adding a key to contract " + id
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpAddKey)
	if failing && !f.AfterActing {
		return contractclient.Credentials{}, f.Err
	}
	c, ok := a.contracts[id]
	switch {
	case !ok:
		return contractclient.Credentials{}, contractclient.NewRefusal(op, contractclient.ErrNotFound, "no contract "+id)
	case c.Cancelled():
		return contractclient.Credentials{}, contractclient.NewError(op, http.StatusConflict)
	case a.SingleKey:
		return contractclient.Credentials{}, contractclient.NewRefusal(op, contractclient.ErrNotSupported, singleKeyDetail)
	}
	if a.keys == nil {
		a.keys = map[string]contractclient.Credentials{}
	}
	creds, replay := a.keys[id+"/"+key]
	if !replay {
		n := len(a.keys) + 1
		creds = contractclient.Credentials{AccessKeyID: fmt.Sprintf("AK%sk%d", id, n), SecretAccessKey: fmt.Sprintf("SK%sk%d", id, n)}
		a.keys[id+"/"+key] = creds
		c.AccessKeyIDs = append(c.AccessKeyIDs, creds.AccessKeyID)
	}
	if failing {
		return contractclient.Credentials{}, f.Err
	}
	if !c.HasKey(creds.AccessKeyID) {
		return contractclient.Credentials{}, contractclient.NewRefusal(op, contractclient.ErrKeyRevoked, "key "+creds.AccessKeyID+" was revoked")
	}
	return creds, nil
}

// RemoveKey implements contractclient.API: never the last key; one already gone is no error.
func (a *API) RemoveKey(_ context.Context, id, accessKeyID string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, failing := a.next(OpRemoveKey)
	if failing && !f.AfterActing {
		return f.Err
	}
	c, ok := a.contracts[id]
	switch {
	case !ok || !c.HasKey(accessKeyID):
	case len(c.AccessKeyIDs) == 1:
		return contractclient.NewRefusal("revoking key "+accessKeyID+" of contract "+id, contractclient.ErrLastKey, "key "+accessKeyID+" is the only key of contract "+id)
	default:
		c.AccessKeyIDs = slices.DeleteFunc(c.AccessKeyIDs, func(k string) bool { return k == accessKeyID })
	}
	if failing {
		return f.Err
	}
	return nil
}

// Works reports whether a key pair opens the contract's account: the provider lists it and
// the secret is the one it issued.
func (a *API) Works(id string, creds contractclient.Credentials) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.contracts[id]
	if !ok || c.Cancelled() || !c.HasKey(creds.AccessKeyID) {
		return false
	}
	if c.Credentials != nil && *c.Credentials == creds {
		return true
	}
	for _, k := range a.keys {
		if k == creds {
			return true
		}
	}
	return false
}

// singleKeyReason is what a bought contract says about its keys.
func (a *API) singleKeyReason() string {
	if a.SingleKey {
		return singleKeyDetail
	}
	return ""
}

// singleKeyDetail is why a SingleKey fake cannot rotate keys, as versitygw says it.
const singleKeyDetail = "versitygw accounts hold one key pair"

// copyOf is a copy of c with its own key list.
func copyOf(c *contractclient.Contract) contractclient.Contract {
	out := *c
	out.AccessKeyIDs = slices.Clone(c.AccessKeyIDs)
	return out
}
