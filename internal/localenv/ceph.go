package localenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// cephInstall is the one command that provides every binary StartCeph runs.
const cephInstall = "apt-get install -y ceph-mon ceph-osd radosgw ceph-common"

// cephBinaries are looked up on PATH; Debian's packages put them in /usr/bin.
var cephBinaries = []string{"monmaptool", "ceph-mon", "ceph", "ceph-osd", "radosgw", "radosgw-admin"}

// CephAdminUID is the RGW user StartCeph creates: a system user with full admin-ops caps.
const CephAdminUID = "osm-admin"

// Ceph is a running single-node Ceph cluster: one monitor, one memstore OSD and radosgw, all on
// 127.0.0.1, with cephx off. It is the AWS-faithful S3 backend of the test suites.
type Ceph struct {
	// Endpoint is the radosgw S3 (and admin ops) endpoint, http://127.0.0.1:PORT, path-style.
	Endpoint string
	// Region is the region clients sign for: the zonegroup's api_name.
	Region string
	// AdminAccessKey and AdminSecretKey belong to CephAdminUID, which may use the admin ops API
	// and act as any user.
	AdminAccessKey string
	AdminSecretKey string
	// Dir holds ceph.conf, the monitor and OSD state and every log.
	Dir string
	// WebsiteEndpoint is where radosgw serves buckets as static websites, with {bucket} for the
	// bucket's name: http://{bucket}.s3-website.localhost:PORT, the S3 port. Browsers and curl
	// take any *.localhost for 127.0.0.1; other clients dial the port with that Host header.
	WebsiteEndpoint string
	// StartDuration is how long StartCeph took, for tests that keep an eye on it.
	StartDuration time.Duration

	// procs are the daemons in start order; Stop ends them in reverse.
	procs []*Process
}

// CephOptions configures StartCeph. Zero values pick free ports and a temporary directory.
type CephOptions struct {
	// Dir is where the cluster keeps its state and logs. It must be empty or absent: every start
	// makes a new cluster, since a memstore OSD keeps its objects only in memory.
	Dir string
	// Timeout bounds the whole start; 2 minutes when zero.
	Timeout time.Duration
	// STS turns on radosgw's STS (rgw_s3_auth_use_sts, with an rgw_sts_key of the cluster's
	// own): AssumeRoleWithWebIdentity, roles and OpenID Connect providers. Off by default,
	// because with it RGW answers a request signed with an unknown key 403 AccessDenied where it
	// answered InvalidAccessKeyId, which the suites that check revoked keys tell apart.
	STS bool
}

// cephRegion is the default zonegroup's api_name. RGW checks a CreateBucket LocationConstraint
// against it; SigV4 signatures are accepted for any region name.
const cephRegion = "default"

