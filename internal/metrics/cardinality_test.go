package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// The routes the contract API's requests are counted under are the spec's paths, all of them.
func TestContractRoutesAreTheSpecsPaths(t *testing.T) {
	raw, err := os.ReadFile("../../openapi/contract.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]any `json:"paths"`
	}
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range spec.Paths {
		paths = append(paths, p)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(paths)), slices.Sorted(slices.Values(contractRoutes))); diff != "" {
		t.Errorf("contractRoutes differ from openapi/contract.yaml's paths (-spec +routes):\n%s", diff)
	}
}

// A churn of contracts, keys, principals, topics (named after Bucket UIDs) and buckets, against
// servers that answer with status codes HTTP does not define, as a tenant's own S3 endpoint may,
// adds no series after its first round to any metric family: no id, name or odd code becomes a
// label value. The Bucket gauges, read at scrape time, hold only the Buckets that exist.
func TestChurnAddsNoSeries(t *testing.T) {
	var requests atomic.Int64
	// Each request's status in turn: two HTTP defines, and one of 600-999 no one does.
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := requests.Add(1)
		w.WriteHeader([]int{http.StatusOK, http.StatusNotFound, 600 + int(n%400)}[n%3])
	}))
	t.Cleanup(server.Close)

	api, store := countedClients(t, server.URL)

	churn := func(round int) {
		ctx := context.Background()
		var buckets []client.Object
		for i := range 40 {
			id := fmt.Sprintf("r%d-%d", round, i)
			// Answers that are no answer fail to parse: only what is counted matters here.
			_, _, _ = api.Buy(ctx, "uid-"+id, contractclient.Request{Plan: "standard"})
			_, _ = api.Get(ctx, "c-"+id)
			_, _ = api.AddKey(ctx, "c-"+id, "key-"+id)
			_ = api.RemoveKey(ctx, "c-"+id, "AK"+id)
			_, _, _ = api.CreatePrincipal(ctx, "c-"+id, "p-"+id)
			_, _ = api.GetPrincipal(ctx, "c-"+id, "p-"+id)
			_, _, _ = api.AddPrincipalKey(ctx, "c-"+id, "p-"+id, "pk-"+id)
			_ = api.RemovePrincipalKey(ctx, "c-"+id, "p-"+id, "AKP"+id)
			_ = api.DeletePrincipal(ctx, "c-"+id, "p-"+id)
			_, _ = api.PutTopic(ctx, "c-"+id, "osm-bucket-uid-"+id, "https://hooks.example.com/"+id)
			_ = api.DeleteTopic(ctx, "c-"+id, "osm-bucket-uid-"+id)
			_, _ = api.SetBucketQuota(ctx, "c-"+id, "bucket-"+id, contractclient.Quota{MaxSizeBytes: 1})
			_ = api.Cancel(ctx, "c-"+id)
			_, _ = store.Policy(ctx, "bucket-"+id)
			_ = store.HeadBucket(ctx, "bucket-"+id)
			buckets = append(buckets, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team-" + id, Name: id},
				Status: storagev1alpha1.BucketStatus{Usage: &storagev1alpha1.BucketUsage{Bytes: 1, Objects: 1}}})
		}
		observe(t, buckets...) // these Buckets exist now, and the last round's are gone
	}

	families := []string{"osm_contract_api_requests_total", "osm_contract_api_request_duration_seconds",
		"osm_s3_requests_total", "osm_s3_request_duration_seconds", "osm_bucket_size_bytes", "osm_bucket_objects"}
	count := func() map[string]int {
		got, err := crmetrics.Registry.Gather() // where the manager's /metrics reads them
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, f := range got {
			if slices.Contains(families, f.GetName()) {
				out[f.GetName()] = len(f.GetMetric())
			}
		}
		return out
	}
	churn(1)
	first := count()
	churn(2)
	churn(3)
	if diff := cmp.Diff(first, count()); diff != "" {
		t.Errorf("series per family after two more rounds of churn (-after the first +after three):\n%s", diff)
	}
	if first["osm_contract_api_requests_total"] == 0 || first["osm_s3_requests_total"] == 0 {
		t.Fatalf("nothing was counted: %v", first)
	}
	for _, f := range []string{"osm_bucket_size_bytes", "osm_bucket_objects"} {
		if first[f] != 40 {
			t.Errorf("%s has %d series, want one per Bucket that exists (40)", f, first[f])
		}
	}
	checkLabelValues(t, "osm_contract_api_requests_total")
	checkLabelValues(t, "osm_s3_requests_total")
}

// checkLabelValues checks that every operation of family is a route of the spec (or other) or
// an S3 operation, and every code one HTTP defines, "other" or "error".
func checkLabelValues(t *testing.T, family string) {
	t.Helper()
	got, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				switch l.GetName() {
				case "code":
					if v != "other" && v != "error" && v != "ok" && http.StatusText(atoi(v)) == "" {
						t.Errorf("%s: code %q", family, v)
					}
				case "operation":
					method, route, _ := strings.Cut(v, " ")
					if strings.HasPrefix(family, "osm_contract") && (methodLabel(method) != method || route != "other" && !slices.Contains(contractRoutes, route)) {
						t.Errorf("%s: operation %q is no route of the spec", family, v)
					}
					if strings.HasPrefix(family, "osm_s3") && strings.ContainsAny(v, "/- ") {
						t.Errorf("%s: operation %q is no S3 operation name", family, v)
					}
				}
			}
		}
	}
}

func atoi(s string) int {
	n := 0
	if _, err := fmt.Sscan(s, &n); err != nil {
		return -1
	}
	return n
}
