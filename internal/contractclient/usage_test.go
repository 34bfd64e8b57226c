package contractclient_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// The usage answer reaches the caller by bucket name, an absent limit as 0, and a provider
// without usage counters as ErrNotSupported.
func TestBucketUsageTurnsTheAnswerIntoDomainTypes(t *testing.T) {
	c := cannedAPI(t, http.StatusOK, "application/json", `{"observedAt":"2026-01-02T03:04:05Z","buckets":[
		{"name":"a","bytes":6000,"objects":3,"quota":{"maxObjects":4}},
		{"name":"b","bytes":0,"objects":0,"quota":{}}]}`)
	got, err := c.BucketUsage(t.Context(), "c1")
	if err != nil {
		t.Fatalf("BucketUsage: %v", err)
	}
	want := contractclient.ContractUsage{ObservedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Buckets: map[string]contractclient.BucketUsage{
		"a": {Bytes: 6000, Objects: 3, Quota: contractclient.Quota{MaxObjects: 4}},
		"b": {},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BucketUsage (-want +got):\n%s", diff)
	}

	c = cannedAPI(t, http.StatusNotImplemented, "application/problem+json",
		`{"type":"https://osm.dev/problems/not-supported","title":"Not supported by this provider","status":501}`)
	if _, err := c.BucketUsage(t.Context(), "c1"); !errors.Is(err, contractclient.ErrNotSupported) {
		t.Errorf("BucketUsage from a provider without counters: %v, want ErrNotSupported", err)
	}
	if _, err := c.SetBucketQuota(t.Context(), "c1", "a", contractclient.Quota{MaxObjects: 3}); !errors.Is(err, contractclient.ErrNotSupported) {
		t.Errorf("SetBucketQuota on a provider without quotas: %v, want ErrNotSupported", err)
	}
}
