package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

type report struct {
	opts    options
	machine string
	started time.Time
	rounds  []round
	// ours and bound are the median round's: the one whose ratio is the median.
	ours  *result
	bound *bound
	ack   []*result
	// split is where the processes ran with -cores=split; nil when they shared the cores.
	split *coreSplit
}

// round is one burst of ours and the bound measured after it.
type round struct {
	ours  *result
	bound *bound
}

func (r round) ratio() float64 { return r.ours.burst.Seconds() / r.bound.time.Seconds() }

// pickMedian makes the round with the median ratio the one reported. The peak RSS reported is
// the highest of any round's manager, and the steady state and the single Bucket's bound are
// those of the round that measured them.
func (r *report) pickMedian() {
	byRatio := slices.Clone(r.rounds)
	slices.SortStableFunc(byRatio, func(a, b round) int { return cmp.Compare(a.ratio(), b.ratio()) })
	median := byRatio[(len(byRatio)-1)/2]
	ours, b := *median.ours, *median.bound
	for _, x := range r.rounds {
		if x.ours.rss > ours.rss {
			ours.rss, ours.anon, ours.file = x.ours.rss, x.ours.anon, x.ours.file
		}
		if x.ours.steady != nil {
			ours.steady, ours.single = x.ours.steady, x.ours.single
		}
		if x.bound.single != 0 {
			b.single = x.bound.single
		}
	}
	r.ours, r.bound = &ours, &b
}

// roundsLine lists every round: "18.5s / 10.6s = 1.75x, ...".
func (r *report) roundsLine() string {
	parts := make([]string, 0, len(r.rounds))
	for _, x := range r.rounds {
		parts = append(parts, fmt.Sprintf("%s / %s = %.2fx", secs(x.ours.burst), secs(x.bound.time), x.ratio()))
	}
	return fmt.Sprintf("rounds (our burst / the bound measured after it): %s; the table shows the median round", strings.Join(parts, ", "))
}

func (r *report) oursConcurrency() int { return max(1, r.ours.workers) }

// ratio is the burst's time over the bound's.
func (r *report) ratio() float64 { return r.ours.burst.Seconds() / r.bound.time.Seconds() }

// ackDefaults is the ACK run at its defaults, if it ran.
func (r *report) ackDefaults() *result {
	for _, a := range r.ack {
		if strings.HasSuffix(a.name, "defaults") {
			return a
		}
	}
	return nil
}

// summary is the one line to compare run to run.
func (r *report) summary() string {
	line := fmt.Sprintf("burst N=%d: %s, %.1fx the minimal bound", r.opts.n, secs(r.ours.burst), r.ratio())
	if r.ours.ready < r.ours.n {
		line = fmt.Sprintf("burst N=%d: only %d Ready after %s", r.opts.n, r.ours.ready, secs(r.ours.burst))
	}
	if a := r.ackDefaults(); a != nil {
		switch {
		case a.burst == 0:
			line += ", ACK (defaults) did not run"
		case a.ready < a.n:
			line += fmt.Sprintf(", >%.1fx faster than ACK (defaults; %d of %d Ready after %s)", a.burst.Seconds()/r.ours.burst.Seconds(), a.ready, a.n, secs(a.burst))
		default:
			line += fmt.Sprintf(", %.1fx faster than ACK (defaults)", a.burst.Seconds()/r.ours.burst.Seconds())
		}
	}
	return line + fmt.Sprintf(", RSS %s", mib(r.ours.rss))
}

