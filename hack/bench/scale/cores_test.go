package main

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

func cpus(ids ...int) unix.CPUSet {
	var set unix.CPUSet
	for _, id := range ids {
		set.Set(id)
	}
	return set
}

// The API server and etcd get the first half of the CPUs the benchmark may use, the rest the
// other half, whatever the numbers of those CPUs.
func TestCoresSplitInHalves(t *testing.T) {
	for _, tc := range []struct {
		all       unix.CPUSet
		api, rest string
	}{
		{cpus(0, 1), "CPU 0", "CPU 1"},
		{cpus(2, 5, 6), "CPU 2", "CPUs 5, 6"},
		{cpus(0, 1, 2, 3), "CPUs 0, 1", "CPUs 2, 3"},
	} {
		s, err := splitCPUs(tc.all)
		if err != nil {
			t.Fatal(err)
		}
		if api, rest := cpuNames(s.api), cpuNames(s.rest); api != tc.api || rest != tc.rest {
			t.Errorf("split of %d CPUs: API server %s, the rest %s; want %s and %s", tc.all.Count(), api, rest, tc.api, tc.rest)
		}
	}
	if _, err := splitCPUs(cpus(3)); err == nil {
		t.Error("one CPU was split")
	}
}

func TestSplitRunsHaveTheirOwnSection(t *testing.T) {
	for _, tc := range []struct {
		o    options
		want string
	}{
		{options{n: 1000, s3: "versitygw", cores: "shared"}, "N=1000"},
		{options{n: 1000, s3: "versitygw", cores: "split"}, "N=1000 cores=split"},
		{options{n: 100, s3: "rgw", cores: "split"}, "N=100 cores=split s3=rgw"},
	} {
		if got := tc.o.key(); got != tc.want {
			t.Errorf("key %q, want %q", got, tc.want)
		}
	}
}

func TestPinMovesAProcessToItsCPUs(t *testing.T) {
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	first := -1
	for cpu := 0; first < 0; cpu++ {
		if own.IsSet(cpu) {
			first = cpu
		}
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	want := cpus(first)
	if err := pin(cmd.Process.Pid, &want); err != nil {
		t.Fatal(err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(cmd.Process.Pid, &got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("the process may run on %s, want %s", cpuNames(got), cpuNames(want))
	}
}