// cephConf is the cluster's whole configuration. Every path points into the state directory so
// nothing touches /etc/ceph, /var/lib/ceph or /var/run/ceph, and two clusters can run side by
// side.
var cephConf = template.Must(template.New("ceph.conf").Parse(`[global]
fsid = {{.FSID}}
mon host = v2:127.0.0.1:{{.MonPort}}
mon initial members = a
public addr = 127.0.0.1
ms bind msgr1 = false

# cephx off. radosgw's built-in defaults ask for cephx and a "secure" monitor connection, which
# auth "none" cannot provide, so its monitor session would fail with EACCES (-13) forever.
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
keyring = /dev/null

# One OSD: pools of size one, few placement groups, no manager needed for the autoscaler.
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false

# Every pool radosgw creates is a monitor map change, which the monitor batches for a second by
# default; on a one-monitor cluster nothing gains from waiting.
paxos propose interval = 0.05
paxos min wait = 0.01

# The monitor stops itself when its disk is under 5% free; a test machine's disk is not ours
# to judge.
mon data avail warn = 1
mon data avail crit = 0

osd objectstore = memstore
memstore device bytes = 1073741824
osd max object name len = 256
osd max object namespace len = 64

run dir = {{.Dir}}/run
crash dir = {{.Dir}}/crash
log file = {{.Dir}}/log/$cluster-$name.log
pid file = {{.Dir}}/run/$cluster-$name.pid
mon data = {{.Dir}}/mon/$id
osd data = {{.Dir}}/osd/$id

[client.rgw]
rgw data = {{.Dir}}/rgw
rgw frontends = beast endpoint=127.0.0.1:{{.RGWPort}}
# Static websites: a request whose Host is <bucket>.s3-website.localhost is served as the
# bucket's website (without these RGW answers the website API 405). rgw dns name is needed for
# RGW to parse a virtual host at all; path-style requests to 127.0.0.1 are unchanged.
rgw enable static website = true
rgw dns name = s3.localhost
rgw dns s3website name = s3-website.localhost
{{- if .STSKey}}
# STS (AssumeRoleWithWebIdentity) and the IAM role and OpenID Connect provider APIs. The STS key
# encrypts the session tokens RGW hands out: 16 characters, AES-128.
rgw s3 auth use sts = true
rgw sts key = {{.STSKey}}
{{- end}}
# At level 1 radosgw logs every request line, and admin ops carry secret keys in the query
# string. Errors are logged at level 0 and stay visible.
debug rgw = 0/5
`))

// StartCeph creates and starts a single-node Ceph cluster with radosgw, then creates the admin
// user. It fails, naming the apt-get command, when the Ceph binaries are missing.
func StartCeph(ctx context.Context, opts CephOptions) (_ *Ceph, err error) {
	started := time.Now()
	bins := map[string]string{}
	for _, name := range cephBinaries {
		path, err := exec.LookPath(name)
		if err != nil {
			return nil, fmt.Errorf("%s not found on PATH: install Ceph with `%s`", name, cephInstall)
		}
		bins[name] = path
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "osm-ceph-"); err != nil {
			return nil, err
		}
	} else if entries, _ := os.ReadDir(opts.Dir); len(entries) > 0 {
		return nil, fmt.Errorf("ceph state directory %s is not empty", opts.Dir)
	}
	for _, sub := range []string{"run", "crash", "log", "mon/a", "osd/0", "rgw"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	monPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	rgwPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	fsid := newUUID()
	data := cephConfData{FSID: fsid, Dir: opts.Dir, MonPort: monPort, RGWPort: rgwPort}
	if opts.STS {
		data.STSKey = RandomHex(8)
	}
	conf := filepath.Join(opts.Dir, "ceph.conf")
	if err := writeCephConf(conf, data); err != nil {
		return nil, err
	}

	c := &Ceph{
		Endpoint:        "http://" + hostPort(rgwPort),
		WebsiteEndpoint: fmt.Sprintf("http://{bucket}.s3-website.localhost:%d", rgwPort),
		Region:          cephRegion,
		AdminAccessKey:  "OSMADMIN" + strings.ToUpper(RandomHex(6)),
		AdminSecretKey:  RandomHex(20),
		Dir:             opts.Dir,
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
			err = fmt.Errorf("starting Ceph: %w (state and logs in %s)", err, c.Dir)
		}
	}()
	logPath := func(name string) string { return filepath.Join(opts.Dir, "log", name+".out") }
	run := func(what, bin string, args ...string) error {
		return runCeph(ctx, what, bins[bin], append([]string{"-c", conf}, args...)...)
	}

	// The monitor: a monmap naming only itself, a fresh store, then the daemon in the foreground
	// so the PID we hold is the monitor's.
	monmap := filepath.Join(opts.Dir, "monmap")
	if err := runCeph(ctx, "creating the monitor map", bins["monmaptool"], "--create", "--fsid", fsid,
		"--addv", "a", fmt.Sprintf("[v2:%s]", hostPort(monPort)), monmap); err != nil {
		return nil, err
	}
	if err := run("creating the monitor store", "ceph-mon", "--mkfs", "-i", "a", "--monmap", monmap); err != nil {
		return nil, err
	}
	if err := c.start("ceph-mon", logPath("mon.a"), bins["ceph-mon"], "-c", conf, "-i", "a", "-f"); err != nil {
		return nil, err
	}

	// The OSD must exist in the OSD map before it boots. `ceph` also waits for the monitor.
	osdUUID := newUUID()
	if err := run("adding the OSD to the OSD map", "ceph", "--connect-timeout", "30", "osd", "new", osdUUID, "0"); err != nil {
		return nil, err
	}
	if err := run("creating the OSD store", "ceph-osd", "-i", "0", "--mkfs", "--osd-uuid", osdUUID); err != nil {
		return nil, err
	}
	if err := c.start("ceph-osd", logPath("osd.0"), bins["ceph-osd"], "-c", conf, "-i", "0", "-f"); err != nil {
		return nil, err
	}

	// radosgw creates its pools on start and only listens once they are usable, so its HTTP
	// port answering means the whole cluster works.
	if err := c.start("radosgw", logPath("rgw"), bins["radosgw"], "-c", conf, "-n", "client.rgw", "-f"); err != nil {
		return nil, err
	}
	if err := c.waitHTTP(ctx, c.Endpoint); err != nil {
		return nil, err
	}

	// A system user, so the contract server may act as a contract's user (rgwx-uid) to make
	// topics in the contract's tenant.
	if err := run("creating the admin user", "radosgw-admin", "user", "create", "--uid", CephAdminUID, "--display-name", "OSM admin",
		"--access-key", c.AdminAccessKey, "--secret-key", c.AdminSecretKey, "--system",
		"--caps", "users=*;buckets=*;metadata=*;usage=*;zone=*"); err != nil {
		return nil, err
	}
	c.StartDuration = time.Since(started)
	return c, nil
}

