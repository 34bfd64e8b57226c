// Command kubectl-osm is a kubectl plugin for object-storage-manager: `kubectl osm`, once the
// binary is on PATH (make install-plugin builds it into bin/).
//
//	kubectl osm trace bucket/NAME        the tree of related objects, each one's Ready reason, the first not Ready marked
//	kubectl osm env bucketaccess/NAME    export AWS_... lines for a shell, from the credentials Secret
//	kubectl osm status                   per namespace: objects by Ready reason, keys due for rotation, blocked deletions
//
// It takes kubectl's usual flags (--kubeconfig, --context, -n, ...) through k8s.io/cli-runtime.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := newRootCommand(streams, func() bool { return term.IsTerminal(int(os.Stdout.Fd())) })
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}

// newRootCommand is `kubectl osm`; stdoutIsTerminal says whether env would print to a screen.
func newRootCommand(streams genericiooptions.IOStreams, stdoutIsTerminal func() bool) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:   "kubectl osm",
		Short: "Explain object-storage-manager's Contracts, Buckets, BucketAccesses and Applications",
		Long: "kubectl osm reads the objects of object-storage-manager and says what they wait for.\n" +
			"What each Ready reason means, and what to do about it: docs/troubleshooting.md.",
		SilenceUsage: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	flags.AddFlags(root.PersistentFlags())

	trace := &cobra.Command{
		Use:   "trace (contract|bucket|bucketaccess|application)/NAME",
		Short: "Show the tree of objects related to one, each with its Ready reason, the first not Ready marked",
		Example: "  kubectl osm trace bucket/photos\n" +
			"  kubectl osm -n demo trace application photos",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRef(args, kindBucket, kindContract, kindBucketAccess, kindApplication)
			if err != nil {
				return err
			}
			c, ns, err := connect(flags)
			if err != nil {
				return err
			}
			t := &tracer{ctx: cmd.Context(), c: c, namespace: ns}
			tree, err := t.trace(r)
			if err != nil {
				return explain(err)
			}
			return renderTrace(streams.Out, tree, ns)
		},
	}

	var show bool
	env := &cobra.Command{
		Use:   "env (bucketaccess|contract)/NAME",
		Short: "Print export lines for the AWS_* variables of a BucketAccess's or Contract's Secret",
		Long: "env prints the credentials of a BucketAccess (or a Contract) as shell export lines, for\n" +
			"local use with the AWS CLI or an SDK. It refuses to print them to a terminal unless --show.",
		Example: `  eval "$(kubectl osm env bucketaccess/private-reader)"`,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRef(args, kindBucketAccess, kindContract)
			if err != nil {
				return err
			}
			if !show && stdoutIsTerminal() {
				return errTerminal
			}
			c, ns, err := connect(flags)
			if err != nil {
				return err
			}
			creds, err := readCredentials(cmd.Context(), c, ns, r)
			if err != nil {
				return explain(err)
			}
			if creds.warning != "" {
				if _, err := fmt.Fprintln(streams.ErrOut, "Warning:", creds.warning); err != nil {
					return err
				}
			}
			return writeEnv(streams.Out, creds.vars)
		},
	}
	env.Flags().BoolVar(&show, "show", false, "print the secret key even when stdout is a terminal")

	var allNamespaces bool
	var within time.Duration
	status := &cobra.Command{
		Use:   "status",
		Short: "Summarise each namespace: objects by Ready reason, keys due for rotation, deletions blocked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := connect(flags)
			if err != nil {
				return err
			}
			if allNamespaces {
				ns = ""
			}
			now := time.Now()
			sums, err := statusReader{c: c, namespace: ns, now: now, within: within}.summaries(cmd.Context())
			if err != nil {
				return explain(err)
			}
			return renderStatus(streams.Out, sums, now, within)
		},
	}
	status.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "summarise every namespace")
	status.Flags().DurationVar(&within, "due-within", 24*time.Hour, "list keys whose rotation is due within this long")

	root.AddCommand(trace, env, status)
	return root
}

// connect makes a client from kubectl's flags, and says which namespace they name.
func connect(flags *genericclioptions.ConfigFlags) (client.Reader, string, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme(), Mapper: mapper})
	return c, ns, err
}

// scheme knows the operator's kinds and Secrets.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, storagev1alpha1.AddToScheme, paasv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// explain adds what a missing kind means: the operator's CRDs are not installed.
func explain(err error) error {
	if meta.IsNoMatchError(err) {
		return fmt.Errorf("%w: are object-storage-manager's CRDs installed in this cluster? (docs/install.md)", err)
	}
	return err
}
