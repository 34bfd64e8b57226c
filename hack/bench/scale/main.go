// Command scale is `make bench-scale`: how the operator behaves with N Buckets, on the real
// servers of the test harness, against the physical bound of those servers and against ACK's
// s3-controller, measured in the same run.
//
// The manager runs as its own process, built as shipped (go build ./cmd/manager), so its CPU
// and memory are its own (read from /proc). S3 calls are counted by the S3 server (versitygw's
// access log; a proxy in front of Ceph RGW), API writes by the API server itself
// (apiserver_request_total), and Buckets are followed in etcd, so that watching them does not
// load the API server. Scenarios:
//
//   - burst: N Buckets over 10 Ready Contracts, created at once; time until all are Ready;
//   - steady state: every Bucket through two resyncs; what they cost; then the provider calls a
//     second against the resync budget, and how soon drift another client makes in 20 Buckets
//     is corrected;
//   - delete: all N deleted; time until all are gone;
//   - bound: the same S3 calls per Bucket from a plain aws-sdk-go-v2 client, and the same API
//     writes per Bucket (the operator's, replayed with its bodies) from a plain client, each at
//     its best concurrency; then both at once, as the servers share the machine in a burst;
//   - rounds: the burst, its deletion and the bound, measured again (-rounds), since this
//     machine's speed drifts from minute to minute; the round with the median ratio is reported;
//   - ACK: the same burst and deletion with ACK's s3-controller v1.1.1, at its defaults and at
//     our concurrency.
//
// It prints a table and one summary line, and rewrites its section of docs/performance.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

type options struct {
	n           int
	contracts   int
	concurrency int // the manager's --max-concurrent-reconciles; 0 keeps its default
	resync      time.Duration
	// resyncMax, budget and budgetPerContract are the manager's --resync-max-period,
	// --resync-budget and --resync-budget-per-contract.
	resyncMax                 time.Duration
	budget, budgetPerContract float64
	steady                    bool
	managerFlags              []string
	ack                       []string // "defaults", "same"
	ackBin                    string
	ackTimeout                time.Duration
	doc                       string
	s3                        string // "versitygw" or "rgw"
	cores                     string // "shared" or "split" (coreSplit)
	rounds                    int    // bursts of ours, each followed by the bound; the median round is reported
	pprof                     string // where the benchmark serves its own profiles; "" for nowhere
}

// rgw says whether the run is on Ceph RGW rather than versitygw.
func (o options) rgw() bool { return o.s3 == "rgw" }

// split says whether the API server and etcd run on cores of their own.
func (o options) split() bool { return o.cores == "split" }

// key names the run's section of the page: "N=1000", "N=1000 s3=rgw", "N=1000 cores=split".
func (o options) key() string {
	k := fmt.Sprintf("N=%d", o.n)
	if o.split() {
		k += " cores=split"
	}
	if o.rgw() {
		k += " s3=rgw"
	}
	return k
}

// burstDeadline bounds the wait for a burst or a deletion of ours.
func (o options) burstDeadline() time.Duration {
	return 5*time.Minute + time.Duration(o.n)*100*time.Millisecond
}

