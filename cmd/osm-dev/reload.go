package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// reload rebuilds and restarts the manager after its sources changed; saved is when the first
// of them was saved. Everything else stays: etcd, the API server, S3, the contract server, and
// every resource in them. It prints one line: what changed and how it went; a failed build or
// generator names its first error, and its whole output is in logs/reload.log. Until the new
// binary is built, the old manager keeps running, so a build that fails changes nothing.
func (e *environment) reload(ctx context.Context, saved time.Time, changed []string) {
	what := describe(changed)
	failed := func(why string, out []byte) {
		if ctx.Err() != nil {
			return // Ctrl-C: not a failure worth a line
		}
		if len(out) > 0 {
			log := e.path("logs", "reload.log")
			if err := os.WriteFile(log, out, 0o600); err == nil {
				why += fmt.Sprintf(": %s (all of it in %s)", firstError(out), log)
			} else {
				why += ": " + firstError(out)
			}
		}
		fmt.Printf("reload  %s → %s\n", what, why)
	}

	if slices.ContainsFunc(changed, func(p string) bool { return strings.HasPrefix(p, "api"+string(filepath.Separator)) }) {
		if out, err := e.generate(ctx); err != nil {
			failed(fmt.Sprintf("generators failed (%v); the old manager keeps running", err), out)
			return
		}
	}
	building := time.Now()
	next := e.path("bin", "manager.next")
	if out, err := e.buildManager(ctx, next); err != nil {
		_ = os.Remove(next)
		failed("build failed; the old manager keeps running", out)
		return
	}

	built := time.Since(building)

	var did []string
	crdFiles, err := e.crdFiles()
	if err != nil {
		failed(err.Error(), nil)
		return
	}
	if hash, err := contentHash(crdFiles...); err != nil || hash != e.appliedCRDs {
		// Before the new manager starts: it may rely on the new schema.
		if _, err := e.applyCRDs(ctx); err != nil {
			failed(fmt.Sprintf("applying the CRDs failed (%v); the old manager keeps running", err), nil)
			return
		}
		did = append(did, "CRDs applied")
	}

	// The new manager may need a permission, or take a flag, that config/ gained meanwhile.
	applied := e.appliedInstall
	if err := e.applyInstall(ctx); err != nil {
		failed(fmt.Sprintf("applying the install's RBAC failed (%v); the old manager keeps running", err), nil)
		return
	}
	if e.appliedInstall != applied {
		did = append(did, "RBAC applied")
	}

	restarting := time.Now()
	e.stopManager()
	if err := os.Rename(next, e.path("bin", "manager")); err != nil {
		failed(fmt.Sprintf("%v; no manager is running, save again to retry", err), nil)
		return
	}
	if err := e.startManager(ctx); err != nil {
		failed(fmt.Sprintf("the new manager did not start (%v); save again to retry", err), nil)
		return
	}
	if manifests, err := os.ReadFile(e.webhookManifests()); err != nil || hashOf(manifests) != e.appliedWebhooks {
		// After the new manager serves them: the webhooks fail closed.
		if _, err := e.applyWebhooks(ctx); err != nil {
			failed(fmt.Sprintf("manager restarted, but applying the webhook configurations failed: %v", err), nil)
			return
		}
		did = append(did, "webhooks applied")
	}
	did = append(did, fmt.Sprintf("manager restarted in %.1fs (build %.1fs, restart %.1fs)",
		time.Since(saved).Seconds(), built.Seconds(), time.Since(restarting).Seconds()))
	fmt.Printf("reload  %s → %s\n", what, strings.Join(did, ", "))
}

// generate runs the generators of `make generate manifests` that read api/ (the Makefile's
// controller-gen commands): DeepCopy methods, then CRDs, RBAC and webhook configurations.
func (e *environment) generate(ctx context.Context) ([]byte, error) {
	for _, args := range [][]string{
		{"tool", "controller-gen", "object:headerFile=hack/boilerplate.go.txt", "paths=./api/..."},
		{"tool", "controller-gen", "rbac:roleName=manager-role", "crd", "webhook", "paths=./...",
			"output:crd:artifacts:config=config/crd/bases"},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = e.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return out, err
		}
	}
	// The generators rewrite zz_generated files under api/, which the watcher sees: record
	// their content now, so that rewrite does not count as a change of its own.
	generated, err := filepath.Glob(filepath.Join(e.root, "api", "*", "*", "zz_generated*.go"))
	if err != nil {
		return nil, err
	}
	for i, f := range generated {
		generated[i] = e.sources.rel(f)
	}
	e.sources.record(generated)
	return nil, nil
}

// buildDelve builds Delve (pinned in hack/tools/delve/go.mod) into the servers' bin folder, as
// hack/tools/build.sh builds the other tools: once, and again only when the pin changes.
func (e *environment) buildDelve(ctx context.Context) error {
	binDir, err := localenv.BinDir()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(e.root, "hack", "tools", "build.sh"), "dlv")
	cmd.Dir, cmd.Stdout, cmd.Stderr = e.root, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "BIN_DIR="+binDir)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/tools/build.sh dlv: %w", err)
	}
	if e.dlv, err = localenv.Binary("dlv"); err != nil {
		return err
	}
	status("delve", "%s; the manager is built with -gcflags='all=-N -l'", e.dlv)
	return nil
}

// firstError is the first line of a compiler's or generator's output that says what is wrong:
// not the "# package" header go build puts before its errors.
func firstError(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return "no output"
}
