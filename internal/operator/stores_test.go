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
	account := objectstore.Account{Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", AccessKeyID: "AK1", SecretAccessKey: "SK1"}
	a := open(account)
	if open(account) != a {
		t.Error("the same endpoint and keys got a second Store")
	}
	for _, change := range []func(*objectstore.Account){
		func(a *objectstore.Account) { a.Endpoint = "http://127.0.0.1:7071" },
		func(a *objectstore.Account) { a.Region = "eu-west-1" },
		func(a *objectstore.Account) { a.AccessKeyID = "AK2" },
		func(a *objectstore.Account) { a.SecretAccessKey = "SK2" },
		func(a *objectstore.Account) { a.VirtualHosted = true },
	} {
		other := account
		change(&other)
		if open(other) == a {
			t.Errorf("%+v got the Store of another account", other)
		}
	}
}

// The cache does not grow without bound as keys rotate.
func TestStoreCacheStartsAgainWhenFull(t *testing.T) {
	var c storeCache
	built := 0
	for i := range tuning.MaxStores + 10 {
		c.get(objectstore.Account{Endpoint: fmt.Sprint(i)}, func() objectstore.Store { built++; return nil })
	}
	if len(c.stores) > tuning.MaxStores {
		t.Errorf("%d Stores kept, want at most %d", len(c.stores), tuning.MaxStores)
	}
	if built != tuning.MaxStores+10 {
		t.Errorf("built %d Stores, want %d", built, tuning.MaxStores+10)
	}
}
