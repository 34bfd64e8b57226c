package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// WaitingRetry is how soon a resource that waits on something no watch reports looks again:
// tuning.WaitingRetry, or the resync period if that is shorter.
func WaitingRetry(resync time.Duration) time.Duration {
	if resync > 0 && resync < tuning.WaitingRetry {
		return resync
	}
	return tuning.WaitingRetry
}

// ResyncAfter is when a Ready resource is looked at again: the period, plus up to
// tuning.ResyncJitter of it at random, so resources reconciled in one moment spread out.
func ResyncAfter(period time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	return wait.Jitter(period, tuning.ResyncJitter)
}

// Sooner is the shorter of two waits; 0 is no wait at all, not the shortest.
func Sooner(a, b time.Duration) time.Duration {
	switch {
	case a == 0:
		return b
	case b == 0 || a <= b:
		return a
	}
	return b
}
