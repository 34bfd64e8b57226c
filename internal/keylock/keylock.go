// Package keylock serialises work on one name (a contract, an idempotency key, a bucket name)
// without making work on other names wait.
package keylock

import "sync"

// Map holds one lock per name, for as long as someone holds or waits for it. The zero value is
// ready to use.
type Map struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// Lock locks name and returns its unlock function.
func (k *Map) Lock(name string) func() {
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
