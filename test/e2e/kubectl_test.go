package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// kubectl runs the real kubectl binary against the environment, in one namespace.
type kubectl struct {
	env       *Env
	namespace string
	// logf records each command as a user would type it (without --kubeconfig).
	logf func(format string, args ...any)
}

// kubectlResult is what one kubectl command printed.
type kubectlResult struct {
	Stdout, Stderr string
	Err            error
}

// run runs kubectl with args, stdin as its input, for at most timeout. Its output is never
// logged: it may hold a Secret.
func (k *kubectl) run(timeout time.Duration, stdin []byte, args ...string) kubectlResult {
	if k.namespace != "" {
		args = append([]string{"-n", k.namespace}, args...)
	}
	if k.logf != nil {
		k.logf("$ kubectl %s", strings.Join(args, " "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	full := append([]string{"--kubeconfig", k.env.Kubeconfig, "--cache-dir", kubectlCacheDir()}, args...)
	cmd := exec.CommandContext(ctx, "kubectl", full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("kubectl %s: no answer within %s", strings.Join(args, " "), timeout)
	} else if err != nil {
		err = fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return kubectlResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// must runs kubectl and returns its stdout, or the error with kubectl's stderr.
func (k *kubectl) must(timeout time.Duration, args ...string) (string, error) {
	r := k.run(timeout, nil, args...)
	return r.Stdout, r.Err
}

// kubectlCacheDir keeps kubectl's discovery cache out of the user's home directory.
func kubectlCacheDir() string {
	if dev != nil {
		return filepath.Join(dev.root, "kube-cache")
	}
	return filepath.Join(os.TempDir(), "osm-e2e-kube-cache")
}
