package operator

import (
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"

	"fmt"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// One Store per endpoint and key pair, built once: a pass of the Bucket controller does not
// build an S3 client again, and a rotated key gets a client of its own.
func TestStoreFactoryBuildsOneStorePerEndpointAndKeys(t *testing.T) {
	open := storeFactory(Options{MaxConcurrentReconciles: 4})
	a := open("http://127.0.0.1:7070", "us-east-1", "AK1", "SK1")
	if open("http://127.0.0.1:7070", "us-east-1", "AK1", "SK1") != a {
		t.Error("the same endpoint and keys got a second Store")
	}
	for _, other := range [][4]string{
		{"http://127.0.0.1:7071", "us-east-1", "AK1", "SK1"},
		{"http://127.0.0.1:7070", "eu-west-1", "AK1", "SK1"},
		{"http://127.0.0.1:7070", "us-east-1", "AK2", "SK1"},
		{"http://127.0.0.1:7070", "us-east-1", "AK1", "SK2"},
	} {
		if open(other[0], other[1], other[2], other[3]) == a {
			t.Errorf("%v got the Store of another endpoint or key pair", other[:3])
		}
	}
}

// The cache does not grow without bound as keys rotate.
func TestStoreCacheStartsAgainWhenFull(t *testing.T) {
	var c storeCache
	built := 0
	for i := range tuning.MaxStores + 10 {
		c.get(storeKey{endpoint: fmt.Sprint(i)}, func() objectstore.Store { built++; return nil })
	}
	if len(c.stores) > tuning.MaxStores {
		t.Errorf("%d Stores kept, want at most %d", len(c.stores), tuning.MaxStores)
	}
	if built != tuning.MaxStores+10 {
		t.Errorf("built %d Stores, want %d", built, tuning.MaxStores+10)
	}
}
