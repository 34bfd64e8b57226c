// Package localenv starts the real servers that `make dev` (cmd/osm-dev) and the integration
// tests run against, and stops them again: a kube-apiserver and etcd, a versitygw S3 gateway,
// and (for the AWS-faithful suite) a single-node Ceph cluster with radosgw. The server binaries
// come from bin/, built by `make tools`; a caller that cannot find them gets that instruction as
// an error, a test never skips.
//
// Every server listens on 127.0.0.1 and is stopped by PID. The subpackages build on it: stack
// puts the whole chain together for tests, faults injects failures in front of the servers.
package localenv
