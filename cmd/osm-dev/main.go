// Command osm-dev runs the whole operator on this machine, with no cluster, no Docker and no
// cloud account: a cluster of etcd, kube-apiserver, kube-controller-manager and kube-scheduler
// (from bin/) with one node (kwok playing it; or, with --node=real, a real kubelet, containerd and
// runc in a network namespace of their own), an S3 server (versitygw, or a
// single-node Ceph RGW), the reference contract server, and the manager with its webhooks,
// under the ServiceAccount and RBAC of the install. Everything listens on 127.0.0.1 and stops,
// by PID, on Ctrl-C.
//
//	go run ./cmd/osm-dev            # or: make dev
//
// While it runs, saving a source of the manager rebuilds and restarts the manager alone
// (--watch=false turns that off); --debug runs it under Delve.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

type options struct {
	stateDir        string
	certsDir        string
	mkcert          string
	s3              string
	node            string
	noManager       bool
	noInstall       bool
	cosi            bool
	watch           bool
	debug           bool
	debugPort       int
	sourceDir       string
	apiPort         int
	etcdPort        int
	etcdPeerPort    int
	s3Port          int
	s3AdminPort     int
	s3WebsitePort   int
	contractAPIPort int
	webhookPort     int
	healthPort      int
	metricsPort     int

	controllerManagerPort int
	schedulerPort         int
	nodeProxyPort         int

	// allowed are S3 endpoints tenants may name besides this environment's own S3 server.
	allowed egress.Allowlist
	// nodeImages are OCI archives imported into the real node's containerd; nodePorts are ports
	// of 127.0.0.1 that pods reach on the node's address.
	nodeImages nodeImages
	nodePorts  nodePorts
}

