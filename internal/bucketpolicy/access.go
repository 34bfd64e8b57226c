package bucketpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// AccessStatementPrefix starts the Sid of every statement the operator generates for a
// BucketAccess. The user's own statements never carry it (admission refuses it), so drift
// comparison can tell the two apart.
const AccessStatementPrefix = "OSMAccess"

// Access modes, as BucketAccess names them.
const (
	ReadOnly  = "ReadOnly"
	ReadWrite = "ReadWrite"
	WriteOnly = "WriteOnly"
)

// accessActions are the actions each mode allows on the bucket itself and on its objects.
// Nothing here changes the bucket (ACL, policy, configuration): that stays the account's.
var accessActions = map[string]struct{ bucket, objects []string }{
	ReadOnly: {
		bucket:  []string{"s3:ListBucket"},
		objects: []string{"s3:GetObject"},
	},
	ReadWrite: {
		bucket:  []string{"s3:ListBucket", "s3:ListBucketMultipartUploads"},
		objects: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"},
	},
	// A backup job's key: it adds objects and can give up an upload it started, but can never
	// read, list or delete what is there.
	WriteOnly: {
		objects: []string{"s3:PutObject", "s3:AbortMultipartUpload"},
	},
}

// AccessGrant is one BucketAccess's share of a bucket policy.
type AccessGrant struct {
	// Name is the BucketAccess's name.
	Name string
	// Access is ReadOnly, ReadWrite or WriteOnly.
	Access string
	// Prefix, when set, limits the grant to the objects whose names start with it.
	Prefix string
	// Principal is the Principal element that names its principal on this server.
	Principal map[string]any
}

// accessModes is the order the modes' statements take in a policy.
var accessModes = []string{ReadOnly, ReadWrite, WriteOnly}

// prefixedBucketActions are the bucket actions a grant limited to a prefix keeps: those the
// s3:prefix condition applies to. The others (listing multipart uploads) would show names
// outside the prefix, and servers refuse the condition on them (AWS, versitygw).
var prefixedBucketActions = []string{"s3:ListBucket"}

// AccessStatements returns the statements that give each grant its access to bucket and nothing
// else: per access mode and prefix, one statement for the bucket (when the mode has bucket
// actions) and one for its objects, each naming every principal granted that mode there.
// Sharing statements keeps the policy small, a grant adding its principal (tens of bytes)
// rather than two statements (about 450): policies are bounded, 20 KB on AWS and, on
// versitygw's posix backend, an extended attribute (3,735 bytes on ext4 here). A grant limited
// to a prefix gets its objects under the prefix, and may list only with a prefix under it (an
// s3:prefix condition), so a listing of the whole bucket is refused. A grant of an unknown
// mode, or with no principal, gets nothing.
func AccessStatements(grants []AccessGrant, resourcePrefix, bucket string) []any {
	var out []any
	for _, mode := range accessModes {
		for _, prefix := range grantPrefixes(grants, mode) {
			principal := mergedPrincipal(grants, mode, prefix)
			if principal == nil {
				continue
			}
			actions := accessActions[mode]
			sid := AccessStatementPrefix + mode + prefixSid(prefix)
			bucketActions := actions.bucket
			if prefix != "" && len(bucketActions) > 0 {
				bucketActions = prefixedBucketActions
			}
			if len(bucketActions) > 0 {
				stmt := statement(sid+"Bucket", principal, bucketActions, resourcePrefix+bucket)
				if prefix != "" {
					stmt["Condition"] = map[string]any{"StringLike": map[string]any{"s3:prefix": prefix + "*"}}
				}
				out = append(out, stmt)
			}
			out = append(out, statement(sid+"Objects", principal, actions.objects, resourcePrefix+bucket+"/"+prefix+"*"))
		}
	}
	if principal := mergedPrincipal(grants, WriteOnly, anyPrefix); principal != nil {
		deny := statement(AccessStatementPrefix+WriteOnly+"Deny", principal, writeOnlyDenied, resourcePrefix+bucket+"/*")
		deny["Effect"] = "Deny"
		out = append(out, deny)
	}
	return out
}

// writeOnlyDenied are what a WriteOnly key is refused outright, in the whole bucket. An Allow
// that is not there is not enough: Ceph RGW makes the uploader an object's owner, and the
// object's ACL grants its owner FULL_CONTROL, which RGW honours unless a policy denies it. So
// without this a leaked backup key reads, and re-grants, the backups it wrote.
var writeOnlyDenied = []string{"s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectAcl", "s3:PutObjectAcl"}

