package cosidriver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/keylock"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// DefaultName is the driver's name, which BucketClasses and BucketAccessClasses give as
// driverName.
const DefaultName = "cosi.storage.osm.dev"

// Options configure a Driver.
type Options struct {
	// Name is what DriverGetInfo answers; DefaultName when "".
	Name string
	// Kube reads Contracts and their Secrets, lists COSI's BucketAccesses, and writes the grant
	// records in RecordNamespace. It must not be a cached client: revocations are decided
	// from what it reads.
	Kube client.Client
	// RecordNamespace holds the grant records (see recordGrant); "" records nothing, and Sweep
	// then revokes nothing.
	RecordNamespace string
	// Principals is the contract API.
	Principals contractclient.Principals
	// S3Timeout bounds each S3 request (30 s when 0).
	S3Timeout time.Duration
	// AllowedEndpoints is where the S3 endpoint of a Contract over an existing account
	// (spec.credentials, named by a tenant) may be; the manager's --allowed-endpoints.
	AllowedEndpoints egress.Allowlist
	// Log gets one line per call that failed, and what changed; never a secret.
	Log logr.Logger
	// Exclusive: the driver writes only while it holds its write lease (Lead), so that two
	// driver pods never edit one bucket's policy at once. Without, it writes from the start (one
	// driver alone, as the tests run it).
	Exclusive bool
}

// Driver implements COSI's Identity and Provisioner services.
type Driver struct {
	name            string
	kube            client.Client
	recordNamespace string
	principals      contractclient.Principals
	httpClient      *http.Client
	// tenantClient reaches the endpoints tenants name, held to Options.AllowedEndpoints.
	tenantClient *http.Client
	log          logr.Logger

	// locks serialise the calls on one bucket: a grant and a revoke each rewrite its policy.
	locks keylock.Map
	// gate lets those calls in only while this driver may write (lease.go).
	gate writeGate
}

var (
	_ cosi.IdentityServer    = (*Driver)(nil)
	_ cosi.ProvisionerServer = (*Driver)(nil)
)

// New returns a Driver.
func New(opts Options) *Driver {
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	timeout := opts.S3Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	d := &Driver{name: name, kube: opts.Kube, recordNamespace: opts.RecordNamespace, principals: opts.Principals, log: opts.Log,
		httpClient: objectstore.NewHTTPClient(timeout, 4, nil), tenantClient: objectstore.NewHTTPClient(timeout, 4, &opts.AllowedEndpoints)}
	d.gate.writing.Store(!opts.Exclusive)
	return d
}

// DriverGetInfo implements cosi.IdentityServer.
func (d *Driver) DriverGetInfo(context.Context, *cosi.DriverGetInfoRequest) (*cosi.DriverGetInfoResponse, error) {
	return &cosi.DriverGetInfoResponse{Name: d.name}, nil
}

// open lets a call on bucket in while the driver writes (errNotWriting when it does not), holds
// the other calls on that bucket (a retry of the sidecar's waits for the call it repeats) and
// reads the account of its Contract: every call on a bucket starts so. The caller runs unlock,
// and makes its contract API calls with the context returned, which names the Contract's
// namespace as their tenant (the provider budgets per tenant).
func (d *Driver) open(ctx context.Context, bucket bucketID) (_ context.Context, acct account, unlock func(), err error) {
	ctx = contractclient.WithTenant(ctx, bucket.Contract.Namespace)
	leave, err := d.gate.enter()
	if err != nil {
		return ctx, account{}, nil, err
	}
	unlockBucket := d.locks.Lock(bucket.String())
	unlock = func() { unlockBucket(); leave() }
	if acct, err = d.account(ctx, bucket.Contract); err != nil {
		unlock()
		return ctx, account{}, nil, fromError(err)
	}
	return ctx, acct, unlock, nil
}

// Server is the gRPC server with both services registered, and a log line for each call that
// failed (method and status only: requests and answers carry keys).
func (d *Driver) Server() *grpc.Server {
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err != nil {
			d.log.Info("Call failed", "method", info.FullMethod, "code", status.Code(err).String(), "message", status.Convert(err).Message())
		} else {
			d.log.V(1).Info("Call succeeded", "method", info.FullMethod)
		}
		return resp, err
	}))
	cosi.RegisterIdentityServer(s, d)
	cosi.RegisterProvisionerServer(s, d)
	return s
}

// Listen opens the unix socket at path, replacing a stale one a previous run left behind.
func Listen(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	return l, nil
}

// The gRPC codes the driver answers with:
//   - InvalidArgument: the request or the class parameters are wrong; the user changes them.
//   - FailedPrecondition: the request is right but the world is not as it needs (the Contract
//     does not exist, the bucket is not empty, the bucket is not the driver's); asking again
//     helps only once someone changed it.
//   - AlreadyExists: a bucket of that name exists and is not this request's.
//   - Unavailable: the contract API, S3 or the Kubernetes API failed or is not ready; asking
//     again helps.

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// fromError turns a failure into its gRPC status, for the sidecar (and its user) to read.
func fromError(err error) error {
	var (
		notReady *errNotReady
		noC      *errNoContract
	)
	switch {
	case errors.As(err, &notReady):
		return status.Error(codes.Unavailable, err.Error())
	case errors.As(err, &noC):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	if e, ok := contractclient.AsError(err); ok {
		if e.Retryable() {
			return status.Error(codes.Unavailable, err.Error())
		}
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	switch {
	case errors.Is(err, objectstore.ErrBucketTakenElsewhere):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, objectstore.ErrAccessDenied):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, objectstore.ErrBucketNotEmpty):
		return status.Error(codes.FailedPrecondition, err.Error())
	case objectstore.ErrorCode(err) != "" && !objectstore.IsTransient(err):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return status.Error(codes.Unavailable, err.Error())
}