func main() {
	var o options
	// A FlagSet of its own: libraries register flags on flag.CommandLine (controller-runtime
	// adds --kubeconfig) that mean nothing here.
	fs := flag.NewFlagSet("osm-dev", flag.ExitOnError)
	fs.StringVar(&o.stateDir, "state-dir", ".osm-dev", "Where data, logs and the kubeconfig live; reusing it keeps Contracts, Buckets and their data.")
	fs.StringVar(&o.certsDir, "certs-dir", "", "Webhook serving certificate and CA (default: .certs in the module).")
	fs.StringVar(&o.mkcert, "mkcert", "auto", `"auto": make the certificates with mkcert when it is installed; "never": always in Go.`)
	fs.StringVar(&o.s3, "s3", "versitygw", "S3 server: versitygw, or rgw (a single-node Ceph; its data does not survive a restart).")
	// The samples' images are built here and imported into the real node (node.go): nothing
	// can be pulled from a registry on this machine.
	fs.StringVar(&o.node, "node", "auto", `"real": a kubelet, containerd and runc run pods as containers, in a network namespace of their own (root, make deps); `+
		`"fake": kwok plays the node, pods "run" without containers; "auto": real where it can run, fake otherwise, with a line saying why. `+
		`The real node is one per machine: with "real", osm-dev waits up to 15 minutes for another osm-dev's real node to stop, saying who holds it; "auto" takes the fake node at once.`)
	fs.BoolVar(&o.noManager, "no-manager", false, "Start everything but the manager, and print how to run it yourself (debugger, editor).")
	fs.BoolVar(&o.noInstall, "no-install", false, "Start the cluster, the S3 server and the contract server only: no CRDs, RBAC, webhooks or manager, "+
		"for an install of the release (dist/install.yaml, the Helm chart) to bring its own, as test/install does. Implies --no-manager.")
	fs.Var(&o.nodeImages, "node-image", "NAME=ARCHIVE: import the OCI archive (make image: dist/images/manager.tar) into the real node's containerd as NAME, "+
		"by tag and by digest, so pods run it without a registry (NAME@sha256:..., as dist/install.yaml names it). Repeatable.")
	fs.Var(&o.nodePorts, "node-port", "A port of 127.0.0.1 that pods also reach on the node's address "+nodeIP+
		", as they reach the S3 server's and the contract server's (a server of your own). Repeatable, or comma-separated.")
	fs.BoolVar(&o.cosi, "cosi", false, "Also run the COSI driver with COSI's provisioner sidecar (built on first use), and install COSI's CRDs (docs/cosi.md).")
	fs.BoolVar(&o.watch, "watch", true, "Rebuild and restart the manager when its sources change (cmd/manager, internal/, api/, go.mod).")
	fs.BoolVar(&o.debug, "debug", false, "Run the manager under Delve, headless, for a debugger to attach to (see --debug-port).")
	fs.IntVar(&o.debugPort, "debug-port", 2345, "Delve's port with --debug.")
	fs.StringVar(&o.sourceDir, "source-dir", "", "The module the manager is built, watched and installed from (default: the one osm-dev was built from).")
	fs.IntVar(&o.apiPort, "api-port", 16443, "kube-apiserver port.")
	fs.IntVar(&o.etcdPort, "etcd-port", 12379, "etcd client port.")
	fs.IntVar(&o.etcdPeerPort, "etcd-peer-port", 12380, "etcd peer port.")
	fs.IntVar(&o.s3Port, "s3-port", 17070, "S3 port (versitygw; rgw picks a free one).")
	fs.IntVar(&o.s3AdminPort, "s3-admin-port", 17071, "versitygw admin API port.")
	fs.IntVar(&o.s3WebsitePort, "s3-website-port", 17072, "versitygw static website port (http://<bucket>.localhost:17072/; rgw serves websites on its S3 port).")
	fs.IntVar(&o.contractAPIPort, "contract-api-port", 18090, "Contract server port.")
	fs.Var(&o.allowed, egress.EndpointsFlag, "S3 endpoints a Contract of an existing account may name, besides this environment's own S3 server "+
		"(the manager's flag of that name: URL patterns, comma-separated or repeated).")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "Manager webhook port.")
	fs.IntVar(&o.healthPort, "health-port", 18081, "Manager health probe port.")
	fs.IntVar(&o.metricsPort, "metrics-port", 18443, "Manager metrics port (HTTPS, for callers allowed to get /metrics).")
	fs.IntVar(&o.controllerManagerPort, "controller-manager-port", 17257, "kube-controller-manager's secure port (health checks).")
	fs.IntVar(&o.schedulerPort, "scheduler-port", 17259, "kube-scheduler's secure port (health checks).")
	fs.IntVar(&o.nodeProxyPort, "node-proxy-port", 18100, "HTTP proxy to the real node's pods and Services (curl -x http://127.0.0.1:18100 http://<cluster IP>/).")
	_ = fs.Parse(os.Args[1:])

	if o.s3 != "versitygw" && o.s3 != "rgw" {
		fmt.Fprintf(os.Stderr, "osm-dev: --s3 must be versitygw or rgw, not %q\n", o.s3)
		os.Exit(2)
	}
	if o.node != "auto" && o.node != "real" && o.node != "fake" {
		fmt.Fprintf(os.Stderr, "osm-dev: --node must be auto, real or fake, not %q\n", o.node)
		os.Exit(2)
	}
	if o.noInstall {
		o.noManager = true
	}
	if o.mkcert != "auto" && o.mkcert != "never" {
		fmt.Fprintf(os.Stderr, "osm-dev: --mkcert must be auto or never, not %q\n", o.mkcert)
		os.Exit(2)
	}
	for _, dir := range []*string{&o.stateDir, &o.certsDir, &o.sourceDir} {
		if *dir == "" {
			continue
		}
		abs, err := filepath.Abs(*dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "osm-dev:", err)
			os.Exit(1)
		}
		*dir = abs
	}

	// osm-dev's own API client logs nothing worth showing; without a logger, controller-runtime
	// prints a stack trace 30 s in (a cold --debug build takes minutes).
	ctrllog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &environment{opts: o}
	err := env.run(ctx)
	env.stopAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "osm-dev:", err)
		os.Exit(1)
	}
}
