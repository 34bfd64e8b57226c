package resyncbudget

import (
	"strings"
	"testing"
	"time"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Tenants do not grow the metrics: a thousand resources over a hundred Contracts add no series
// beyond one per kind (and scope), and the oldest check's age is the least recent one's.
func TestMetricsHaveOneSeriesPerKind(t *testing.T) {
	f := newFleet(t, Options{Kind: "test", Period: time.Minute, Rate: 20, ShareRate: 5}, nil)
	for i := range 1000 {
		uid := f.uid(i)
		f.share[uid] = "ns-" + string(rune('a'+i%100))
		f.check(uid, true)
	}
	f.now = f.now.Add(30 * time.Second)
	f.check(f.uid(0), true)

	got, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, fam := range got {
		if !strings.HasPrefix(fam.GetName(), "osm_resync_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "test" {
					series[fam.GetName()]++
				}
			}
			if fam.GetName() == "osm_resync_oldest_check_age_seconds" && m.GetGauge().GetValue() != 30 {
				t.Errorf("oldest check %vs old; want 30 s", m.GetGauge().GetValue())
			}
		}
	}
	want := map[string]int{"osm_resync_interval_seconds": 1, "osm_resync_budget_delay_seconds": 1,
		"osm_resync_oldest_check_age_seconds": 1, "osm_resync_budget_calls_per_second": 2}
	for name, n := range want {
		if series[name] != n {
			t.Errorf("%s has %d series of kind test; want %d (all: %v)", name, series[name], n, series)
		}
	}
}
