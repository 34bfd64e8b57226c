package resyncbudget

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The metrics say how stale drift detection is. Their one label is the kind of resource, a
// fixed set: no resource, namespace or Contract becomes a label value, so tenants cannot grow
// them.
var (
	// periods reaches from a second (tests) past a day, doubling.
	periods = prometheus.ExponentialBuckets(1, 2, 18)

	checkInterval = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osm_resync_interval_seconds",
		Help:    "Time between two checks of a Ready resource against its provider (drift detection), by kind.",
		Buckets: periods,
	}, []string{"kind"})
	budgetDelay = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osm_resync_budget_delay_seconds",
		Help:    "How much later than its wanted period the resync budget booked a resource's next check, by kind: over 0, the fleet wants more calls than the budget allows.",
		Buckets: append([]float64{0}, periods...),
	}, []string{"kind"})
	oldestDesc = prometheus.NewDesc("osm_resync_oldest_check_age_seconds",
		"Age of the least recent check of a Ready resource against its provider, by kind: how stale drift detection is at worst.",
		[]string{"kind"}, nil)
	budgetDesc = prometheus.NewDesc("osm_resync_budget_calls_per_second",
		"The resync budget, in provider calls a second, by kind and scope (all, contract); absent: no budget.",
		[]string{"kind", "scope"}, nil)
)

func init() {
	crmetrics.Registry.MustRegister(checkInterval, budgetDelay, schedulers)
}

// schedulers are the Schedulers the gauges read, the latest of each kind.
var schedulers = &live{byKind: map[string]*Scheduler{}}

type live struct {
	mu     sync.Mutex
	byKind map[string]*Scheduler
}

func report(s *Scheduler) {
	schedulers.mu.Lock()
	defer schedulers.mu.Unlock()
	schedulers.byKind[s.opts.Kind] = s
}

func (l *live) Describe(ch chan<- *prometheus.Desc) {
	ch <- oldestDesc
	ch <- budgetDesc
}

func (l *live) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for kind, s := range l.byKind {
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, s.oldest().Seconds(), kind)
		if s.opts.Rate > 0 {
			ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, s.opts.Rate, kind, "all")
		}
		if s.opts.ShareRate > 0 {
			ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, s.opts.ShareRate, kind, "contract")
		}
	}
}
