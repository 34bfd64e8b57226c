package objectstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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
	// Principal is the Principal element that names its principal on this server.
	Principal map[string]any
}

// accessModes is the order the modes' statements take in a policy.
var accessModes = []string{ReadOnly, ReadWrite, WriteOnly}

// AccessStatements returns the statements that give each grant its access to bucket and nothing
// else: per access mode, one statement for the bucket (when the mode has bucket actions) and one
// for its objects, each naming every principal granted that mode. Sharing statements by mode
// keeps the policy small, a grant adding its principal (tens of bytes) rather than two
// statements (about 450): policies are bounded, 20 KB on AWS and, on versitygw's posix backend,
// an extended attribute (3,735 bytes on ext4 here). A grant of an unknown mode, or with no
// principal, gets nothing.
func AccessStatements(grants []AccessGrant, resourcePrefix, bucket string) []any {
	var out []any
	for _, mode := range accessModes {
		principal := mergedPrincipal(grants, mode)
		if principal == nil {
			continue
		}
		actions := accessActions[mode]
		sid := AccessStatementPrefix + mode
		if len(actions.bucket) > 0 {
			out = append(out, statement(sid+"Bucket", principal, actions.bucket, resourcePrefix+bucket))
		}
		out = append(out, statement(sid+"Objects", principal, actions.objects, resourcePrefix+bucket+"/*"))
	}
	return out
}

// mergedPrincipal is one Principal element that names every principal granted mode: for each
// kind ("AWS"), its one value, or the sorted values; nil when none is granted mode.
func mergedPrincipal(grants []AccessGrant, mode string) map[string]any {
	values := map[string][]string{}
	for _, g := range grants {
		if g.Access != mode {
			continue
		}
		for kind, v := range g.Principal {
			values[kind] = append(values[kind], principalValues(v)...)
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

// principalValues are the names in one kind of a Principal element: a string or a list of them.
func principalValues(v any) []string {
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

// AccessCheck is what a key was found able to do, with that key itself.
type AccessCheck struct {
	// List: listing the bucket's objects was allowed.
	List bool
	// Read: reading an object was allowed (a missing object answered NoSuchKey, not
	// AccessDenied).
	Read bool
	// Write: writing an object was allowed (the deliberately broken upload was refused for
	// its checksum, not for access).
	Write bool
}

// CheckAccess finds out, with the store's own key and without changing anything, whether it
// may list bucket, read from it and write to it. The write check sends an upload whose
// Content-MD5 cannot match its body: a server checks access before the body, so an allowed
// write is refused as BadDigest and nothing is stored. An error is returned only when an answer
// says neither yes nor no.
func CheckAccess(ctx context.Context, st Store, bucket string) (AccessCheck, error) {
	s, ok := st.(*store)
	if !ok {
		return AccessCheck{}, errors.New("access checks need an S3 store")
	}
	var c AccessCheck
	var err error
	_, lerr := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(1)})
	if c.List, err = allowed("listing", lerr, ""); err != nil {
		return c, err
	}
	_, gerr := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(probeKey)})
	if c.Read, err = allowed("reading", gerr, "NoSuchKey"); err != nil {
		return c, err
	}
	wrongMD5 := base64.StdEncoding.EncodeToString(make([]byte, 16))
	_, perr := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(probeKey),
		Body: strings.NewReader("osm access check"), ContentMD5: aws.String(wrongMD5),
	})
	if perr == nil {
		// The server stored it after all: it ignores Content-MD5. Say so rather than leave a
		// stray object unmentioned.
		return c, fmt.Errorf("the S3 server accepted an upload with a wrong Content-MD5 (object %q was written)", probeKey)
	}
	if c.Write, err = allowed("writing", perr, "BadDigest", "InvalidDigest"); err != nil {
		return c, err
	}
	return c, nil
}

// probeKey is the object the checks name; it is never meant to exist.
const probeKey = ".osm-access-check"

// allowed reads a probe's answer: nil or one of the codes meaning "allowed, but ..." is yes,
// AccessDenied is no, anything else is an error.
func allowed(what string, err error, allowedCodes ...string) (bool, error) {
	if err == nil {
		return true, nil
	}
	code := ErrorCode(err)
	if code == "AccessDenied" || code == "Forbidden" {
		return false, nil
	}
	for _, c := range allowedCodes {
		if code == c {
			return true, nil
		}
	}
	return false, fmt.Errorf("checking %s: %s", what, Describe(err))
}

func toAnyList(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}
