package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// coreSplit gives the API server and etcd cores of their own (-cores=split), as a cluster does,
// where the control plane does not run the operator; everything else (the manager or ACK, the
// S3 server, the contract server and the benchmark) runs on the other cores. On shared cores,
// the operator and the S3 server take CPU the API server would have had, and the bound, whose
// API half is measured without them, does not count that. Split, both halves of the bound are
// measured on the cores their servers have in a burst.
type coreSplit struct {
	api, rest unix.CPUSet
}

// newCoreSplit splits the CPUs this process may run on (splitCPUs).
func newCoreSplit() (*coreSplit, error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return nil, fmt.Errorf("reading this process's CPUs: %w", err)
	}
	return splitCPUs(all)
}

// splitCPUs gives the first half of all to the API server and etcd, the rest to everything else.
func splitCPUs(all unix.CPUSet) (*coreSplit, error) {
	n := all.Count()
	if n < 2 {
		return nil, fmt.Errorf("-cores=split needs at least 2 CPUs; this process may use %d", n)
	}
	s := &coreSplit{}
	for cpu, seen := 0, 0; seen < n; cpu++ {
		if !all.IsSet(cpu) {
			continue
		}
		if seen < n/2 {
			s.api.Set(cpu)
		} else {
			s.rest.Set(cpu)
		}
		seen++
	}
	return s, nil
}

// String says which CPUs each side has: "kube-apiserver and etcd on CPU 0; ... on CPU 1".
func (s *coreSplit) String() string {
	return fmt.Sprintf("kube-apiserver and etcd on %s; the manager or ACK, the S3 server, the contract server and this benchmark on %s",
		cpuNames(s.api), cpuNames(s.rest))
}

// ownCores names what the API server and etcd have: "a core of its own", "2 cores of its own".
func (s *coreSplit) ownCores() string {
	if n := s.api.Count(); n > 1 {
		return fmt.Sprintf("%d cores of its own", n)
	}
	return "a core of its own"
}

// pinSelf moves this process to the rest's CPUs before it starts any server: every process it
// starts then inherits them.
func (s *coreSplit) pinSelf() error { return pin(os.Getpid(), &s.rest) }

// pinAPIServer moves this process's kube-apiserver and etcd to their own CPUs.
func (s *coreSplit) pinAPIServer() error {
	pids := childrenNamed("kube-apiserver", "etcd")
	if len(pids) != 2 {
		return fmt.Errorf("found %d processes named kube-apiserver or etcd among this benchmark's children, want 2", len(pids))
	}
	for _, pid := range pids {
		if err := pin(pid, &s.api); err != nil {
			return err
		}
	}
	return nil
}

// pin sets the CPUs of every thread of process pid. A thread starts with its creator's CPUs,
// so passes repeat until one finds no thread it has not set.
func pin(pid int, set *unix.CPUSet) error {
	done := map[int]bool{}
	for range 10 {
		tids, err := threads(pid)
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			// A thread that ended meanwhile is no longer there to run anywhere.
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("setting the CPUs of thread %d of process %d: %w", tid, pid, err)
			}
			done[tid] = true
			fresh++
		}
		if fresh == 0 {
			return nil
		}
	}
	return fmt.Errorf("process %d kept starting threads while its CPUs were set", pid)
}

func threads(pid int) ([]int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(entries))
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// childrenNamed lists this process's children whose command is one of names.
func childrenNamed(names ...string) []int {
	var pids []int
	for _, c := range children() {
		if slices.Contains(names, c.comm) {
			pids = append(pids, c.pid)
		}
	}
	return pids
}

// cpuNames lists a set's CPUs: "CPU 0", "CPUs 0, 1".
func cpuNames(set unix.CPUSet) string {
	var ids []string
	for cpu := 0; len(ids) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			ids = append(ids, strconv.Itoa(cpu))
		}
	}
	if len(ids) == 1 {
		return "CPU " + ids[0]
	}
	return "CPUs " + strings.Join(ids, ", ")
}
