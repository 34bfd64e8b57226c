package contractserver

import (
	"context"
	"sync"
)

// fakeBackend is an in-memory Backend for tests that need no S3 service. It counts its calls,
// so a test can show that a refused request never reached the backend.
type fakeBackend struct {
	mu       sync.Mutex
	accounts map[string]Credentials
	calls    int
	// multiKey makes AddKey work, as on a backend whose accounts hold several keys; keys holds
	// the added ones by contract and access key id.
	multiKey bool
	keys     map[string]map[string]string
}

func (f *fakeBackend) Kind() string     { return "fake" }
func (f *fakeBackend) Endpoint() string { return "http://127.0.0.1:1" }
func (f *fakeBackend) Region() string   { return "us-east-1" }

func (f *fakeBackend) CreateAccount(_ context.Context, contractID string, creds Credentials, _ Plan) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.accounts == nil {
		f.accounts = map[string]Credentials{}
	}
	f.accounts[contractID] = creds
	return nil
}

func (f *fakeBackend) DeleteAccount(_ context.Context, contractID string, _ bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	delete(f.accounts, contractID)
	return nil
}

func (f *fakeBackend) AddKey(_ context.Context, contractID string, creds Credentials) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if !f.multiKey {
		return ErrNotSupported
	}
	if f.keys == nil {
		f.keys = map[string]map[string]string{}
	}
	if f.keys[contractID] == nil {
		f.keys[contractID] = map[string]string{}
	}
	f.keys[contractID][creds.AccessKeyID] = creds.SecretAccessKey
	return nil
}

func (f *fakeBackend) RemoveKey(_ context.Context, contractID, accessKeyID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	delete(f.keys[contractID], accessKeyID)
	return nil
}

// addedKeys returns the keys added to a contract's account, by access key id.
func (f *fakeBackend) addedKeys(contractID string) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.keys[contractID] {
		out[k] = v
	}
	return out
}

func (f *fakeBackend) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// principalsBackend is fakeBackend with principals, for tests of the server's own records: it
// keeps each principal's keys.
type principalsBackend struct {
	fakeBackend // its mu guards these too
	principals  map[string]map[string]bool
}

func (b *principalsBackend) CreatePrincipal(_ context.Context, contractID, principalID string, creds Credentials) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.principals == nil {
		b.principals = map[string]map[string]bool{}
	}
	b.principals[contractID+"/"+principalID] = map[string]bool{creds.AccessKeyID: true}
	return nil
}

func (b *principalsBackend) DeletePrincipal(_ context.Context, contractID, principalID string, _ []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	delete(b.principals, contractID+"/"+principalID)
	return nil
}

func (b *principalsBackend) AddPrincipalKey(_ context.Context, contractID, principalID string, creds Credentials) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.principals[contractID+"/"+principalID][creds.AccessKeyID] = true
	return nil
}

func (b *principalsBackend) RemovePrincipalKey(_ context.Context, contractID, principalID, accessKeyID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	delete(b.principals[contractID+"/"+principalID], accessKeyID)
	return nil
}

func (b *principalsBackend) PolicyPrincipal(_, principalID string, _ []string) map[string]any {
	return map[string]any{"AWS": "arn:aws:iam:::user/" + principalID}
}

// keyCount is how many keys the backend holds for a principal.
func (b *principalsBackend) keyCount(contractID, principalID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.principals[contractID+"/"+principalID])
}

// rolesBackend is fakeBackend with STS, for tests of the server's own records of roles and
// providers: it keeps what exists, and can fail the next call to make a role.
type rolesBackend struct {
	fakeBackend // its mu guards these too
	providers   map[string]OIDCProviderSpec
	roles       map[string]RoleSpec
	failRole    error
}

func (b *rolesBackend) PutOIDCProvider(_ context.Context, contractID string, p OIDCProviderSpec) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.providers == nil {
		b.providers = map[string]OIDCProviderSpec{}
	}
	b.providers[contractID+"/"+p.IssuerURL] = p
	return "arn:fake:oidc-provider/" + p.IssuerURL, nil
}

func (b *rolesBackend) DeleteOIDCProvider(_ context.Context, contractID, issuerURL string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	delete(b.providers, contractID+"/"+issuerURL)
	return nil
}

func (b *rolesBackend) PutRole(_ context.Context, contractID, name string, r RoleSpec) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if err := b.failRole; err != nil {
		b.failRole = nil
		return "", err
	}
	if b.roles == nil {
		b.roles = map[string]RoleSpec{}
	}
	b.roles[contractID+"/"+name] = r
	return "arn:fake:role/" + name, nil
}

func (b *rolesBackend) DeleteRole(_ context.Context, contractID, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	delete(b.roles, contractID+"/"+name)
	return nil
}

// has reports whether the backend holds the provider of issuer, and role name, of contractID.
func (b *rolesBackend) has(contractID, issuer, role string) (provider, hasRole bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, provider = b.providers[contractID+"/"+issuer]
	_, hasRole = b.roles[contractID+"/"+role]
	return provider, hasRole
}