// grantPrefixes are the prefixes of the grants of mode, sorted, "" (the whole bucket) first.
func grantPrefixes(grants []AccessGrant, mode string) []string {
	var prefixes []string
	for _, g := range grants {
		if g.Access == mode && !slices.Contains(prefixes, g.Prefix) {
			prefixes = append(prefixes, g.Prefix)
		}
	}
	slices.Sort(prefixes)
	return prefixes
}

// prefixSid tells apart, in Sids (letters and digits only), the statements of one mode for
// different prefixes: "" for the whole bucket, else "Prefix" and a hash of it.
func prefixSid(prefix string) string {
	if prefix == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(prefix))
	return "Prefix" + hex.EncodeToString(sum[:6])
}

// anyPrefix, as mergedPrincipal's prefix, takes the grants of every prefix.
const anyPrefix = "*"

// mergedPrincipal is one Principal element that names every principal granted mode under
// prefix (anyPrefix: under any): for each kind ("AWS"), its one value, or the sorted values; nil
// when none is.
func mergedPrincipal(grants []AccessGrant, mode, prefix string) map[string]any {
	values := map[string][]string{}
	for _, g := range grants {
		if g.Access != mode || (g.Prefix != prefix && prefix != anyPrefix) {
			continue
		}
		for kind, v := range g.Principal {
			values[kind] = append(values[kind], stringList(v)...)
		}
	}
	principal := make(map[string]any, len(values))
	for kind, vs := range values {
		if len(vs) == 0 {
			continue
		}
		slices.Sort(vs)
		vs = slices.Compact(vs)
		if len(vs) == 1 {
			principal[kind] = vs[0]
			continue
		}
		principal[kind] = toAnyList(vs)
	}
	if len(principal) == 0 {
		return nil
	}
	return principal
}

// stringList is an element IAM accepts as a string or a list of strings (a kind of Principal, a
// condition value), as a list.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []string:
		return v
	case []any:
		var out []string
		for _, one := range v {
			if s, ok := one.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func statement(sid string, principal map[string]any, actions []string, resource string) map[string]any {
	return map[string]any{
		"Sid":       sid,
		"Effect":    "Allow",
		"Principal": principal,
		"Action":    toAnyList(actions),
		"Resource":  resource,
	}
}

// WithStatements returns policy with stmts appended to its Statement list; an empty policy
// becomes a new one that holds only them. No stmts leaves policy as it is.
func WithStatements(policy string, stmts []any) (string, error) {
	if len(stmts) == 0 {
		return policy, nil
	}
	doc := map[string]any{"Version": "2012-10-17"}
	if policy != "" {
		if err := json.Unmarshal([]byte(policy), &doc); err != nil || doc == nil {
			return "", fmt.Errorf("parsing policy: want a JSON object")
		}
	}
	var all []any
	if v, ok := doc["Statement"]; ok && v != nil {
		all = asList(v)
	}
	doc["Statement"] = append(all, stmts...)
	out, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encoding policy: %w", err)
	}
	return string(out), nil
}

// GeneratedStatements returns, in canonical form, the statements of policy whose Sid starts
// with AccessStatementPrefix; "" when there are none or policy is not a JSON object.
func GeneratedStatements(policy string) string {
	var doc map[string]any
	if policy == "" || json.Unmarshal([]byte(policy), &doc) != nil {
		return ""
	}
	var kept []any
	for _, s := range asList(doc["Statement"]) {
		m, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if sid, _ := m["Sid"].(string); strings.HasPrefix(sid, AccessStatementPrefix) {
			kept = append(kept, m)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	out, err := CanonicalPolicy([]byte(`{"Statement":` + mustJSON(kept) + `}`))
	if err != nil {
		return ""
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func toAnyList(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}

// IdentityStatements are the statements of a role's own policy that give it access to bucket
// under prefix: AccessStatements' actions and resources for one grant, without a Principal
// (an identity policy names no one: it is its holder's) and without a Sid, so that grants in
// several buckets share one policy. An unknown mode gets nothing.
func IdentityStatements(access, prefix, resourcePrefix, bucket string) []any {
	self := map[string]any{"AWS": "self"}
	stmts := AccessStatements([]AccessGrant{{Access: access, Prefix: prefix, Principal: self}}, resourcePrefix, bucket)
	for _, s := range stmts {
		delete(s.(map[string]any), "Principal")
		delete(s.(map[string]any), "Sid")
	}
	return stmts
}
