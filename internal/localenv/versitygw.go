package localenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// VersityGW is a running versitygw S3 gateway over a posix directory, with its admin API on a
// second port and its internal IAM store in the state directory.
type VersityGW struct {
	// Endpoint is the S3 endpoint URL, http://127.0.0.1:PORT.
	Endpoint string
	// AdminEndpoint is the admin API URL (create-user, delete-user, ...).
	AdminEndpoint string
	// Region is the region the gateway signs for.
	Region string
	// RootAccessKey and RootSecretKey are the gateway's root credentials.
	RootAccessKey string
	RootSecretKey string
	// Dir holds the gateway's data, IAM store and log.
	Dir string
	// WebsiteEndpoint is where it serves buckets as static websites, with {bucket} for the
	// bucket's name: http://{bucket}.localhost:PORT. Browsers and curl take any *.localhost
	// for 127.0.0.1; other clients dial 127.0.0.1:PORT with that Host header.
	WebsiteEndpoint string

	proc *Process
}

// VersityGWOptions configures StartVersityGW. Zero values pick free ports and a temporary
// directory.
type VersityGWOptions struct {
	// Dir keeps data, IAM and log; reusing it keeps buckets and accounts across restarts.
	Dir string
	// Port, AdminPort and WebsitePort are the S3, admin and static website ports on 127.0.0.1.
	Port, AdminPort, WebsitePort int
	// RootAccessKey and RootSecretKey; random when empty.
	RootAccessKey, RootSecretKey string
	// Region defaults to us-east-1.
	Region string
	// AccessLog, when set, is a file the gateway writes a line to for every S3 request, with
	// the operation it served (its --access-log).
	AccessLog string
	// Versioning gives the gateway a versioning directory, so buckets can be versioned; without
	// it versitygw answers PutBucketVersioning with VersioningNotConfigured.
	Versioning bool
}

// StartVersityGW starts bin/versitygw and waits until its S3 and admin endpoints answer.
func StartVersityGW(ctx context.Context, opts VersityGWOptions) (*VersityGW, error) {
	bin, err := Binary("versitygw")
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "osm-versitygw-"); err != nil {
			return nil, err
		}
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.RootAccessKey == "" {
		opts.RootAccessKey = "root" + RandomHex(8)
	}
	if opts.RootSecretKey == "" {
		opts.RootSecretKey = RandomHex(20)
	}
	for _, port := range []*int{&opts.Port, &opts.AdminPort, &opts.WebsitePort} {
		if *port == 0 {
			if *port, err = FreePort(); err != nil {
				return nil, err
			}
		}
	}
	data, iam := filepath.Join(opts.Dir, "data"), filepath.Join(opts.Dir, "iam")
	for _, d := range []string{data, iam} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	args := []string{
		"--port", hostPort(opts.Port),
		"--admin-port", hostPort(opts.AdminPort),
		"--region", opts.Region,
		"--iam-dir", iam,
		// Keep connections open between requests, as AWS and RGW do: by default the gateway
		// answers every request with "Connection: close", so every S3 call of a client, a
		// proxy or a benchmark would pay for a new TCP connection.
		"--keep-alive",
		// Static websites, over plain HTTP: the host <bucket>.localhost serves the bucket.
		"--website", hostPort(opts.WebsitePort), "--website-no-tls", "--website-domain", "localhost",
	}
	if opts.AccessLog != "" {
		args = append(args, "--access-log", opts.AccessLog)
	}
	args = append(args, "posix")
	if opts.Versioning {
		versions := filepath.Join(opts.Dir, "versions")
		if err := os.MkdirAll(versions, 0o700); err != nil {
			return nil, err
		}
		args = append(args, "--versioning-dir", versions)
	}
	args = append(args, data)
	// Root credentials go through the environment so they never show in a process listing.
	env := []string{"ROOT_ACCESS_KEY=" + opts.RootAccessKey, "ROOT_SECRET_KEY=" + opts.RootSecretKey}
	proc, err := StartProcess("versitygw", filepath.Join(opts.Dir, "versitygw.log"), bin, args, env)
	if err != nil {
		return nil, err
	}
	gw := &VersityGW{
		Endpoint:        "http://" + hostPort(opts.Port),
		AdminEndpoint:   "http://" + hostPort(opts.AdminPort),
		Region:          opts.Region,
		RootAccessKey:   opts.RootAccessKey,
		RootSecretKey:   opts.RootSecretKey,
		Dir:             opts.Dir,
		WebsiteEndpoint: fmt.Sprintf("http://{bucket}.localhost:%d", opts.WebsitePort),
		proc:            proc,
	}
	for _, url := range []string{gw.Endpoint, gw.AdminEndpoint} {
		if err := WaitHTTP(ctx, proc, url, 30*time.Second); err != nil {
			_ = proc.Stop()
			return nil, err
		}
	}
	return gw, nil
}

// Stop ends the gateway. The directory stays; callers that made a temporary one remove it.
func (g *VersityGW) Stop() error { return g.proc.Stop() }

// PID is the gateway's process id.
func (g *VersityGW) PID() int { return g.proc.PID() }

// RandomHex returns n random bytes from crypto/rand, hex-encoded: for generated keys and tokens.
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b)
}
