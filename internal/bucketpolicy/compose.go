package bucketpolicy

// Form says how bucket policies on an endpoint name things.
type Form struct {
	// ResourcePrefix starts a Resource before the bucket name; "arn:aws:s3:::" when empty.
	ResourcePrefix string
	// Owner names the bucket's account in a Principal, for OwnerNeedsAllow.
	Owner map[string]string
	// OwnerNeedsAllow: the server judges a bucket's owner by its policy alone, as AWS and Ceph
	// do not, so every policy written gets a statement that allows the owner (OwnerStatementID).
	OwnerNeedsAllow bool
}

// Compose is the policy a bucket must have: the spec's (spec, "" for none), then the statements
// generated for the grants (AccessStatements), and, where the form asks, the owner's statement.
// "" is no policy. A spec policy that is no JSON object is returned as it is: the server refuses
// it with its own message, which says more than the operator could.
func Compose(spec, bucket string, grants []AccessGrant, form Form) string {
	prefix := form.ResourcePrefix
	if prefix == "" {
		prefix = "arn:aws:s3:::"
	}
	policy, err := WithStatements(spec, AccessStatements(grants, prefix, bucket))
	if err != nil {
		return spec
	}
	if !form.OwnerNeedsAllow {
		return policy
	}
	withOwner, err := WithOwnerStatement(policy, form.Owner, form.ResourcePrefix, bucket)
	if err != nil {
		return policy
	}
	return withOwner
}
