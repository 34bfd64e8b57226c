package contractserver

import "sync"

// keyLocks serialises the operations on one contract (or one idempotency key) without making
// unrelated contracts wait for a slow backend call.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// lock locks name and returns its unlock function.
func (k *keyLocks) lock(name string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[name]
	if l == nil {
		l = &keyLock{}
		k.locks[name] = l
	}
	l.users++
	k.mu.Unlock()

	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, name)
		}
		k.mu.Unlock()
	}
}
