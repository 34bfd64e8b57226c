// Package rgw holds the AWS-faithful suite: the operator over a single-node Ceph RGW, for what
// versitygw does not do as AWS does (group grants by URI, authenticated-read, a bucket policy
// that leaves the owner's own access to the ACL).
package rgw
