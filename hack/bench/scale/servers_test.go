package main

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestTheManagerRunsWithTheEnvironmentItsDeploymentGives(t *testing.T) {
	env, err := deploymentEnv(filepath.Join("..", "..", "..", "config", "manager", "manager.yaml"), "manager")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(env, "GODEBUG=gcshrinkstackoff=1") {
		t.Errorf("environment %q: want the GODEBUG config/manager/manager.yaml sets", env)
	}
	if _, err := deploymentEnv(filepath.Join("..", "..", "..", "config", "manager", "manager.yaml"), "sidecar"); err == nil {
		t.Error("a container the Deployment does not have: no error, want one")
	}
}
