package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// machineCPU is the CPU time, by command name, of this benchmark ("bench": its clients, the S3
// counting proxy, the watches) and of every process it started (kube-apiserver, etcd,
// versitygw, the manager or ACK). On one machine they share the cores, so where a burst's
// CPU went says what the bound, measured with each server alone, cannot see.
func machineCPU() counts {
	out := counts{}
	if _, _, cpu, ok := readStat(fmt.Sprintf("/proc/%d/stat", os.Getpid())); ok {
		out["bench"] += cpu.Seconds()
	}
	for _, c := range children() {
		out[c.comm] += c.cpu.Seconds()
	}
	return out
}

// child is a process this benchmark started, as /proc shows it.
type child struct {
	pid  int
	comm string
	cpu  time.Duration
}

// children lists the processes whose parent is this benchmark.
func children() []child {
	self := os.Getpid()
	var out []child
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		comm, ppid, cpu, ok := readStat(path)
		if !ok || ppid != self {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			out = append(out, child{pid: pid, comm: comm, cpu: cpu})
		}
	}
	return out
}

// readStat reads a process's command name, parent and CPU time from /proc/<pid>/stat; not ok
// when the process is gone meanwhile.
func readStat(path string) (comm string, ppid int, cpu time.Duration, ok bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, false
	}
	comm, fields, ok := splitStat(raw)
	if !ok || len(fields) < 13 {
		return "", 0, 0, false
	}
	if ppid, err = strconv.Atoi(fields[1]); err != nil {
		return "", 0, 0, false
	}
	return comm, ppid, ticks(fields[11], fields[12]), true
}

// splitStat splits /proc/<pid>/stat into the command name and the fields after it (state,
// ppid, ...); the name is in parentheses and may hold spaces.
func splitStat(raw []byte) (comm string, fields []string, ok bool) {
	open, closing := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || closing < open {
		return "", nil, false
	}
	return string(raw[open+1 : closing]), strings.Fields(string(raw[closing+1:])), true
}

func ticks(utime, stime string) time.Duration {
	u, _ := strconv.ParseInt(utime, 10, 64)
	s, _ := strconv.ParseInt(stime, 10, 64)
	return time.Duration(u+s) * clockTick
}

// cpuLine is cpuLine on this machine's cores; when the API server and etcd had cores of their
// own, it adds how much of those they used.
func (r *report) cpuLine(c counts, wall time.Duration) string {
	line := cpuLine(c, wall, runtime.NumCPU())
	if r.split != nil {
		line += fmt.Sprintf("; kube-apiserver and etcd %.1fs of the %.1fs their %s had",
			c["kube-apiserver"]+c["etcd"], wall.Seconds()*float64(r.split.api.Count()), cpuNames(r.split.api))
	}
	return line
}

// cpuLine says where the CPU went during a phase of length wall on cores cores:
// "kube-apiserver 18.2s, manager 6.0s, ...; 36.1s of the 32.2s the 2 cores had".
func cpuLine(c counts, wall time.Duration, cores int) string {
	names := c.names()
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case c[a] > c[b]:
			return -1
		case c[a] < c[b]:
			return 1
		}
		return 0
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if c[n] >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1fs", n, c[n]))
		}
	}
	return fmt.Sprintf("%s; %.1fs in all, of the %.1fs %d cores had", strings.Join(parts, ", "), c.total(), wall.Seconds()*float64(cores), cores)
}
