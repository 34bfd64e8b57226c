// Package cosidriver is a COSI v1alpha1 driver over the contract API: the spec's Identity and
// Provisioner gRPC services, which COSI's provisioner sidecar calls over a unix socket.
//
// A BucketClass names the Contract whose account holds its buckets (parameters
// contractNamespace and contractName); the driver reads that Contract's status and account
// Secret, as a workload of the platform would, and creates, tags and deletes buckets with the
// account's keys. A BucketAccessClass names the access (parameter access: ReadOnly, ReadWrite or
// WriteOnly); a grant is a principal of the contract's account, made through the contract API,
// with the statements this project generates for that access in the bucket's policy.
//
// Every handler is idempotent, because the sidecar retries anything that failed, including
// what succeeded but whose answer was lost:
//   - DriverCreateBucket tags the bucket at creation (OwnerTag), so after a crash or a lost
//     answer the bucket that exists is known to be this request's, and the call answers as the
//     first did; a bucket of that name that is not the driver's is AlreadyExists.
//   - DriverGrantBucketAccess asks the contract API for a principal under an idempotency key
//     made of the bucket and the access name, so a retry gets the same principal and key pair.
//   - DriverDeleteBucket and DriverRevokeBucketAccess treat what is already gone as done.
//
// The identifiers COSI stores (bucket_id, account_id) carry what a later call needs, and the
// bucket's policy holds its grants. The one thing the driver records itself is each grant's
// intent, before its principal is made (records.go): COSI's sidecar v0.1.0 never asks for a
// revocation, so the driver revokes on its own the grants whose BucketAccess is gone
// (revoker.go). A COSI bucket's policy is the driver's alone, and the calls on one bucket are
// serialised in the process, so one driver serves a sidecar (the chart runs one replica; the
// sidecar elects a leader).
package cosidriver
