package ttlcache

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestAnEntryIsFoundOnlyWhileYoungerThanItsReaderAccepts(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)}
	c := Cache[string, int]{Now: clk.now}
	c.Put("a", 1)
	clk.t = clk.t.Add(30 * time.Second)
	if v, age, ok := c.Get("a", time.Minute); !ok || v != 1 || age != 30*time.Second {
		t.Fatalf("Get within a minute = %d, %s, %v; want 1, 30s, true", v, age, ok)
	}
	if _, _, ok := c.Get("a", 10*time.Second); ok {
		t.Fatal("an entry 30s old was found by a reader that accepts 10s")
	}
	if _, _, ok := c.Get("a", time.Minute); ok {
		t.Fatal("an entry that was too old once is still there")
	}
	if _, _, ok := c.Get("never", time.Hour); ok {
		t.Fatal("found a key never put")
	}
}

func TestAZeroMaxAgeFindsNothing(t *testing.T) {
	var c Cache[string, int]
	c.Put("a", 1)
	if _, _, ok := c.Get("a", 0); ok {
		t.Fatal("Get with maxAge 0 found an entry: a reconciler without a resync period would never ask again")
	}
}

func TestAFullCacheDropsExpiredEntriesFirstThenEverything(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)}
	c := Cache[int, string]{Max: 3, MaxAge: time.Minute, Now: clk.now}
	c.Put(1, "old")
	clk.t = clk.t.Add(2 * time.Minute)
	c.Put(2, "b")
	c.Put(3, "c")
	c.Put(4, "d") // full: 1 is expired and goes
	if c.Len() != 3 {
		t.Fatalf("Len = %d after a sweep of the expired entry, want 3", c.Len())
	}
	if _, _, ok := c.Get(2, time.Hour); !ok {
		t.Fatal("a young entry went in the sweep")
	}
	c.Put(5, "e") // full of young entries: everything goes
	if c.Len() != 1 {
		t.Fatalf("Len = %d, want only the new entry once the cache was full of young ones", c.Len())
	}
	c.Put(5, "again") // replacing an entry never sweeps
	if v, _, _ := c.Get(5, time.Hour); v != "again" || c.Len() != 1 {
		t.Fatalf("replacing: %q, Len %d", v, c.Len())
	}
}

func TestDeleteForgets(t *testing.T) {
	var c Cache[string, int]
	c.Put("a", 1)
	c.Delete("a")
	if _, _, ok := c.Get("a", time.Hour); ok {
		t.Fatal("found a deleted key")
	}
}
