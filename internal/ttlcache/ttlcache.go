// Package ttlcache is what a controller remembers between passes: the provider's last answer, a
// key's last check, a refusal to ask again only later. Each entry is typed, forgotten once it is
// older than the age its reader accepts, and the cache is bounded, so nothing a pass relies on
// lives longer than it says or grows without end.
package ttlcache

import (
	"sync"
	"time"
)

// Cache maps keys to values with the time each was put. The zero value is ready to use; it is
// safe for concurrent use.
type Cache[K comparable, V any] struct {
	// Max bounds the entries; past it, a Put first drops what is older than MaxAge, then, if
	// still full, everything (a value is cheap to learn again: it is only not free on every
	// pass). 0 means DefaultMax.
	Max int
	// MaxAge is the age past which a full cache drops an entry; 0 keeps every entry until the
	// cache is full.
	MaxAge time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu      sync.Mutex
	entries map[K]entry[V]
}

// DefaultMax bounds a Cache whose Max is 0.
const DefaultMax = 100_000

type entry[V any] struct {
	value V
	at    time.Time
}

func (c *Cache[K, V]) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Get returns the value put for k and how old it is, if it is younger than maxAge. An older
// entry is dropped; maxAge <= 0 finds nothing.
func (c *Cache[K, V]) Get(k K, maxAge time.Duration) (v V, age time.Duration, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.entries[k]
	if !found {
		return v, 0, false
	}
	age = c.now().Sub(e.at)
	if maxAge <= 0 || age >= maxAge {
		delete(c.entries, k)
		return v, 0, false
	}
	return e.value, age, true
}

// Put records v for k, now.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.entries == nil {
		c.entries = map[K]entry[V]{}
	}
	if _, replacing := c.entries[k]; !replacing && len(c.entries) >= c.max() {
		c.sweep(now)
	}
	c.entries[k] = entry[V]{value: v, at: now}
}

// Delete forgets k.
func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, k)
}

// Len is how many entries the cache holds, expired ones included until they are swept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache[K, V]) max() int {
	if c.Max > 0 {
		return c.Max
	}
	return DefaultMax
}

// sweep makes room: what is older than MaxAge goes, and everything if that is not enough.
func (c *Cache[K, V]) sweep(now time.Time) {
	if c.MaxAge > 0 {
		for k, e := range c.entries {
			if now.Sub(e.at) >= c.MaxAge {
				delete(c.entries, k)
			}
		}
	}
	if len(c.entries) >= c.max() {
		clear(c.entries)
	}
}
