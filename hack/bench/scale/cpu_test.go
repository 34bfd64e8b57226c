package main

import (
	"testing"
	"time"
)

func TestSplitStatKeepsANameWithSpacesAndParentheses(t *testing.T) {
	comm, fields, ok := splitStat([]byte("4242 (kube (api) server) S 17 4242 4242 0 -1 4194560 9 0 0 0 150 25 0 0 20 0 8 0"))
	if !ok || comm != "kube (api) server" {
		t.Fatalf("comm %q (%v), want %q", comm, ok, "kube (api) server")
	}
	if fields[1] != "17" {
		t.Errorf("ppid %q, want 17", fields[1])
	}
	if got := ticks(fields[11], fields[12]); got != 1750*time.Millisecond {
		t.Errorf("CPU %s, want 1.75s (150 + 25 ticks)", got)
	}
}

func TestMachineCPUCountsTheBenchmarkItself(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) { //nolint:revive // burns CPU on purpose, for a bounded time
	}
	if c := machineCPU(); c["bench"] <= 0 {
		t.Errorf("machineCPU() = %v, want this process's CPU as bench", c)
	}
}

func TestCPULineSortsByCPU(t *testing.T) {
	got := cpuLine(counts{"etcd": 3.9, "kube-apiserver": 18.1, "manager": 6, "idle": 0.01}, 16*time.Second, 2)
	want := "kube-apiserver 18.1s, manager 6.0s, etcd 3.9s; 28.0s in all, of the 32.0s 2 cores had"
	if got != want {
		t.Errorf("cpuLine:\n got %s\nwant %s", got, want)
	}
}
