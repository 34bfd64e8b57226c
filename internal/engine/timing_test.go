package engine

import (
	"testing"
	"time"
)

// Resyncs are spread over a tenth of the period, so Buckets made together do not come back
// together.
func TestResyncsAreSpreadOverATenthOfThePeriod(t *testing.T) {
	period := 10 * time.Minute
	seen := map[time.Duration]bool{}
	for range 100 {
		d := ResyncAfter(period)
		if d < period || d > period+period/10 {
			t.Fatalf("resync after %s, want between %s and %s", d, period, period+period/10)
		}
		seen[d] = true
	}
	if len(seen) < 50 {
		t.Errorf("100 resyncs fell on %d distinct moments: not spread", len(seen))
	}
	if ResyncAfter(0) != 0 {
		t.Error("a zero period must stay zero (no resync)")
	}
}

func TestSoonerIsTheShorterWaitAndZeroIsNone(t *testing.T) {
	for _, tt := range []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, time.Second, time.Second}, {time.Second, 0, time.Second},
		{time.Second, time.Minute, time.Second}, {time.Minute, time.Second, time.Second},
	} {
		if got := Sooner(tt.a, tt.b); got != tt.want {
			t.Errorf("Sooner(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestWaitingRetryIsAMinuteOrTheResyncPeriodIfShorter(t *testing.T) {
	if got := WaitingRetry(5 * time.Second); got != 5*time.Second {
		t.Errorf("WaitingRetry(5s) = %s", got)
	}
	if got := WaitingRetry(time.Hour); got != time.Minute {
		t.Errorf("WaitingRetry(1h) = %s", got)
	}
	if got := WaitingRetry(0); got != time.Minute {
		t.Errorf("WaitingRetry(0) = %s, want a minute: without a resync period a wait still ends", got)
	}
}