func secs(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", (b+1<<19)>>20) }

func perBucket(v float64, n int) string { return strconv.FormatFloat(v/float64(n), 'f', 1, 64) }

// breakdown lists counts per Bucket, largest first: "HeadBucket 1.0, CreateBucket 1.0". Counts
// too rare to show per Bucket follow in all, so no call or write goes unseen:
// "PATCH buckets 1.0; in all PATCH contracts/status 12".
func breakdown(c counts, n int) string {
	var common, rare []string
	for _, k := range byCount(c) {
		if c[k]/float64(n) < 0.05 {
			rare = append(rare, fmt.Sprintf("%s %.0f", k, c[k]))
			continue
		}
		common = append(common, fmt.Sprintf("%s %s", k, perBucket(c[k], n)))
	}
	switch {
	case len(rare) == 0 && len(common) == 0:
		return "none"
	case len(rare) == 0:
		return strings.Join(common, ", ")
	case len(common) == 0:
		return "in all " + strings.Join(rare, ", ")
	}
	return strings.Join(common, ", ") + "; in all " + strings.Join(rare, ", ")
}

// totals lists counts in all, largest first: "PATCH events.events.k8s.io 3".
func totals(c counts) string {
	var parts []string
	for _, k := range byCount(c) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, c[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// byCount names the counts largest first, ties by name.
func byCount(c counts) []string {
	names := c.names()
	sort.SliceStable(names, func(i, j int) bool { return c[names[i]] > c[names[j]] })
	return names
}

// rows are the comparison table: one column per controller, then the bound.
func (r *report) rows() (header []string, rows [][]string) {
	runs := append([]*result{r.ours}, r.ack...)
	header = []string{fmt.Sprintf("N=%d", r.opts.n)}
	for _, x := range runs {
		header = append(header, x.name)
	}
	header = append(header, "bound")
	row := func(name string, f func(*result) string, b string) {
		cells := []string{name}
		for _, x := range runs {
			if x.burst == 0 && x.note != "" {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, f(x))
		}
		rows = append(rows, append(cells, b))
	}
	b := r.bound
	row("burst: all Ready", func(x *result) string {
		if x.ready < x.n {
			return fmt.Sprintf("%d of %d after %s", x.ready, x.n, secs(x.burst))
		}
		return secs(x.burst)
	}, secs(b.time))
	row("burst / bound", func(x *result) string {
		return fmt.Sprintf("%.1fx", x.burst.Seconds()/b.time.Seconds())
	}, "1.0x")
	row("per Bucket p50 / p99", func(x *result) string { return secs(x.p50) + " / " + secs(x.p99) }, "")
	row("S3 calls per Bucket", func(x *result) string { return perBucket(x.s3.total(), x.n) }, strconv.Itoa(len(b.mix)))
	row("API writes per Bucket", func(x *result) string { return perBucket(x.api.total(), x.n) }, strconv.Itoa(b.writes-1))
	row("CPU seconds (burst)", func(x *result) string { return fmt.Sprintf("%.1f", x.cpu.Seconds()) }, "")
	row("peak RSS", func(x *result) string { return mib(x.rss) }, "")
	row("  of which heap / code", func(x *result) string { return mib(x.anon) + " / " + mib(x.file) }, "")
	row("delete: all gone", func(x *result) string {
		if x.gone < x.n {
			return fmt.Sprintf("%d of %d after %s", x.gone, x.n, secs(x.delete))
		}
		return secs(x.delete)
	}, "")
	return header, rows
}

// details are the lines under the table: what the counts are made of.
func (r *report) details() []string {
	o, b := r.ours, r.bound
	var lines []string
	if r.split != nil {
		lines = append(lines, "cores: "+r.split.String())
	}
	lines = append(lines,
		r.roundsLine(),
		fmt.Sprintf("our S3 calls per Bucket: %s", breakdown(o.s3, o.n)),
		fmt.Sprintf("our API writes per Bucket: %s", breakdown(o.api, o.n)),
		fmt.Sprintf("CPU during our burst, by process: %s", r.cpuLine(o.machine, o.burst)),
	)
	if st := o.steady; st != nil {
		lines = append(lines, st.line(r.opts.resync, o.n))
		if st.budget != nil {
			lines = append(lines, st.budget.line(drifted))
		}
		if st.api.total() > 0 {
			lines = append(lines, "steady-state API writes: "+totals(st.api))
		}
	}
	lines = append(lines,
		fmt.Sprintf("minimal bound: both halves at once (S3 at concurrency %d, API at %d), sharing the cores as the servers of a burst do: %s", b.togetherS3Workers, b.apiWorkers, secs(b.time)),
		fmt.Sprintf("each half of the minimal bound alone, with the machine to itself: %s; both at once took %.2fx the larger, and our burst %.1fx it",
			b.describe(), b.time.Seconds()/b.alone.Seconds(), o.burst.Seconds()/b.alone.Seconds()),
		fmt.Sprintf("CPU during the API half of the bound (concurrency %d, %s), by process: %s",
			b.apiWorkers, secs(b.apiTime), r.cpuLine(b.apiCPU, b.apiTime)))
	if o.single != 0 && b.single != 0 {
		lines = append(lines, fmt.Sprintf("single Bucket, one at a time on the idle system: create to Ready %s (median of %d), minimal bound %s (its S3 calls and one status write, one after the other): %.1fx",
			secs(o.single), singleRuns, secs(b.single), o.single.Seconds()/b.single.Seconds()))
	}
	if o := b.replayed; o != nil {
		lines = append(lines, fmt.Sprintf("our own work replayed, each half alone: %s; %.1fx the minimal bound's halves alone, and our burst took %.1fx it",
			o.describe(), o.alone.Seconds()/b.alone.Seconds(), r.ours.burst.Seconds()/o.alone.Seconds()))
	}
	for _, a := range r.ack {
		if a.note != "" {
			lines = append(lines, fmt.Sprintf("%s: %s", a.name, a.note))
		}
		if a.burst == 0 {
			continue
		}
		lines = append(lines,
			fmt.Sprintf("%s S3 calls per Bucket: %s", a.name, breakdown(a.s3, a.n)),
			fmt.Sprintf("%s API writes per Bucket: %s", a.name, breakdown(a.api, a.n)),
			fmt.Sprintf("CPU during the %s burst, by process: %s", a.name, r.cpuLine(a.machine, a.burst)))
		if a.compat.total() > 0 {
			lines = append(lines, fmt.Sprintf("%s: the compatibility proxy answered %.0f of its %.0f S3 calls (%s per Bucket) as AWS answers a bucket that never configured them",
				a.name, a.compat.total(), a.s3.total(), breakdown(a.compat, a.n)))
		}
	}
	if o.note != "" {
		lines = append(lines, "ours: "+o.note)
	}
	return lines
}

func (r *report) print(w io.Writer) {
	header, rows := r.rows()
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range rows {
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	b.WriteString("\n")
	for _, l := range r.details() {
		b.WriteString(l + "\n")
	}
	_, _ = io.WriteString(w, b.String()+"\n")
}

// Sections of docs/performance.md, one per N, between these markers; the rest of the page is
// the benchmark's too.
const (
	sectionBegin = "<!-- bench-scale %s begin -->"
	sectionEnd   = "<!-- bench-scale %s end -->"
)

// writeDoc rewrites this N's section of the page, keeping the others, and its plot.
func (r *report) writeDoc(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	plotName := fmt.Sprintf("performance-burst-%d", r.opts.n)
	if r.opts.split() {
		plotName += "-split"
	}
	if r.opts.rgw() {
		plotName += "-rgw"
	}
	plotName += ".svg"
	if err := r.plot(filepath.Join(filepath.Dir(path), plotName)); err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(path, composeDoc(string(old), r.opts.key(), r.section(plotName)), 0o644)
}

// composeDoc is the page old (empty for a new one) with the section of key set: its prose
// above the sections is people's, kept as it is (docHeader starts a new page), and the other
// runs' sections stay, in order.
func composeDoc(old, key, section string) []byte {
	header, sections := docHeader, readSections(old)
	if prose, _, found := strings.Cut(old, "<!-- bench-scale "); found {
		header = prose
	}
	sections[key] = section
	keys := slices.Collect(maps.Keys(sections))
	slices.SortFunc(keys, compareKeys)
	var buf bytes.Buffer
	buf.WriteString(header)
	for _, k := range keys {
		fmt.Fprintf(&buf, sectionBegin+"\n%s"+sectionEnd+"\n\n", k, sections[k], k)
	}
	return append(bytes.TrimRight(buf.Bytes(), "\n"), '\n')
}

// sectionRE finds the sections of earlier runs in the page.
var sectionRE = regexp.MustCompile(`(?s)<!-- bench-scale (N=\d+(?: \w+=\w+)*) begin -->\n(.*?)<!-- bench-scale [^>]* end -->`)

func readSections(doc string) map[string]string {
	out := map[string]string{}
	for _, m := range sectionRE.FindAllStringSubmatch(doc, -1) {
		out[m[1]] = m[2]
	}
	return out
}

const docHeader = `# Performance at scale

Written by ` + "`make bench-scale N=...`" + ` (hack/bench/scale); each N, on each S3 server, has its own
section, rewritten by the run of that size. Everything runs on one machine, on the real servers of the test harness:
kube-apiserver and etcd, versitygw, the reference contract server. The manager is its own
process, built as shipped (` + "`go build ./cmd/manager`" + `) and run with the environment its Deployment
gives it (config/manager/manager.yaml), under the ServiceAccount and RBAC it ships
(with a token of that ServiceAccount, as in a cluster), with its webhooks installed and served
as in a cluster (they put the finalizer on at creation, and the burst's creates pay for their
calls); its CPU and peak RSS are read from /proc, and the RSS is
split into heap (anonymous memory, which grows with N) and code (the binary's own pages, about
33 MiB for the manager, which links client-go and aws-sdk-go-v2; the same at any N).

What the benchmark itself does is kept off the cores the burst needs where it can be:
- S3 calls are counted by the S3 server: versitygw's access log (on Ceph RGW, a proxy in front
  of it counts them);
- API writes are counted by the API server itself (` + "`apiserver_request_total`" + `, the benchmark's own
  creates left out);
- Buckets are followed in etcd, under the API server, not through a watch of the API server,
  which would cost it about as much as a second controller does.

- **burst**: N Buckets over 10 Contracts that are already Ready, created by 16 parallel clients;
  the time from the first create until every Bucket is Ready (its Ready condition stored), and
  per Bucket from its create.
- **steady state**: every Bucket through two resyncs (` + "`--resync-period`" + ` shortened for the run).
- **delete**: all N deleted at once (bucketReclaimPolicy Delete); time until all are gone.
- **S3 server**: versitygw; with ` + "`-s3=rgw`" + ` a single-node Ceph RGW (its section's title says so).
- **cores**: every process may run on every core, unless ` + "`-cores=split`" + ` gives kube-apiserver and
  etcd half of the cores and everything else (the manager or ACK, the S3 server, the contract
  server, the benchmark) the other half, as in a cluster, where the control plane does not run
  the operator (its section's title says so). Both halves of the bound are then measured on the
  cores their servers have in a burst, so the ratio says what the operator adds to the API
  server's own work, not what sharing the cores costs. A burst is then the API server's work
  alone, and may come out a little under the bound: the replay's writes cost the API server
  slightly more CPU than the operator's (about 8 % at N=10000), so the bound is good to about
  10 %.
- **bound**: the minimal bound of a burst on these servers, measured in the same run: the work
  the mission strictly needs per Bucket, the user's create and one status write (a Ready
  Bucket's status: the same body, under the same field manager, answered with metadata only as
  the operator asks) from a plain client, and the S3 calls that create the bucket and read back
  what status shows (CreateBucket, GetBucketAcl, GetBucketPolicy) from a plain aws-sdk-go-v2
  client straight at the S3 server, each at the best of a few concurrencies. The two halves run
  at once, as a burst runs them: the same cores serve both servers, etcd and the clients, and a
  burst cannot have one half's machine to itself. Each half is also measured alone, with the
  machine to itself, and the larger of the two is shown too (it was the bound until 2026-11-27);
  with no controller at all, both at once took up to twice that, so it is a bound the minimal
  work itself does not meet. The operator's own work (its S3 calls and API writes, replayed as
  it sent them) is measured alone the same way and shown beside it, so a section says both what
  the operator adds and what it costs. No webhook admits the bound's writes. The benchmark's
  clients authenticate as the manager does, with a ServiceAccount token (an administrator's); a
  client certificate would cost the API server a verification on every request. Each section
  says where the CPU of a burst went, by process.
- **rounds**: this machine's speed drifts by 10 to 30 % from one minute to the next, the
  bound's included, so the burst and the bound after it are measured several times (three by
  default, ` + "`-rounds`" + `); each section lists every round, and its table shows the round with the
  median ratio of burst to bound (peak RSS: the highest of any round).
- **ACK**: ACK's s3-controller v1.1.1, built from the module proxy (hack/tools/ack-s3), on the
  same API server and S3 server, at its defaults (one worker) and at our concurrency, all
  Buckets in one account (ACK has no Contracts). It reads about twenty bucket sub-resources on
  every pass, several of which versitygw does not implement (501), so no Bucket would ever sync;
  a compatibility proxy in front of S3, for ACK only, answers those as AWS answers a bucket that
  never configured them (and a missing encryption configuration with AWS's default SSE-S3), and
  forwards the rest. Its calls are counted there, and those it answered itself are listed. ACK
  runs as the administrator and caches every Bucket of its kind; it runs once per setting,
  after our rounds.

The figures are from a 2-core machine; each section gives its load average at the start.

## The manager's memory

What the cache keeps matters more than N for a cluster with many unrelated objects. Measured
on ` + "`make dev`" + ` with 1,000 unrelated 100 KiB Secrets labelled ` + "`storage.osm.dev/contract`" + `: the
manager's resident memory 15 s after start was 162 MiB when it cached them whole, and is 62 to
71 MiB now that it keeps the data only of Secrets a Contract or a BucketAccess controls (37 and
52 MiB with no such Secrets; the difference between those two is the ` + "`k8s.io/apiserver`" + ` code
the authenticated metrics filter brings). What the cache keeps, and why:
[install.md](install.md#what-a-tenant-can-and-cannot-make-the-operator-do).

`

// compareKeys orders sections by N, and of the same N the default run's first, then the others
// by what they changed (cores, S3 server).
func compareKeys(a, b string) int {
	na, sa, _ := strings.Cut(a, " ")
	nb, sb, _ := strings.Cut(b, " ")
	ia, _ := strconv.Atoi(strings.TrimPrefix(na, "N="))
	ib, _ := strconv.Atoi(strings.TrimPrefix(nb, "N="))
	if c := cmp.Compare(ia, ib); c != 0 {
		return c
	}
	return cmp.Compare(sa, sb)
}

// section is this run's part of the page.
func (r *report) section(plotName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## N = %d", r.opts.n)
	if r.opts.rgw() {
		b.WriteString(", on Ceph RGW")
	}
	if r.split != nil {
		b.WriteString(", the API server on " + r.split.ownCores())
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "`%s`\n\n", r.summary())
	fmt.Fprintf(&b, "Run %s on %s.\n\n", r.started.UTC().Format("2006-01-02 15:04 UTC"), r.machine)
	header, rows := r.rows()
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	b.WriteString("\n")
	for _, l := range r.details() {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	fmt.Fprintf(&b, "\n![Buckets Ready over time, N=%d](%s)\n\n", r.opts.n, plotName)
	return b.String()
}

// plot draws Buckets Ready against time since the first create, one line per controller.
func (r *report) plot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Burst of %d Buckets: Ready over time", r.opts.n)
	p.X.Label.Text = "seconds since the first create"
	p.Y.Label.Text = "Buckets Ready"
	p.Legend.Top, p.Legend.Left = true, false
	var lines []any
	for _, x := range append([]*result{r.ours}, r.ack...) {
		if len(x.curve) == 0 {
			continue
		}
		pts := make(plotter.XYs, 0, len(x.curve)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for i, d := range x.curve {
			pts = append(pts, plotter.XY{X: d.Seconds(), Y: float64(i + 1)})
		}
		lines = append(lines, x.name, pts)
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}

// describeMachine names the CPU, cores, memory, load and Go version.
func describeMachine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				mem = fmt.Sprintf(", %.1f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			load = ", load average " + f[0] + " at the start"
		}
	}
	return fmt.Sprintf("%s, %d cores%s%s, %s/%s, %s", model, runtime.NumCPU(), mem, load, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// steadyCallLimit is what a resync may cost a Bucket, S3 and provider calls together: reading
// back what status shows (ACL and policy) and the usage, never a write.
const steadyCallLimit = 3

// line says what one resync costs each Bucket: S3 reads and writes, the provider's usage reads
// (one per Contract answers for all its Buckets) and other contract API calls, and both against
// the limit.
func (st *steady) line(resync time.Duration, n int) string {
	per := func(v float64) float64 { return v / float64(n) / max(st.passes, 1e-9) }
	reads := per(st.s3.sum(func(k string) bool { return !isS3Write(k) }))
	writes := per(st.s3.sum(isS3Write))
	usage := per(st.provider.sum(isUsageRead))
	other := per(st.provider.sum(func(k string) bool { return !isUsageRead(k) }))
	all := reads + writes + usage + other
	verdict := fmt.Sprintf("within the limit of %d", steadyCallLimit)
	if all > steadyCallLimit {
		verdict = fmt.Sprintf("OVER the limit of %d", steadyCallLimit)
	}
	return fmt.Sprintf("steady state (resync period %s, %.1f passes per Bucket): S3 reads %s and writes %s, usage reads %s and other provider calls %s per Bucket per resync (%s S3-or-provider calls, %s), API writes %.0f, CPU %.1fs per resync, at most %.0f S3 calls in one second",
		resync, st.passes, oneDecimal(reads), oneDecimal(writes), twoDecimals(usage), twoDecimals(other), oneDecimal(all), verdict,
		st.api.total(), st.cpu.Seconds()/max(st.passes, 1e-9), st.peak)
}

// isUsageRead is a contract API operation that reads a contract's bucket usage.
func isUsageRead(op string) bool {
	return strings.HasPrefix(op, "GET ") && strings.HasSuffix(op, "/usage")
}

func oneDecimal(v float64) string  { return strconv.FormatFloat(v, 'f', 1, 64) }
func twoDecimals(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// describe says what a bound is made of and what each half took.
func (b *bound) describe() string {
	return fmt.Sprintf("S3 mix per Bucket %s at %.0f calls/s (concurrency %s) = %s; API %d writes per Bucket (%s) at %.0f writes/s (concurrency %s) = %s",
		strings.Join(b.mix, ", "), b.s3Rate, rates(b.s3Tried), secs(b.s3Time), b.writes, b.replay.describe(), b.apiRate, rates(b.apiTried), secs(b.apiTime))
}
