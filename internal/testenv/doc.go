// Package testenv starts the real servers the integration tests run against and stops them
// again: a kube-apiserver and etcd through envtest, a versitygw S3 gateway, and (for the
// AWS-faithful suite) a single-node Ceph cluster with radosgw. The server binaries come from
// bin/, built by `make tools`; a test that cannot find them fails with that instruction, it never
// skips.
//
// Every server listens on 127.0.0.1 and is stopped by PID.
package testenv
