package operator_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// burstBuckets is how many Buckets, each with a BucketAccess, one namespace makes at once.
const burstBuckets = 60

// The manager as shipped names, on every contract API call, the namespace of the resource the
// call is for (OSM-Tenant), so the contract server budgets each namespace apart; and one
// namespace's burst (Buckets and BucketAccesses made, rotated and deleted at once, with the
// shipped worker count) stays within the server's default budgets: no call is answered 429.
// The figures it logs (-v) chose those defaults (contractserver.DefaultTenantBurst).
func TestEveryContractAPICallNamesItsNamespaceWithinTheDefaultBudgets(t *testing.T) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(3 * time.Minute)
	g.SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	stk, err := stack.Start(ctx, stack.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer stk.Stop()
	// As shipped (cmd/manager's defaults): the worker count, and a resync period for which a
	// Contract's usage answer is kept.
	stk.ManagerOptions.MaxConcurrentReconciles = tuning.Workers
	stk.ManagerOptions.ResyncPeriod = 10 * time.Minute
	g.Expect(stk.StartManager()).To(Succeed())
	k8s := stk.Client

	busy, quiet := namespace(ctx, g, k8s), namespace(ctx, g, k8s)
	contracts := map[string]*storagev1alpha1.Contract{busy: contract(busy), quiet: contract(quiet)}
	var buckets []client.Object
	var accesses []*storagev1alpha1.BucketAccess
	for ns, n := range map[string]int{busy: burstBuckets, quiet: 1} {
		g.Expect(k8s.Create(ctx, contracts[ns])).To(Succeed())
		for i := range n {
			name := fmt.Sprintf("b-%d", i)
			buckets = append(buckets, &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: storagev1alpha1.BucketSpec{BucketName: fmt.Sprintf("%s-%d", ns, i), ContractName: "acc"}})
			accesses = append(accesses, &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(name), Access: storagev1alpha1.AccessReadWrite}})
		}
	}
	for _, b := range buckets {
		g.Expect(k8s.Create(ctx, b)).To(Succeed())
	}
	for _, a := range accesses {
		g.Expect(k8s.Create(ctx, a)).To(Succeed())
	}
	first := map[types.UID]string{}
	for _, a := range accesses {
		g.Eventually(ready(ctx, k8s, a, func() []metav1.Condition { return a.Status.Conditions })).Should(BeTrue(), "BucketAccess %s/%s", a.Namespace, a.Name)
		first[a.UID] = a.Status.AccessKeyID
	}
	for _, a := range accesses {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"now"}}}`, storagev1alpha1.RotateKeyAnnotation))
		g.Expect(k8s.Patch(ctx, a, patch)).To(Succeed())
	}
	for _, a := range accesses {
		g.Eventually(func() bool {
			return k8s.Get(ctx, client.ObjectKeyFromObject(a), a) == nil && a.Status.AccessKeyID != "" && a.Status.AccessKeyID != first[a.UID]
		}).Should(BeTrue(), "BucketAccess %s/%s rotated", a.Namespace, a.Name)
	}
	for _, c := range contracts {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	}
	for _, a := range accesses {
		g.Expect(k8s.Delete(ctx, a)).To(Succeed())
	}
	for _, b := range buckets {
		g.Expect(k8s.Delete(ctx, b)).To(Succeed())
	}
	for _, o := range append(slices.Clone(buckets), asObjects(accesses)...) {
		g.Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(o), o)) }).Should(BeTrue(), "%s gone", o.GetName())
	}

	// Each call is for the namespace of the Contract its path (or its Idempotency-Key, a
	// purchase) names.
	namespaceOf := map[string]string{}
	for ns, c := range contracts {
		namespaceOf[c.Status.ContractID], namespaceOf[string(c.UID)] = ns, ns
	}
	calls := stk.ContractAPI.Calls(nil)
	byTenant := map[string][]time.Time{}
	byOperation := map[string]int{}
	for _, c := range calls {
		id := strings.SplitN(strings.TrimPrefix(c.Path, "/v1/contracts/"), "/", 2)[0]
		if c.Path == "/v1/contracts" {
			id = c.IdempotencyKey
		}
		if want := namespaceOf[id]; c.Tenant != want || want == "" {
			t.Errorf("%s %s named tenant %q, want the namespace of its Contract %q", c.Method, c.Path, c.Tenant, want)
		}
		if c.Status == http.StatusTooManyRequests {
			t.Errorf("%s %s for %s was answered 429: the operator's burst went past the default budgets", c.Method, c.Path, c.Tenant)
		}
		byTenant[c.Tenant] = append(byTenant[c.Tenant], c.At)
		byOperation[c.Method+" "+pathTemplate(c.Path)]++
	}
	t.Logf("contract API calls by operation: %v", byOperation)
	for ns, at := range byTenant {
		slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
		peak, burst := peakPerSecond(at), burstNeeded(at, contractserver.DefaultTenantRequestsPerSecond)
		t.Logf("tenant %s: %d calls over %s, at most %d in one second; a budget of %d a second needs a burst of %d (default %d)",
			ns, len(at), at[len(at)-1].Sub(at[0]).Round(time.Second), peak, contractserver.DefaultTenantRequestsPerSecond, burst, contractserver.DefaultTenantBurst)
	}
	g.Expect(byTenant[busy]).NotTo(BeEmpty())
	g.Expect(byTenant[quiet]).NotTo(BeEmpty())
}

func asObjects(accesses []*storagev1alpha1.BucketAccess) []client.Object {
	out := make([]client.Object, 0, len(accesses))
	for _, a := range accesses {
		out = append(out, a)
	}
	return out
}

// peakPerSecond is the most calls within any one second.
func peakPerSecond(at []time.Time) int {
	peak := 0
	for i, j := 0, 0; j < len(at); j++ {
		for at[j].Sub(at[i]) >= time.Second {
			i++
		}
		peak = max(peak, j-i+1)
	}
	return peak
}

// burstNeeded is the smallest burst of a token bucket refilled at perSecond that admits every
// call at its time (sorted): the most calls in any stretch beyond what the rate refills in it.
func burstNeeded(at []time.Time, perSecond float64) int {
	need := 0.0
	for i := range at {
		for j := i; j < len(at); j++ {
			need = max(need, float64(j-i+1)-perSecond*at[j].Sub(at[i]).Seconds())
		}
	}
	return int(need + 0.999)
}

// pathTemplate is an API path with its ids as {id}: /v1/contracts/{id}/principals/{id}.
func pathTemplate(p string) string {
	parts := strings.Split(p, "/")
	for i := 3; i < len(parts); i += 2 {
		parts[i] = "{id}"
	}
	return strings.Join(parts, "/")
}
