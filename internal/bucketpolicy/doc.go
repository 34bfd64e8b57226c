// Package bucketpolicy composes and compares bucket policies: the spec's own document, the
// statements generated for BucketAccesses (one pair per access mode, each Sid starting with
// AccessStatementPrefix), and, on servers that judge a bucket's owner by the policy alone, the
// statement that keeps the owner in control (OwnerStatementID). Policies are compared in a
// canonical form, so formatting never causes a write.
package bucketpolicy
