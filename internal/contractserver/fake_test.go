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

func (f *fakeBackend) AddKey(context.Context, string, Credentials) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return ErrNotSupported
}

func (f *fakeBackend) RemoveKey(context.Context, string, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return nil
}

func (f *fakeBackend) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}
