package main

import (
	"context"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// startS3 starts versitygw over the state directory (its accounts and buckets survive a
// restart), or a single-node Ceph RGW.
func (e *environment) startS3(ctx context.Context) error {
	if e.opts.s3 == "rgw" {
		ceph, err := localenv.StartCeph(ctx, localenv.CephOptions{Dir: e.path("ceph")})
		if err != nil {
			return err
		}
		e.stops = append(e.stops, namedStop{"s3", ceph.Stop})
		e.s3Endpoint, e.s3Region = ceph.Endpoint, ceph.Region
		e.backendArgs = []string{"--backend=rgw", "--s3-endpoint=" + ceph.Endpoint, "--s3-region=" + ceph.Region,
			"--website-endpoint=" + ceph.WebsiteEndpoint}
		e.backendEnv = []string{"CONTRACT_SERVER_ADMIN_ACCESS_KEY=" + ceph.AdminAccessKey, "CONTRACT_SERVER_ADMIN_SECRET_KEY=" + ceph.AdminSecretKey}
		status("s3", "Ceph RGW ready on %s (pids %v)", ceph.Endpoint, ceph.PIDs())
		return nil
	}
	access, err := readOrCreate(e.path("versitygw", "root-access-key"), func() string { return "root" + localenv.RandomHex(8) })
	if err != nil {
		return err
	}
	secret, err := readOrCreate(e.path("versitygw", "root-secret-key"), func() string { return localenv.RandomHex(20) })
	if err != nil {
		return err
	}
	gw, err := localenv.StartVersityGW(ctx, localenv.VersityGWOptions{
		Dir: e.path("versitygw"), Port: e.opts.s3Port, AdminPort: e.opts.s3AdminPort, WebsitePort: e.opts.s3WebsitePort,
		RootAccessKey: access, RootSecretKey: secret,
	})
	if err != nil {
		return err
	}
	e.stops = append(e.stops, namedStop{"s3", gw.Stop})
	e.s3Endpoint, e.s3Region = gw.Endpoint, gw.Region
	e.backendArgs = []string{"--backend=versitygw", "--s3-endpoint=" + gw.Endpoint, "--s3-region=" + gw.Region,
		"--admin-endpoint=" + gw.AdminEndpoint, "--website-endpoint=" + gw.WebsiteEndpoint}
	e.backendEnv = []string{"CONTRACT_SERVER_ADMIN_ACCESS_KEY=" + access, "CONTRACT_SERVER_ADMIN_SECRET_KEY=" + secret}
	status("s3", "versitygw ready on %s (pid %d, log %s)", gw.Endpoint, gw.PID(), e.path("versitygw", "versitygw.log"))
	return nil
}

func (e *environment) startContractServer(ctx context.Context) error {
	tokenFile := e.path("contract-server", "token")
	if _, err := readOrCreate(tokenFile, func() string { return localenv.RandomHex(24) }); err != nil {
		return err
	}
	// The key that encrypts the stored secrets lives beside the data directory, not in it, as
	// it must in production: a copy of the records alone yields no secret.
	keyFile := e.path("contract-server-encryption.key")
	if _, err := readOrCreate(keyFile, func() string { return localenv.RandomHex(32) }); err != nil {
		return err
	}
	addr := hostPort(e.opts.contractAPIPort)
	// Topics push where the manager lets notifications go (manager.go): a developer's receivers
	// on this machine.
	args := append([]string{"--listen=" + addr, "--token-file=" + tokenFile, "--data-dir=" + e.path("contract-server"),
		"--encryption-key-file=" + keyFile, "--" + contractserver.PushEndpointsFlag + "=http://127.0.0.1:*"}, e.backendArgs...)
	p, err := e.start("contract-server", e.path("bin", "contract-server"), args, e.backendEnv)
	if err != nil {
		return err
	}
	e.contractAPI, e.contractToken = "http://"+addr, tokenFile
	if err := localenv.WaitHTTP(ctx, p, e.contractAPI+"/v1/contracts/none", 30*time.Second); err != nil {
		return err
	}
	status("contract-server", "ready on %s (pid %d)", e.contractAPI, p.PID())
	return nil
}