// ackDeadline bounds ACK's; at its defaults (one worker) it may not finish, which is then
// reported as such.
func (o options) ackDeadline() time.Duration { return o.ackTimeout }

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o options
	var managerFlags stringList
	var ack string
	flag.IntVar(&o.n, "n", 1000, "How many Buckets.")
	flag.IntVar(&o.contracts, "contracts", 10, "How many Contracts the Buckets are spread over.")
	flag.IntVar(&o.concurrency, "max-concurrent-reconciles", 0, "The manager's --max-concurrent-reconciles; 0 keeps its default.")
	flag.DurationVar(&o.resync, "resync", 0, "The manager's --resync-period; 0 picks one long enough for the burst (30s, plus 30ms a Bucket).")
	flag.DurationVar(&o.resyncMax, "resync-max", 0, "The manager's --resync-max-period; 0 picks four resync periods.")
	flag.Float64Var(&o.budget, "budget", tuning.ResyncBudget, "The manager's --resync-budget, calls a second.")
	flag.Float64Var(&o.budgetPerContract, "budget-per-contract", tuning.ResyncBudgetPerContract, "The manager's --resync-budget-per-contract, calls a second.")
	flag.BoolVar(&o.steady, "steady", true, "Measure the steady state (two resyncs); off saves their time when only the burst is compared.")
	flag.Var(&managerFlags, "manager-flag", "An extra flag for the manager (repeatable).")
	flag.StringVar(&ack, "ack", "defaults,same", `ACK runs: "defaults", "same" (our concurrency), both comma-separated, or "off".`)
	flag.StringVar(&o.ackBin, "ack-bin", "", "ACK's s3-controller binary (default: ack-s3-controller in the harness's bin/; hack/tools/build.sh ack-s3-controller builds it).")
	flag.DurationVar(&o.ackTimeout, "ack-timeout", 10*time.Minute, "How long an ACK burst or deletion may take before it is reported unfinished.")
	flag.StringVar(&o.doc, "doc", "docs/performance.md", "The page whose section for this N (and S3 server, and cores) is rewritten; empty writes none.")
	flag.StringVar(&o.s3, "s3", "versitygw", `The S3 server: "versitygw", or "rgw" for a single-node Ceph RGW (the Debian packages of make deps).`)
	flag.StringVar(&o.cores, "cores", "shared", `"shared": every process may run on every core; "split": kube-apiserver and etcd on half of the cores, everything else on the other half, as in a cluster, where the control plane does not run the operator.`)
	flag.IntVar(&o.rounds, "rounds", 3, "How many times our burst and the bound are each measured, one after the other; the round with the median ratio is reported (this machine's speed drifts by 10 to 30 % from minute to minute).")
	flag.StringVar(&o.pprof, "pprof-bind-address", "", "Serve the benchmark's own Go profiles at /debug/pprof/ on this loopback address (what its clients, watch and S3 proxy cost).")
	flag.Parse()
	if o.s3 != "versitygw" && o.s3 != "rgw" {
		fmt.Fprintf(os.Stderr, "bench-scale: -s3=%q: want versitygw or rgw\n", o.s3)
		os.Exit(2)
	}
	if o.cores != "shared" && o.cores != "split" {
		fmt.Fprintf(os.Stderr, "bench-scale: -cores=%q: want shared or split\n", o.cores)
		os.Exit(2)
	}
	if o.rounds < 1 {
		fmt.Fprintf(os.Stderr, "bench-scale: -rounds=%d: want at least 1\n", o.rounds)
		os.Exit(2)
	}
	o.managerFlags = managerFlags
	if ack != "off" {
		o.ack = strings.Split(ack, ",")
	}
	if o.resync == 0 {
		o.resync = 30*time.Second + time.Duration(o.n)*30*time.Millisecond
	}
	if o.resyncMax == 0 {
		o.resyncMax = 4 * o.resync
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.pprof != "" {
		// The default mux holds net/http/pprof's handlers.
		go func() { logf("pprof         %v", http.ListenAndServe(o.pprof, nil)) }()
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		stop()
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o options) error {
	// ACK's HTTP client refuses a custom CA bundle, and nothing here needs one.
	_ = os.Unsetenv("AWS_CA_BUNDLE")
	// The harness's in-process servers (the contract server) log through controller-runtime.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	root, err := localenv.ModuleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "osm-bench-scale-")
	if err != nil {
		return err
	}
	machine := describeMachine()
	logf("bench-scale   N=%d over %d Contracts on %s; logs in %s", o.n, o.contracts, o.s3, dir)

	manager, err := buildManager(ctx, root, dir)
	if err != nil {
		return err
	}
	var ackModule string
	if len(o.ack) > 0 {
		if o.ackBin == "" {
			if o.ackBin, err = localenv.Binary("ack-s3-controller"); err != nil {
				return fmt.Errorf("%w (hack/tools/build.sh ack-s3-controller; make bench-scale does it)", err)
			}
		}
		if ackModule, err = ackModuleDir(ctx, root); err != nil {
			return err
		}
	}

	s, split, err := startServersOnTheirCores(ctx, root, dir, o)
	if err != nil {
		return err
	}
	defer s.close()
	logf("servers       kube-apiserver %s, etcd %s, S3 %s (the operator's endpoint %s)", s.stk.Config.Host, s.stk.EtcdURL, s.stk.S3.Direct, s.stk.S3.Endpoint)
	// For a person looking into a run while it goes: kubectl, and the API server's profiles.
	if _, err := s.kubeconfig("admin"); err != nil {
		return err
	}

	rep := &report{opts: o, machine: machine, started: time.Now(), split: split}
	var accessKey, secretKey string
	for i := range o.rounds {
		ns := fmt.Sprintf("scale-%d", i+1)
		ours, err := runOurs(ctx, s, manager, o, ns, i == o.rounds-1 && o.steady)
		if err != nil {
			return fmt.Errorf("our run: %w", err)
		}
		if accessKey, secretKey, err = contractKeys(ctx, s.stk.Client, ns, contractName(0)); err != nil {
			return err
		}
		b, err := measureBound(ctx, s, ours, accessKey, secretKey, fmt.Sprintf("r%d", i+1))
		if err != nil {
			return fmt.Errorf("measuring the bound: %w", err)
		}
		logf("bound         %s (both halves at once; alone S3 %s at %d, API %s at %d): round %d of %d, %.2fx", b.time.Round(10*time.Millisecond),
			b.s3Time.Round(10*time.Millisecond), b.s3Workers, b.apiTime.Round(10*time.Millisecond), b.apiWorkers,
			i+1, o.rounds, ours.burst.Seconds()/b.time.Seconds())
		rep.rounds = append(rep.rounds, round{ours: ours, bound: b})
	}
	rep.pickMedian()

	if len(o.ack) > 0 {
		if err := installACKCRDs(ctx, s, ackModule); err != nil {
			return err
		}
		for _, which := range o.ack {
			r := ackRun{name: "defaults"}
			switch which {
			case "defaults":
			case "same":
				r = ackRun{name: fmt.Sprintf("concurrency %d", rep.oursConcurrency()),
					flags: []string{fmt.Sprintf("--reconcile-default-max-concurrent-syncs=%d", rep.oursConcurrency())}}
			default:
				return fmt.Errorf("-ack: unknown run %q", which)
			}
			res, err := runACK(ctx, s, o.ackBin, r, o, accessKey, secretKey)
			if err != nil {
				logf("ack           %s could not run: %v", r.name, err)
				res = &result{name: "ACK s3-controller " + r.name, n: o.n, note: "could not run: " + err.Error()}
			}
			rep.ack = append(rep.ack, res)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep.print(os.Stdout)
	if o.doc != "" {
		path := o.doc
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if err := rep.writeDoc(path); err != nil {
			return err
		}
		logf("docs          %s rewritten for N=%d", o.doc, o.n)
	}
	fmt.Println(rep.summary())
	return nil
}

// startServersOnTheirCores starts the servers; with -cores=split, the API server and etcd on
// cores of their own, everything else on the others, and it says where.
func startServersOnTheirCores(ctx context.Context, root, dir string, o options) (*servers, *coreSplit, error) {
	if !o.split() {
		s, err := startServers(ctx, root, dir, o.rgw())
		return s, nil, err
	}
	split, err := newCoreSplit()
	if err != nil {
		return nil, nil, err
	}
	if err := split.pinSelf(); err != nil {
		return nil, nil, err
	}
	s, err := startServers(ctx, root, dir, o.rgw())
	if err != nil {
		return nil, nil, err
	}
	if err := split.pinAPIServer(); err != nil {
		s.close()
		return nil, nil, err
	}
	logf("cores         %s", split)
	return s, split, nil
}

// contractKeys reads the keys of a Contract's account from its Secret, for the bound's client
// and for ACK. They are never printed.
func contractKeys(ctx context.Context, c client.Client, ns, contract string) (string, string, error) {
	var obj storagev1alpha1.Contract
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: contract}, &obj); err != nil {
		return "", "", err
	}
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: obj.Status.SecretName}, &secret); err != nil {
		return "", "", err
	}
	ak, sk := string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey])
	if ak == "" || sk == "" {
		return "", "", errors.New("the Contract's Secret holds no keys")
	}
	return ak, sk, nil
}
