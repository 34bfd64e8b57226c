package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// startManagerProcess runs cmd/manager, built once per stack (or s.ManagerBinary), with flags made from
// s.ManagerOptions and a kubeconfig that acts as the manager's ServiceAccount, and waits until
// its health server answers. Its log is manager.log in the stack's directory (ManagerLog).
func (s *Stack) startManagerProcess() error {
	bin := s.ManagerBinary
	if bin == "" {
		bin = filepath.Join(s.dir, "manager")
		if err := buildOnce(bin); err != nil {
			return err
		}
	}
	kubeconfig := filepath.Join(s.dir, "manager.kubeconfig")
	if err := writeKubeconfig(kubeconfig, s.managerConfig()); err != nil {
		return err
	}
	healthPort, err := localenv.FreePort()
	if err != nil {
		return err
	}
	o := s.ManagerOptions
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--contract-api-url=" + o.ContractAPIURL,
		"--contract-api-token-file=" + o.ContractAPITokenFile,
		"--contract-api-timeout=" + o.ContractAPITimeout.String(),
		"--max-concurrent-reconciles=" + strconv.Itoa(max(1, o.MaxConcurrentReconciles)),
		"--metrics-bind-address=" + o.MetricsBindAddress,
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(healthPort),
		"--enable-webhooks=false",
		"--" + egress.EndpointsFlag + "=" + o.AllowedEndpoints.String(),
		"--" + egress.NotificationEndpointsFlag + "=" + o.AllowedNotificationEndpoints.String(),
	}
	// Unset durations keep the flags' defaults, as the in-process manager keeps its own.
	if o.ResyncPeriod > 0 {
		args = append(args, "--resync-period="+o.ResyncPeriod.String())
	}
	// The resync budget is off unless set, as in the in-process manager: Options' zero values.
	args = append(args, "--resync-max-period="+o.ResyncMaxPeriod.String(),
		"--resync-budget="+strconv.FormatFloat(o.ResyncBudget, 'g', -1, 64),
		"--resync-budget-per-contract="+strconv.FormatFloat(o.ResyncBudgetPerContract, 'g', -1, 64))
	if o.S3Timeout > 0 {
		args = append(args, "--s3-timeout="+o.S3Timeout.String())
	}
	if len(o.WatchNamespaces) > 0 {
		args = append(args, "--watch-namespaces="+strings.Join(o.WatchNamespaces, ","))
	}
	args = append(args, s.ManagerArgs...)
	if s.ManagerBinary != "" {
		// An older manager does without the flags it predates, as it ran before they came.
		if args, err = knownFlags(bin, args); err != nil {
			return err
		}
	}
	p, err := localenv.StartProcess("manager", s.ManagerLog(), bin, args, nil)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.process = p
	s.mu.Unlock()
	return localenv.WaitHTTP(context.Background(), p, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/healthz", 60*time.Second)
}

// knownFlags keeps of args ("--name=value") those that bin lists in its -help.
func knownFlags(bin string, args []string) ([]string, error) {
	help, _ := exec.Command(bin, "-help").CombinedOutput() // -help exits 2
	known := map[string]bool{}
	for _, line := range strings.Split(string(help), "\n") {
		if f, ok := strings.CutPrefix(line, "  -"); ok {
			known[strings.Fields(f)[0]] = true
		}
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("%s -help lists no flags:\n%s", bin, help)
	}
	var kept []string
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if known[name] {
			kept = append(kept, a)
		}
	}
	return kept, nil
}

// ManagerLog is where a manager run as its own process writes its log.
func (s *Stack) ManagerLog() string { return filepath.Join(s.dir, "manager.log") }

// ContractServerLog is where the contract server writes its log.
func (s *Stack) ContractServerLog() string {
	return filepath.Join(s.dir, "contract-server", "server.log")
}

// buildOnce compiles cmd/manager into bin unless it is there.
func buildOnce(bin string) error {
	if _, err := os.Stat(bin); err == nil {
		return nil
	}
	root, err := localenv.ModuleRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building cmd/manager: %w\n%s", err, out)
	}
	return nil
}

// WriteKubeconfig writes a kubeconfig for the administrator, for kubectl as a user runs it.
func (s *Stack) WriteKubeconfig(path string) error { return writeKubeconfig(path, s.Config) }

// writeKubeconfig writes cfg, its impersonation included, as a kubeconfig file.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["stack"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["manager"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
		Impersonate:           cfg.Impersonate.UserName,
		ImpersonateGroups:     cfg.Impersonate.Groups,
	}
	kc.Contexts["stack"] = &clientcmdapi.Context{Cluster: "stack", AuthInfo: "manager"}
	kc.CurrentContext = "stack"
	return clientcmd.WriteToFile(*kc, path)
}
