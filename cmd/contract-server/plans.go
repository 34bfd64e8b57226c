package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
)

// quotaUnits are the suffixes --plans accepts, as in Kubernetes quantities.
var quotaUnits = []struct {
	suffix string
	bytes  int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50},
	{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
}

// parsePlans reads "standard,small=1Gi": plans without a quota, or with one in bytes.
func parsePlans(s string) ([]contractserver.Plan, error) {
	var plans []contractserver.Plan
	seen := map[string]bool{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, quota, hasQuota := strings.Cut(item, "=")
		plan := contractserver.Plan{Name: strings.TrimSpace(name)}
		if plan.Name == "" {
			return nil, fmt.Errorf("plan %q has no name", item)
		}
		if seen[plan.Name] {
			return nil, fmt.Errorf("plan %q is listed twice", plan.Name)
		}
		seen[plan.Name] = true
		if hasQuota {
			q, err := parseQuota(strings.TrimSpace(quota))
			if err != nil {
				return nil, fmt.Errorf("plan %q: %w", plan.Name, err)
			}
			plan.QuotaBytes = q
		}
		plans = append(plans, plan)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("no plans in %q", s)
	}
	return plans, nil
}

func parseQuota(s string) (int64, error) {
	mult := int64(1)
	for _, u := range quotaUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("quota %q is not a positive whole number with an optional unit (Ki, Mi, Gi, Ti, Pi, k, M, G, T, P)", s)
	}
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("quota %q is too large", s)
	}
	return n * mult, nil
}
