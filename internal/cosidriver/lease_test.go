package cosidriver_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
)

// Two drivers, as two pods during a rollout or beside an evicted one, against the API server:
// only the holder of the write lease changes anything. The other answers Unavailable (which the
// sidecar retries) without writing a grant record, a principal or a bucket, and sweeps nothing.
// A hand-over waits for the holder's write in flight, and the lease, given up, is taken at once
// rather than when it would expire.
func TestOnlyTheWriteLeaseHolderWrites(t *testing.T) {
	g, ctx := newG(t), testContext(t)
	clients, err := kubernetes.NewForConfig(env.stk.Config)
	g.Expect(err).NotTo(HaveOccurred())
	leaseName := "writer-" + bucketName(t)
	const expiry = 20 * time.Second // far longer than a hand-over may take
	newDriver := func(identity string, principals contractclient.Principals) (*cosidriver.Driver, cosidriver.Lease) {
		d := cosidriver.New(cosidriver.Options{Kube: env.kube, RecordNamespace: env.records, Principals: principals,
			Log: stderrLog(), Exclusive: true})
		lock, err := resourcelock.New(resourcelock.LeasesResourceLock, env.records, leaseName, clients.CoreV1(), clients.CoordinationV1(),
			resourcelock.ResourceLockConfig{Identity: identity})
		g.Expect(err).NotTo(HaveOccurred())
		return d, cosidriver.Lease{Lock: lock, Duration: expiry, RenewDeadline: expiry / 2, RetryPeriod: 200 * time.Millisecond}
	}
	gen, err := operator.NewContractAPIClient(env.stk.ManagerOptions)
	g.Expect(err).NotTo(HaveOccurred())
	held := &heldPrincipals{Principals: contractclient.New(gen), entered: make(chan struct{}, 1), proceed: make(chan struct{})}
	first, firstLease := newDriver("first", held)
	second, secondLease := newDriver("second", contractclient.New(gen))

	firstCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Lead(firstCtx, firstLease, nil) }()
	g.Eventually(first.Writing).Should(BeTrue())
	secondCtx, stopSecond := context.WithCancel(ctx)
	defer stopSecond()
	go func() { _ = second.Lead(secondCtx, secondLease, nil) }()
	g.Consistently(second.Writing, time.Second).Should(BeFalse(), "two drivers hold the write lease")

	// The second writes nothing: no bucket, no grant record, no sweep.
	other := bucketName(t)
	_, err = second.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: other, Parameters: classParams()})
	g.Expect(status.Code(err)).To(Equal(codes.Unavailable), "a driver without the lease: %v", err)
	g.Expect(bucketExists(ctx, other)).To(BeFalse())
	name := bucketName(t)
	created, err := first.DriverCreateBucket(ctx, &cosi.DriverCreateBucketRequest{Name: name, Parameters: classParams()})
	g.Expect(err).NotTo(HaveOccurred())
	access := cosiAccess(ctx, g, cosiNamespace(ctx, g), "lease")
	req := &cosi.DriverGrantBucketAccessRequest{BucketId: created.BucketId, Name: sidecarName(access),
		AuthenticationType: cosi.AuthenticationType_Key, Parameters: map[string]string{cosidriver.ParamAccess: "ReadOnly"}}
	_, err = second.DriverGrantBucketAccess(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.Unavailable), "a driver without the lease: %v", err)
	g.Expect(recordedAccesses(ctx, g, created.BucketId)).To(BeEmpty(), "a driver without the lease wrote a grant record")
	g.Expect(second.Sweep(ctx)).To(BeZero())

	// The holder's grant is in flight (held at the contract API) when the hand-over starts: it
	// ends before the holder stops writing, and the lease is given up only then.
	granted := make(chan error, 1)
	go func() { _, err := first.DriverGrantBucketAccess(ctx, req); granted <- err }()
	g.Eventually(held.entered).Should(Receive())
	stopped := make(chan struct{})
	go func() { first.StopWriting(); close(stopped) }()
	g.Consistently(stopped, 500*time.Millisecond).ShouldNot(BeClosed(), "the holder stopped writing with a grant in flight")
	_, err = first.DriverGrantBucketAccess(ctx, req)
	g.Expect(status.Code(err)).To(Equal(codes.Unavailable), "a driver that stopped writing let a call in: %v", err)
	close(held.proceed)
	g.Eventually(granted).Should(Receive(BeNil()))
	g.Eventually(stopped).Should(BeClosed())
	g.Expect(second.Writing()).To(BeFalse(), "the lease changed hands before the holder gave it up")

	giveUp()
	g.Eventually(firstDone).Should(Receive(BeNil()))
	g.Eventually(second.Writing, expiry/2).Should(BeTrue(), "the lease given up was not taken before it expired")
	again, err := second.DriverGrantBucketAccess(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.AccountId).NotTo(BeEmpty())
	g.Expect(recordedAccesses(ctx, g, created.BucketId)).To(ConsistOf(sidecarName(access)))
}

// heldPrincipals holds the first CreatePrincipal until proceed is closed, after saying so on
// entered: a write in flight.
type heldPrincipals struct {
	contractclient.Principals
	entered chan struct{}
	proceed chan struct{}
}

func (h *heldPrincipals) CreatePrincipal(ctx context.Context, contractID, key string) (contractclient.Principal, bool, error) {
	select {
	case h.entered <- struct{}{}:
	default:
	}
	select {
	case <-h.proceed:
	case <-ctx.Done():
		return contractclient.Principal{}, false, ctx.Err()
	}
	return h.Principals.CreatePrincipal(ctx, contractID, key)
}