type cephConfData struct {
	FSID string
	Dir  string
	// STSKey is radosgw's rgw_sts_key; "" leaves STS off.
	STSKey           string
	MonPort, RGWPort int
}

func writeCephConf(path string, data cephConfData) error {
	var buf bytes.Buffer
	if err := cephConf.Execute(&buf, data); err != nil {
		return fmt.Errorf("rendering ceph.conf: %w", err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// start runs a daemon under the harness and remembers it for Stop.
func (c *Ceph) start(name, logPath, bin string, args ...string) error {
	p, err := StartProcess(name, logPath, bin, args, nil)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// waitHTTP waits for url to answer, failing early when any daemon has died, since radosgw
// would otherwise wait for a dead monitor or OSD until the timeout.
func (c *Ceph) waitHTTP(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			return nil
		}
		for _, p := range c.procs {
			if p.Exited() {
				return fmt.Errorf("%s exited before radosgw served %s", p.Name, url)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("radosgw did not serve %s in time: %w", url, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runCeph runs a short-lived Ceph tool for what it is doing. Neither its arguments nor its
// stdout go into the error: radosgw-admin gets and prints secret keys.
func runCeph(ctx context.Context, what, bin string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s with %s: %w", what, filepath.Base(bin), ctx.Err())
		}
		return fmt.Errorf("%s with %s: %w: %s", what, filepath.Base(bin), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Stop ends radosgw, the OSD and the monitor, in that order so none waits on one already gone.
// The directory stays; callers that made a temporary one remove it.
func (c *Ceph) Stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		if p.Name == "radosgw" && !p.Exited() {
			// radosgw spends about five seconds joining background workers after SIGTERM. The
			// cluster is thrown away, so there is nothing for a clean exit to save.
			_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
		}
		errs = append(errs, p.Stop())
	}
	return errors.Join(errs...)
}

// PIDs are the process ids of the cluster's daemons, in start order.
func (c *Ceph) PIDs() []int {
	pids := make([]int, 0, len(c.procs))
	for _, p := range c.procs {
		pids = append(pids, p.PID())
	}
	return pids
}

// newUUID is a random (version 4) UUID, the form Ceph wants for fsids and OSD ids.
func newUUID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
