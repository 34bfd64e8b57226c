// Command cosi-driver is a COSI v1alpha1 driver over the contract API (internal/cosidriver):
// it serves COSI's Identity and Provisioner services on a unix socket, for COSI's provisioner
// sidecar beside it in the same pod, and reads Contracts and their Secrets through the
// Kubernetes API.
//
// It is a command of its own, not a mode of the manager: it runs as a sidecar's partner with a
// socket in a shared volume, scales and restarts apart from the operator, and needs only to
// read Contracts and Secrets, not the manager's rights.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/cosidriver"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/operator"
	"github.com/object-storage-manager/object-storage-manager/internal/version"
)

func main() {
	var (
		opts   operator.Options
		socket string
		name   string
		s3Time time.Duration
		rec    recordOptions
	)
	flag.StringVar(&socket, "socket", "/var/lib/cosi/cosi.sock",
		"Unix socket to serve COSI on; the sidecar's --driver-addr is unix://<this path>.")
	flag.StringVar(&name, "driver-name", cosidriver.DefaultName,
		"Driver name that BucketClasses and BucketAccessClasses give as driverName.")
	flag.StringVar(&opts.ContractAPIURL, "contract-api-url", os.Getenv("OSM_CONTRACT_API_URL"),
		"Base URL of the contract API (env OSM_CONTRACT_API_URL).")
	flag.StringVar(&opts.ContractAPITokenFile, "contract-api-token-file", os.Getenv("OSM_CONTRACT_API_TOKEN_FILE"),
		"File holding the contract API bearer token, re-read on every request (env OSM_CONTRACT_API_TOKEN_FILE).")
	flag.DurationVar(&opts.ContractAPITimeout, "contract-api-timeout", 30*time.Second, "Timeout of one contract API request.")
	flag.BoolVar(&opts.ContractAPIAllowInsecureHTTP, operator.AllowInsecureHTTPFlag, false,
		"Accept a plain http contract API URL to a host that is not local.")
	flag.DurationVar(&s3Time, "s3-timeout", 30*time.Second, "Timeout of one S3 request.")
	flag.Var(&opts.AllowedEndpoints, egress.EndpointsFlag, egress.EndpointsUsage)
	flag.StringVar(&rec.namespace, "record-namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace of the driver's grant records, one ConfigMap per access granted (env POD_NAMESPACE).")
	flag.DurationVar(&rec.period, "revoke-period", time.Minute,
		"Period of the sweep that revokes the access of deleted BucketAccesses a watch did not report.")
	flag.StringVar(&rec.lease, "lease-name", "",
		"Name of the Lease, in the record namespace, that the driver holds while it writes, so that two driver pods never edit a bucket's policy at once (default: <driver-name>-writer).")
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Line("cosi-driver"))
		return
	}
	log := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(log)
	if err := run(opts, socket, name, s3Time, rec); err != nil {
		log.Error(err, "COSI driver stopped")
		os.Exit(1)
	}
}

// recordOptions say where the grant records go and how often deleted BucketAccesses are looked
// for.
type recordOptions struct {
	namespace string
	period    time.Duration
	// lease names the write lease, in namespace.
	lease string
}

func run(opts operator.Options, socket, name string, s3Timeout time.Duration, rec recordOptions) error {
	if rec.namespace == "" {
		return fmt.Errorf("--record-namespace (or POD_NAMESPACE) is required: the driver records every grant there, " +
			"to revoke it when its BucketAccess is deleted (COSI's sidecar v0.1.0 never asks)")
	}
	gen, err := operator.NewContractAPIClient(opts)
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := storagev1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	// Not a cached client: the driver decides revocations from what it reads.
	kube, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("cosi-driver")
	driver := cosidriver.New(cosidriver.Options{Name: name, Kube: kube, RecordNamespace: rec.namespace,
		Principals: contractclient.New(gen), S3Timeout: s3Timeout,
		AllowedEndpoints: opts.AllowedEndpoints, Log: log, Exclusive: true})
	lease, err := writeLease(cfg, rec, name)
	if err != nil {
		return err
	}
	lis, err := cosidriver.Listen(socket)
	if err != nil {
		return err
	}
	server := driver.Server()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The lease has a context of its own: it is given up only after the last write ended.
	leaseCtx, release := context.WithCancel(context.Background())
	defer func() { driver.StopWriting(); release() }()
	led := make(chan error, 1)
	revoker := &cosidriver.Revoker{Driver: driver, Watch: kube, Period: rec.period}
	go func() { led <- driver.Lead(leaseCtx, lease, revoker.Run) }()
	go func() {
		select {
		case <-ctx.Done():
		case err := <-led:
			// Lost while meant to be kept: end at once, so no write in flight lands after the
			// next holder's; the pod restarts the container.
			log.Error(err, "Stopping at once")
			os.Exit(1)
		}
		server.GracefulStop() // the calls in flight end first
		driver.StopWriting()  // and a sweep's revocation in flight
		release()
	}()
	log.Info("Serving COSI", "socket", socket, "driver", name, "records", rec.namespace, "lease", lease.Lock.Describe(), "version", version.Get())
	err = server.Serve(lis)
	if ctx.Err() != nil {
		if leadErr := <-led; leadErr != nil { // the lease given up, so the next driver need not wait for it
			return leadErr
		}
	}
	return err
}

// writeLease is the Lease the driver holds while it writes, in the record namespace, under an
// identity of this process's own.
func writeLease(cfg *rest.Config, rec recordOptions, driverName string) (cosidriver.Lease, error) {
	clients, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return cosidriver.Lease{}, err
	}
	host, err := os.Hostname()
	if err != nil {
		return cosidriver.Lease{}, err
	}
	name := rec.lease
	if name == "" {
		name = driverName + "-writer"
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, rec.namespace, name, clients.CoreV1(), clients.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return cosidriver.Lease{}, err
	}
	return cosidriver.Lease{Lock: lock}, nil
}
